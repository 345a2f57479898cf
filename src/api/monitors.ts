import { Type } from "@sinclair/typebox";
import { MONITOR_STATES, MONITOR_TYPES } from "../domain/monitor.ts";
import { monitorCreateSchema, monitorResponseSchema, MonitorUpdateAttributesSchema } from "../domain/monitor-schema.ts";
import { enumOf } from "../domain/schema-parts.ts";
import { isTag, MAX_TAGS, TAG_MAX_LENGTH, TAG_PATTERN, TAG_RULE } from "../domain/tags.ts";
import { pathId } from "../http/path-id.ts";
import { createMonitor, deleteMonitor, getMonitor, listMonitors, rotateHeartbeatToken, updateMonitor } from "../services/monitors.ts";
import { resourceRoutes } from "./resource-routes.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { component, ExternalIdQuery, oneOf, PageQuery, schemaName, singleResponse } from "./schemas.ts";

/** A monitor as responses show it: one schema per type, told apart by monitor_type. */
const Monitor = component("Monitor", oneOf(MONITOR_TYPES.map((t) => component(`${schemaName(t)}Monitor`, monitorResponseSchema(t))), "one schema per monitor_type"));

/** The list's status filter: an aggregate state (a paused monitor keeps its last one), or paused. */
const STATUS_FILTERS = [...MONITOR_STATES, "paused"] as const;

export const MonitorListQuery = Type.Object({
  ...PageQuery,
  ...ExternalIdQuery,
  status: enumOf(STATUS_FILTERS, { description: "only monitors in this aggregate state (paused monitors keep their last one), or only paused monitors" }),
  type: enumOf(MONITOR_TYPES, { description: "only monitors of this type" }),
  q: Type.String({ maxLength: 200, description: "case-insensitive substring of the name or the target" }),
  group_id: Type.Integer({ minimum: 1, description: "extension: only monitors of this group" }),
  tag: Type.Array(Type.String({ minLength: 1, maxLength: TAG_MAX_LENGTH, pattern: TAG_PATTERN }), {
    maxItems: MAX_TAGS,
    description: "extension, repeatable (`?tag=a&tag=b`): only monitors holding every tag given",
  }),
});

const tagProblem = (v: string) => (isTag(v) ? null : `must be a tag: ${TAG_RULE}`);

const monitors = resourceRoutes({
  path: "/api/v1/monitors",
  noun: "monitor",
  type: "monitor",
  tag: "Monitors",
  scopes: { read: "monitors:read", write: "monitors:write" },
  attributes: Monitor,
  createAttributes: oneOf(MONITOR_TYPES.map((t) => monitorCreateSchema(t)), "one schema per monitor_type: the attributes of that type"),
  updateAttributes: MonitorUpdateAttributesSchema,
  listQuery: MonitorListQuery,
  filters(q) {
    const status = q.oneOf("status", STATUS_FILTERS);
    const state = status === "paused" ? { paused: true } : { status };
    return { ...state, type: q.oneOf("type", MONITOR_TYPES), q: q.string("q"), groupId: q.positiveInt("group_id"), externalId: q.string("external_id"), tags: q.repeated("tag", MAX_TAGS, tagProblem) };
  },
  summaries: {
    list: "List monitors (id ascending)",
    create: "Create a monitor",
    get: "Get a monitor",
    update: "Update a monitor (only the attributes sent change)",
    remove: "Delete a monitor with its checks, incidents and events",
  },
  examples: {
    create: { name: "API health", monitor_type: "http", target: "https://api.example.com/health", interval_sec: 60, timeout_ms: 5000, expected_http_codes: "200-299" },
    update: { is_paused: true },
  },
  list: (ctx, actor, window, filters) => listMonitors(ctx, actor, filters, window),
  create: createMonitor,
  get: getMonitor,
  update: updateMonitor,
  remove: deleteMonitor,
});

export const monitorRoutes: RouteDef[] = [
  ...monitors.routes,
  {
    method: "POST",
    path: "/api/v1/monitors/:id/heartbeat-token/rotate",
    scope: "monitors:write",
    summary: "Rotate a heartbeat monitor's ping token (the old one answers 404 at once; history is kept)",
    tag: "Monitors",
    response: singleResponse("monitor", Monitor),
    async handler(req, ctx) {
      return monitors.one(await rotateHeartbeatToken(ctx, actorOf(req), pathId(req.params, "heartbeat monitor")));
    },
  },
];
