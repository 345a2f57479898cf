import type { AppContext } from "../context.ts";
import type { EventAttributes } from "../domain/event-schema.ts";
import { daysLeft } from "../domain/expiry-stage.ts";
import { notFound } from "../http/errors.ts";
import { toIso } from "../lib/dates.ts";
import { listMonitorEvents as listEventRows } from "../store/event-queries.ts";
import { findMonitor } from "../store/monitors.ts";
import type { MonitorEventRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";

/** A monitor's timeline: pings, state transitions, token rotations. */
export type EventItem = Item<EventAttributes>;

const PING_KINDS = new Set(["ping", "start", "fail"]);

function eventAttributes(e: MonitorEventRow): EventAttributes {
  const out: Record<string, unknown> = { monitor_id: e.monitor_id, kind: e.kind, at: toIso(e.at) };
  if (PING_KINDS.has(e.kind)) Object.assign(out, { received_at: toIso(e.at), result: e.result, reason: e.reason, source_ip: e.source_ip, duration_ms: e.duration_ms, body: e.body, body_bytes: e.body_bytes });
  if (e.kind === "transition") Object.assign(out, { from: e.from_state, to: e.to_state, reason: e.reason });
  if (e.kind === "expiring" && e.expires_at !== null) Object.assign(out, { reason: e.reason, expires_at: toIso(e.expires_at), days_left: daysLeft(e.expires_at, e.at) });
  if (e.kind === "still_down" || e.kind === "escalated") Object.assign(out, { reason: e.reason });
  return out as EventAttributes;
}

/** A page of the monitor's timeline, newest first, its journaled pings included. */
export async function listMonitorEvents(ctx: AppContext, actor: Actor, monitorId: number, filter: { kind?: string }, window: PageWindow): Promise<Listed<EventAttributes>> {
  if (!(await findMonitor(ctx.db, actor.accountId, monitorId))) throw notFound("monitor");
  const { rows, total } = await listEventRows(ctx.pings, monitorId, filter, window);
  return { items: rows.map((r) => ({ id: r.id, attributes: eventAttributes(r) })), total };
}
