import { Type } from "@sinclair/typebox";
import { UPDATE_REQUIRED, UpdateAttributesSchema, UpdateWriteAttributesSchema } from "../domain/status-page-update-schema.ts";
import { pathId } from "../http/path-id.ts";
import { createUpdate, deleteUpdate, getUpdate, listUpdates, updateUpdate, type UpdateItem } from "../services/status-page-updates.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { deletedResponse, listResponse, PageQuery, requiring, singleResponse, writeBody } from "./schemas.ts";

/** Updates written by people on a status page (README "Groups, tags and status page updates"). */
const BASE = "/api/v1/status-pages/:id/updates";
const TAG = "Status pages";
const TYPE = "status_page_update";
const CreateBody = writeBody(TYPE, requiring(UpdateWriteAttributesSchema, UPDATE_REQUIRED));
const UpdateBody = writeBody(TYPE, UpdateWriteAttributesSchema);

const one = (u: UpdateItem, status?: number) => single(TYPE, u.id, u.attributes, status);
const pageId = (params: Record<string, string>) => pathId(params, "status page");
const updateId = (params: Record<string, string>) => pathId(params, "status page update", "updateId");

export const statusPageUpdateRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "status_pages:read",
    summary: "List a status page's updates (newest published first)",
    tag: TAG,
    query: Type.Object(PageQuery),
    response: listResponse(TYPE, UpdateAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      q.done();
      const { items, total } = await listUpdates(ctx, actorOf(req), pageId(req.params), { limit: perPage, offset });
      return list(items.map((u) => resource(TYPE, u.id, u.attributes)), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "status_pages:write",
    summary: "Write an update on a status page",
    tag: TAG,
    body: CreateBody,
    response: singleResponse(TYPE, UpdateAttributesSchema),
    successStatus: 201,
    example: { title: "Slow logins", kind: "incident", status: "investigating", body: "Logins take up to a minute.\nWe are looking into it.", affected_monitor_ids: [1] },
    async handler(req, ctx) {
      return one(await createUpdate(ctx, actorOf(req), pageId(req.params), req.body), 201);
    },
  },
  {
    method: "GET",
    path: `${BASE}/:updateId`,
    scope: "status_pages:read",
    summary: "Get a status page update",
    tag: TAG,
    response: singleResponse(TYPE, UpdateAttributesSchema),
    async handler(req, ctx) {
      return one(await getUpdate(ctx, actorOf(req), pageId(req.params), updateId(req.params)));
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:updateId`,
    scope: "status_pages:write",
    summary: "Change a status page update (only the attributes sent change)",
    tag: TAG,
    body: UpdateBody,
    response: singleResponse(TYPE, UpdateAttributesSchema),
    example: { status: "resolved", body: "Fixed: a full disk on the database server." },
    async handler(req, ctx) {
      return one(await updateUpdate(ctx, actorOf(req), pageId(req.params), updateId(req.params), req.body));
    },
  },
  {
    method: "DELETE",
    path: `${BASE}/:updateId`,
    scope: "status_pages:write",
    summary: "Delete a status page update",
    tag: TAG,
    response: deletedResponse(TYPE),
    async handler(req, ctx) {
      const pid = pageId(req.params);
      const id = updateId(req.params);
      await deleteUpdate(ctx, actorOf(req), pid, id);
      return single(TYPE, id, { deleted: true });
    },
  },
];
