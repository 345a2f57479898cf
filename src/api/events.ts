import { Type } from "@sinclair/typebox";
import { EVENT_KINDS, EventAttributesSchema } from "../domain/event-schema.ts";
import { toIso } from "../lib/dates.ts";
import { listMonitorEvents } from "../store/event-queries.ts";
import { findMonitor } from "../store/monitors.ts";
import type { MonitorEventRow } from "../store/tables.ts";
import { list, resource } from "./envelope.ts";
import { notFound } from "../http/errors.ts";
import { pathId } from "../http/path-id.ts";
import { QueryReader } from "./query.ts";
import type { RouteDef } from "./route.ts";
import { listResponse, PageQuery } from "./schemas.ts";
import { enumOf } from "../domain/schema-parts.ts";

const PING_KINDS = new Set(["ping", "start", "fail"]);

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
