import { Type } from "@sinclair/typebox";
import { GROUP_REQUIRED, GroupAttributesSchema, GroupWriteAttributesSchema } from "../domain/group-schema.ts";
import { pathId } from "../http/path-id.ts";
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup, type GroupItem } from "../services/groups.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { deletedResponse, ExternalIdQuery, listResponse, PageQuery, requiring, singleResponse, writeBody } from "./schemas.ts";

/** Groups of monitors: the envelopes, validation and tenancy of monitors (README "Groups, tags and status page updates"). */
const BASE = "/api/v1/groups";
const TAG = "Groups";
const TYPE = "group";
const CreateBody = writeBody(TYPE, requiring(GroupWriteAttributesSchema, GROUP_REQUIRED));
const UpdateBody = writeBody(TYPE, GroupWriteAttributesSchema);

const one = (g: GroupItem, status?: number) => single(TYPE, g.id, g.attributes, status);
const groupId = (params: Record<string, string>) => pathId(params, "group");

export const groupRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "monitors:read",
    summary: "List groups (by sort_order, then name)",
    tag: TAG,
    query: Type.Object({ ...PageQuery, ...ExternalIdQuery }),
    response: listResponse(TYPE, GroupAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const externalId = q.string("external_id");
      q.done();
      const { items, total } = await listGroups(ctx, actorOf(req), { limit: perPage, offset }, { externalId });
      return list(items.map((g) => resource(TYPE, g.id, g.attributes)), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "monitors:write",
    summary: "Create a group",
    tag: TAG,
    body: CreateBody,
    response: singleResponse(TYPE, GroupAttributesSchema),
    successStatus: 201,
    example: { name: "Production", description: "What customers use", sort_order: 10 },
    async handler(req, ctx) {
      return one(await createGroup(ctx, actorOf(req), req.body), 201);
    },
  },
  {
    method: "GET",
    path: `${BASE}/:id`,
    scope: "monitors:read",
    summary: "Get a group",
    tag: TAG,
    response: singleResponse(TYPE, GroupAttributesSchema),
    async handler(req, ctx) {
      return one(await getGroup(ctx, actorOf(req), groupId(req.params)));
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Update a group (only the attributes sent change)",
    tag: TAG,
    body: UpdateBody,
    response: singleResponse(TYPE, GroupAttributesSchema),
    example: { sort_order: 20 },
    async handler(req, ctx) {
      return one(await updateGroup(ctx, actorOf(req), groupId(req.params), req.body));
    },
  },
  {
    method: "DELETE",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Delete a group; its monitors stay, with group_id null",
    tag: TAG,
    response: deletedResponse(TYPE),
    async handler(req, ctx) {
      const id = groupId(req.params);
      await deleteGroup(ctx, actorOf(req), id);
      return single(TYPE, id, { deleted: true });
    },
  },
];
