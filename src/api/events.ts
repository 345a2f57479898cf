import { Type } from "@sinclair/typebox";
import { toIso } from "../lib/dates.ts";
import { listMonitorEvents } from "../store/event-queries.ts";
import { findMonitor } from "../store/monitors.ts";
import type { MonitorEventRow } from "../store/tables.ts";
import { list, resource } from "./envelope.ts";
import { notFound } from "../http/errors.ts";
import { pathId } from "./json-api.ts";
import { QueryReader } from "./query.ts";
import type { RouteDef } from "./route.ts";
import { enumOf, listResponse, PageQuery } from "./schemas.ts";

export const EVENT_KINDS = ["ping", "start", "fail", "transition", "token_rotated"] as const;
const PING_KINDS = new Set(["ping", "start", "fail"]);

const strOrNull = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

/** Timeline item (decisions.md "Heartbeat ping endpoint" extensions); fields present depend on `kind`. */
export const EventAttributesSchema = Type.Object({
  monitor_id: Type.Integer(),
  kind: enumOf(EVENT_KINDS, { description: "ping (and the heartbeat's start/fail signals), transition, token_rotated" }),
  at: Type.String({ format: "date-time" }),
  received_at: Type.Optional(Type.String({ format: "date-time", description: "pings: when it arrived" })),
  result: Type.Optional(strOrNull("pings: accepted, rejected or ignored")),
  reason: Type.Optional(strOrNull("pings: why it was rejected; transitions: what caused it")),
  source_ip: Type.Optional(strOrNull("pings: the sender's address")),
  duration_ms: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "pings after a start signal: the run's duration" })),
  from: Type.Optional(Type.String({ description: "transitions: previous state" })),
  to: Type.Optional(Type.String({ description: "transitions: new state" })),
});

export function eventAttributes(e: MonitorEventRow): Record<string, unknown> {
  const out: Record<string, unknown> = { monitor_id: e.monitor_id, kind: e.kind, at: toIso(e.at) };
  if (PING_KINDS.has(e.kind)) Object.assign(out, { received_at: toIso(e.at), result: e.result, reason: e.reason, source_ip: e.source_ip, duration_ms: e.duration_ms });
  if (e.kind === "transition") Object.assign(out, { from: e.from_state, to: e.to_state, reason: e.reason });
  return out;
}

export const eventRoutes: RouteDef[] = [
  {
    method: "GET",
    path: "/api/v1/monitors/:id/events",
    scope: "checks:read",
    summary: "List a monitor's timeline: pings, state transitions, token rotations (newest first)",
    tag: "Checks",
    query: Type.Object({ ...PageQuery, kind: enumOf(EVENT_KINDS, { description: "only events of this kind" }) }),
    response: listResponse("event", EventAttributesSchema),
    async handler(req, ctx) {
      const id = pathId(req.params, "monitor");
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const kind = q.oneOf("kind", EVENT_KINDS);
      q.done();
      if (!(await findMonitor(ctx.db, req.caller.accountId, id))) throw notFound("monitor");
      await ctx.pings?.settle(id);
      const { rows, total } = await listMonitorEvents(ctx.db, id, { kind }, { limit: perPage, offset });
      return list(rows.map((r) => resource("event", r.id, eventAttributes(r))), page, perPage, total);
    },
  },
];
