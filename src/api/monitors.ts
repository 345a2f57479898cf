import { Type } from "@sinclair/typebox";
import { MONITOR_STATES, MONITOR_TYPES } from "../domain/monitor.ts";
import { monitorCreateSchema, monitorResponseSchema, MonitorUpdateAttributesSchema } from "../domain/monitor-schema.ts";
import { enumOf } from "../domain/schema-parts.ts";
import { isTag, MAX_TAGS, TAG_MAX_LENGTH, TAG_PATTERN, TAG_RULE } from "../domain/tags.ts";
import { pathId } from "../http/path-id.ts";
import { createMonitor, deleteMonitor, getMonitor, listMonitors, rotateHeartbeatToken, updateMonitor, type MonitorItem } from "../services/monitors.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { component, deletedResponse, ExternalIdQuery, listResponse, oneOf, PageQuery, schemaName, singleResponse, writeBody } from "./schemas.ts";

const BASE = "/api/v1/monitors";
const TAG = "Monitors";

/** A monitor as responses show it: one schema per type, told apart by monitor_type. */
const Monitor = component("Monitor", oneOf(MONITOR_TYPES.map((t) => component(`${schemaName(t)}Monitor`, monitorResponseSchema(t))), "one schema per monitor_type"));
const CreateBody = writeBody("monitor", oneOf(MONITOR_TYPES.map((t) => monitorCreateSchema(t)), "one schema per monitor_type: the attributes of that type"));
const UpdateBody = writeBody("monitor", MonitorUpdateAttributesSchema);

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

const one = (m: MonitorItem, status?: number) => single("monitor", m.id, m.attributes, status);

export const monitorRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "monitors:read",
    summary: "List monitors (id ascending)",
    tag: TAG,
    query: MonitorListQuery,
    response: listResponse("monitor", Monitor),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const status = q.oneOf("status", STATUS_FILTERS);
      const state = status === "paused" ? { paused: true } : { status };
      const filter = { ...state, type: q.oneOf("type", MONITOR_TYPES), q: q.string("q"), groupId: q.positiveInt("group_id"), externalId: q.string("external_id"), tags: q.repeated("tag", MAX_TAGS, tagProblem) };
      q.done();
      const { items, total } = await listMonitors(ctx, actorOf(req), filter, { limit: perPage, offset });
      return list(items.map((m) => resource("monitor", m.id, m.attributes)), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "monitors:write",
    summary: "Create a monitor",
    tag: TAG,
    body: CreateBody,
    response: singleResponse("monitor", Monitor),
    successStatus: 201,
    example: { name: "API health", monitor_type: "http", target: "https://api.example.com/health", interval_sec: 60, timeout_ms: 5000, expected_http_codes: "200-299" },
    async handler(req, ctx) {
      return one(await createMonitor(ctx, actorOf(req), req.body), 201);
    },
  },
  {
    method: "GET",
    path: `${BASE}/:id`,
    scope: "monitors:read",
    summary: "Get a monitor",
    tag: TAG,
    response: singleResponse("monitor", Monitor),
    async handler(req, ctx) {
      return one(await getMonitor(ctx, actorOf(req), pathId(req.params, "monitor")));
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Update a monitor (only the attributes sent change)",
    tag: TAG,
    body: UpdateBody,
    response: singleResponse("monitor", Monitor),
    example: { is_paused: true },
    async handler(req, ctx) {
      return one(await updateMonitor(ctx, actorOf(req), pathId(req.params, "monitor"), req.body));
    },
  },
  {
    method: "DELETE",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Delete a monitor with its checks, incidents and events",
    tag: TAG,
    response: deletedResponse("monitor"),
    async handler(req, ctx) {
      const id = pathId(req.params, "monitor");
      await deleteMonitor(ctx, actorOf(req), id);
      return single("monitor", id, { deleted: true });
    },
  },
  {
    method: "POST",
    path: `${BASE}/:id/heartbeat-token/rotate`,
    scope: "monitors:write",
    summary: "Rotate a heartbeat monitor's ping token (the old one answers 404 at once; history is kept)",
    tag: TAG,
    response: singleResponse("monitor", Monitor),
    async handler(req, ctx) {
      return one(await rotateHeartbeatToken(ctx, actorOf(req), pathId(req.params, "heartbeat monitor")));
    },
  },
];
