import { Type } from "@sinclair/typebox";
import { windowAttributesSchema, windowCreateSchema } from "../domain/maintenance-window-schema.ts";
import { pathId } from "../http/path-id.ts";
import {
  createMaintenanceWindow,
  deleteMaintenanceWindow,
  getMaintenanceWindow,
  listMaintenanceWindows,
  updateMaintenanceWindow,
  type WindowItem,
} from "../services/maintenance-windows.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { deletedResponse, ExternalIdQuery, listResponse, PageQuery, singleResponse, writeBody } from "./schemas.ts";

/** Same envelopes, validation and tenancy as monitors (README "Maintenance windows"). */
const BASE = "/api/v1/maintenance-windows";
const TAG = "Maintenance windows";
const TYPE = "maintenance_window";
const Attributes = windowAttributesSchema(false);
const CreateBody = writeBody(TYPE, windowCreateSchema());
const UpdateBody = writeBody(TYPE, windowAttributesSchema(true));

const one = (w: WindowItem, status?: number) => single(TYPE, w.id, w.attributes, status);
const windowId = (params: Record<string, string>) => pathId(params, "maintenance window");

export const maintenanceWindowRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "monitors:read",
    summary: "List maintenance windows (id ascending)",
    tag: TAG,
    query: Type.Object({ ...PageQuery, ...ExternalIdQuery }),
    response: listResponse(TYPE, Attributes),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const externalId = q.string("external_id");
      q.done();
      const { items, total } = await listMaintenanceWindows(ctx, actorOf(req), { limit: perPage, offset }, { externalId });
      return list(items.map((w) => resource(TYPE, w.id, w.attributes)), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "monitors:write",
    summary: "Create a maintenance window: one-off (starts_at, ends_at) or recurring (schedule, duration_sec)",
    tag: TAG,
    body: CreateBody,
    response: singleResponse(TYPE, Attributes),
    successStatus: 201,
    example: { name: "Database upgrade", monitor_ids: [1, 2], starts_at: "2026-12-01T02:00:00Z", ends_at: "2026-12-01T03:30:00Z" },
    async handler(req, ctx) {
      return one(await createMaintenanceWindow(ctx, actorOf(req), req.body), 201);
    },
  },
  {
    method: "GET",
    path: `${BASE}/:id`,
    scope: "monitors:read",
    summary: "Get a maintenance window",
    tag: TAG,
    response: singleResponse(TYPE, Attributes),
    async handler(req, ctx) {
      return one(await getMaintenanceWindow(ctx, actorOf(req), windowId(req.params)));
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Update a maintenance window (only the attributes sent change)",
    tag: TAG,
    body: UpdateBody,
    response: singleResponse(TYPE, Attributes),
    example: { is_enabled: false },
    async handler(req, ctx) {
      return one(await updateMaintenanceWindow(ctx, actorOf(req), windowId(req.params), req.body));
    },
  },
  {
    method: "DELETE",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Delete a maintenance window (its monitors leave its maintenance at once)",
    tag: TAG,
    response: deletedResponse(TYPE),
    async handler(req, ctx) {
      const id = windowId(req.params);
      await deleteMaintenanceWindow(ctx, actorOf(req), id);
      return single(TYPE, id, { deleted: true });
    },
  },
];
