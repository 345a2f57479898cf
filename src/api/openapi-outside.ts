import { Type } from "@sinclair/typebox";
import { headers, RATE_LIMIT_HEADERS, responsesOf } from "./openapi-responses.ts";
import { enumOf } from "../domain/schema-parts.ts";

/**
 * The endpoints outside /api/v1 that a client of the API calls: the heartbeat ping URL (README
 * "Heartbeat monitors"), and /healthz, /readyz and /metrics for whoever runs the instance. The
 * dashboard, status pages and the /peer/v1 protocol between instances are not part of the API.
 */

const PingAnswerSchema = Type.Object({
  result: enumOf(["accepted", "rejected", "ignored"], { description: "accepted; rejected by the payload policy (recorded, the state does not advance); ignored while the monitor is paused" }),
  reason: Type.Optional(Type.String({ description: "why a ping was rejected" })),
});

const ReadinessSchema = Type.Object({
  status: enumOf(["ready", "not_ready"]),
  problems: Type.Array(Type.String(), { description: "what is not ready; empty when ready" }),
  cluster: Type.Object(
    {
      instance: Type.String({ description: "this process's id among the instances sharing the database (new at each start; `solo` on SQLite)" }),
      region: Type.String(),
      leader: Type.Boolean({ description: "true while this instance delivers alerts, judges heartbeat deadlines and runs maintenance" }),
      leader_instance: Type.Union([Type.String(), Type.Null()], { description: "the instance that leads, as last read" }),
      region_instances: Type.Array(Type.String(), { description: "the live instances sharing this region's checks" }),
      monitors: Type.Integer({ description: "monitors this instance checks: its share of its region's" }),
    },
    { description: "where this instance stands among the instances sharing the database (README \"Several instances\")" },
  ),
});

const json = (schema: unknown) => ({ "application/json": { schema } });

function ping(summary: string, method: "get" | "post"): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: `${method}${summary.startsWith("Ping") ? "HeartbeatPing" : "HeartbeatSignal"}`,
    summary: `${summary} (${method.toUpperCase()})`,
    tags: ["Heartbeat"],
    security: [],
    responses: responsesOf(
      { 200: { description: "recorded (or ignored while paused)", headers: headers(["X-Request-Id"]), content: json(PingAnswerSchema) } },
      ["PingNotFound", "PingMethodNotAllowed", "PingRateLimited", "PingInternalError", "PingStorageUnavailable", "PingInsufficientStorage", ...(method === "post" ? (["PingPayloadTooLarge"] as const) : [])],
    ),
  };
  if (method === "post") {
    op.requestBody = {
      required: false,
      description: "Under the payload policy status_ok, a JSON object whose status key equals \"ok\"; on /fail, the first line is the reason.",
      content: { "application/json": { schema: { type: "object" } }, "text/plain": { schema: { type: "string" } } },
    };
  }
  return op;
}

const TOKEN = { name: "token", in: "path", required: true, description: "the monitor's heartbeat_token", schema: { type: "string", pattern: "^[A-Za-z0-9_-]{8,128}$" } };
const ACTION = {
  name: "action",
  in: "path",
  required: true,
  description: "start: the job started; fail: it failed (the monitor goes down at once); an exit code 0-255: 0 is a ping, anything else a failure",
  schema: { type: "string", pattern: "^(start|fail|[0-9]{1,3})$" },
};

export function outsidePaths(opts: { heartbeatUrl: string; metricsPublic: boolean }): Record<string, unknown> {
  const servers = [{ url: opts.heartbeatUrl, description: "the heartbeat URL (--heartbeat-url)" }];
  const metricsBody = { "text/plain": { schema: { type: "string", description: "Prometheus text exposition format" } } };
  const metrics = opts.metricsPublic
    ? { security: [], responses: { 200: { description: "the metrics (--metrics-public: no token needed), the per-monitor series of every account", content: metricsBody } } }
    : {
        description: "Requires scope `metrics:read` (or start the instance with --metrics-public). The token is admitted as on /api/v1 (plan rule, the plan's rate limit), but scrapes count in a window of their own, apart from the account's API requests. The per-monitor series (vigil_monitor_*) are the token's account's monitors, each identified by its id; vigil_monitor_info carries their names.",
        responses: responsesOf(
          { 200: { description: "the metrics", headers: headers(["X-Request-Id", ...RATE_LIMIT_HEADERS]), content: metricsBody } },
          ["Unauthorized", "Forbidden", "RateLimited", "InternalError", "StorageUnavailable"],
        ),
      };
  return {
    "/h/{token}": { servers, parameters: [TOKEN], get: ping("Ping: the job succeeded", "get"), post: ping("Ping: the job succeeded", "post") },
    "/h/{token}/{action}": { servers, parameters: [TOKEN, ACTION], get: ping("Signal a start, a failure or an exit code", "get"), post: ping("Signal a start, a failure or an exit code", "post") },
    "/healthz": {
      get: { operationId: "getHealthz", summary: "Liveness: the process answers", tags: ["Operations"], security: [], responses: { 200: { description: "alive", content: json(Type.Object({ status: Type.Literal("ok") })) } } },
    },
    "/readyz": {
      get: {
        operationId: "getReadyz",
        summary: "Readiness: the store takes a write and every service is ready",
        tags: ["Operations"],
        security: [],
        responses: { 200: { description: "ready", content: json(ReadinessSchema) }, 503: { description: "not ready; `problems` says why", content: json(ReadinessSchema) } },
      },
    },
    "/metrics": { get: { operationId: "getMetrics", summary: "Prometheus metrics", tags: ["Operations"], ...metrics } },
  };
}
