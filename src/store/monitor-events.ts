import type { Db } from "./database.ts";

export interface NewMonitorEvent {
  monitorId: number;
  kind: "ping" | "start" | "fail" | "transition" | "token_rotated";
  at: number;
  result?: string | null;
  reason?: string | null;
  sourceIp?: string | null;
  fromState?: string | null;
  toState?: string | null;
  durationMs?: number | null;
  /** a failure ping's body, as much as is kept */
  body?: string | null;
  /** the ping body's size as sent, when longer than what was kept */
  bodyBytes?: number | null;
}

export async function insertMonitorEvent(db: Db, e: NewMonitorEvent): Promise<number> {
  const row = await db
    .insertInto("monitor_events")
    .values({
      monitor_id: e.monitorId,
      kind: e.kind,
      at: e.at,
      result: e.result ?? null,
      reason: e.reason ?? null,
      source_ip: e.sourceIp ?? null,
      from_state: e.fromState ?? null,
      to_state: e.toState ?? null,
      duration_ms: e.durationMs ?? null,
      body: e.body ?? null,
      body_bytes: e.bodyBytes ?? null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}
