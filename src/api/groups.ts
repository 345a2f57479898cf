import { GROUP_REQUIRED, GroupAttributesSchema, GroupWriteAttributesSchema } from "../domain/group-schema.ts";
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup } from "../services/groups.ts";
import { BY_EXTERNAL_ID, resourceRoutes } from "./resource-routes.ts";
import type { RouteDef } from "./route.ts";
import { requiring } from "./schemas.ts";

/** Groups of monitors: the envelopes, validation and tenancy of monitors (README "Groups, tags and status page updates"). */
export const groupRoutes: RouteDef[] = resourceRoutes({
  path: "/api/v1/groups",
  noun: "group",
  type: "group",
  tag: "Groups",
  scopes: { read: "monitors:read", write: "monitors:write" },
  attributes: GroupAttributesSchema,
  createAttributes: requiring(GroupWriteAttributesSchema, GROUP_REQUIRED),
  updateAttributes: GroupWriteAttributesSchema,
  ...BY_EXTERNAL_ID,
  summaries: {
    list: "List groups (by sort_order, then name)",
    create: "Create a group",
    get: "Get a group",
    update: "Update a group (only the attributes sent change)",
    remove: "Delete a group; its monitors stay, with group_id null",
  },
  examples: { create: { name: "Production", description: "What customers use", sort_order: 10 }, update: { sort_order: 20 } },
  list: listGroups,
  create: createGroup,
  get: getGroup,
  update: updateGroup,
  remove: deleteGroup,
}).routes;
