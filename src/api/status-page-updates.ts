import { Type } from "@sinclair/typebox";
import { UPDATE_REQUIRED, UpdateAttributesSchema, UpdateWriteAttributesSchema } from "../domain/status-page-update-schema.ts";
import { pathId } from "../http/path-id.ts";
import { createUpdate, deleteUpdate, getUpdate, listUpdates, updateUpdate } from "../services/status-page-updates.ts";
import { resourceRoutes } from "./resource-routes.ts";
import type { RouteDef } from "./route.ts";
import { PageQuery, requiring } from "./schemas.ts";

/** Updates written by people on a status page (README "Groups, tags and status page updates"), under the page's path. */
export const statusPageUpdateRoutes: RouteDef[] = resourceRoutes({
  path: "/api/v1/status-pages/:id/updates",
  idParam: "updateId",
  noun: "status page update",
  parent: (params) => pathId(params, "status page"),
  type: "status_page_update",
  tag: "Status pages",
  scopes: { read: "status_pages:read", write: "status_pages:write" },
  attributes: UpdateAttributesSchema,
  createAttributes: requiring(UpdateWriteAttributesSchema, UPDATE_REQUIRED),
  updateAttributes: UpdateWriteAttributesSchema,
  listQuery: Type.Object(PageQuery),
  filters: () => undefined,
  summaries: {
    list: "List a status page's updates (newest published first)",
    create: "Write an update on a status page",
    get: "Get a status page update",
    update: "Change a status page update (only the attributes sent change)",
    remove: "Delete a status page update",
  },
  examples: {
    create: { title: "Slow logins", kind: "incident", status: "investigating", body: "Logins take up to a minute.\nWe are looking into it.", affected_monitor_ids: [1] },
    update: { status: "resolved", body: "Fixed: a full disk on the database server." },
  },
  list: (ctx, actor, window, _filters, pageId) => listUpdates(ctx, actor, pageId, window),
  create: (ctx, actor, input, pageId) => createUpdate(ctx, actor, pageId, input),
  get: (ctx, actor, id, pageId) => getUpdate(ctx, actor, pageId, id),
  update: (ctx, actor, id, input, pageId) => updateUpdate(ctx, actor, pageId, id, input),
  remove: (ctx, actor, id, pageId) => deleteUpdate(ctx, actor, pageId, id),
}).routes;
