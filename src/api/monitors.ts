import { Type } from "@sinclair/typebox";
import { MONITOR_STATES, MONITOR_TYPES } from "../domain/monitor.ts";
import { MonitorAttributesSchema, MonitorWriteBodySchema } from "../domain/monitor-schema.ts";
import { enumOf } from "../domain/schema-parts.ts";
import { isTag, MAX_TAGS, TAG_MAX_LENGTH, TAG_PATTERN, TAG_RULE } from "../domain/tags.ts";
import { pathId } from "../http/path-id.ts";
import { createMonitor, deleteMonitor, getMonitor, listMonitors, rotateHeartbeatToken, updateMonitor, type MonitorItem } from "../services/monitors.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { deletedResponse, ExternalIdQuery, listResponse, PageQuery, singleResponse } from "./schemas.ts";

const BASE = "/api/v1/monitors";
const TAG = "Monitors";

export const MonitorListQuery = Type.Object({
  ...PageQuery,
  ...ExternalIdQuery,
  status: enumOf(MONITOR_STATES, { description: "only monitors in this aggregate state" }),
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
    response: listResponse("monitor", MonitorAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const filter = { status: q.oneOf("status", MONITOR_STATES), type: q.oneOf("type", MONITOR_TYPES), q: q.string("q"), groupId: q.positiveInt("group_id"), externalId: q.string("external_id"), tags: q.repeated("tag", MAX_TAGS, tagProblem) };
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
    body: MonitorWriteBodySchema,
    response: singleResponse("monitor", MonitorAttributesSchema),
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
    response: singleResponse("monitor", MonitorAttributesSchema),
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
    body: MonitorWriteBodySchema,
    response: singleResponse("monitor", MonitorAttributesSchema),
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
    response: singleResponse("monitor", MonitorAttributesSchema),
    async handler(req, ctx) {
      return one(await rotateHeartbeatToken(ctx, actorOf(req), pathId(req.params, "heartbeat monitor")));
    },
  },
];
