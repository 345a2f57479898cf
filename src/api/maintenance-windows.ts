import { windowAttributesSchema, windowCreateSchema } from "../domain/maintenance-window-schema.ts";
import { createMaintenanceWindow, deleteMaintenanceWindow, getMaintenanceWindow, listMaintenanceWindows, updateMaintenanceWindow } from "../services/maintenance-windows.ts";
import { BY_EXTERNAL_ID, resourceRoutes } from "./resource-routes.ts";
import type { RouteDef } from "./route.ts";

/** Same envelopes, validation and tenancy as monitors (README "Maintenance windows"). */
export const maintenanceWindowRoutes: RouteDef[] = resourceRoutes({
  path: "/api/v1/maintenance-windows",
  noun: "maintenance window",
  type: "maintenance_window",
  tag: "Maintenance windows",
  scopes: { read: "monitors:read", write: "monitors:write" },
  attributes: windowAttributesSchema(false),
  createAttributes: windowCreateSchema(),
  updateAttributes: windowAttributesSchema(true),
  ...BY_EXTERNAL_ID,
  summaries: {
    list: "List maintenance windows (id ascending)",
    create: "Create a maintenance window: one-off (starts_at, ends_at) or recurring (schedule, duration_sec)",
    get: "Get a maintenance window",
    update: "Update a maintenance window (only the attributes sent change)",
    remove: "Delete a maintenance window (its monitors leave its maintenance at once)",
  },
  examples: {
    create: { name: "Database upgrade", monitor_ids: [1, 2], starts_at: "2026-12-01T02:00:00Z", ends_at: "2026-12-01T03:30:00Z" },
    update: { is_enabled: false },
  },
  list: listMaintenanceWindows,
  create: createMaintenanceWindow,
  get: getMaintenanceWindow,
  update: updateMaintenanceWindow,
  remove: deleteMaintenanceWindow,
}).routes;
