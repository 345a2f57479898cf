/**
 * Queries of the heartbeat service. The ping path is hot, so the writes here take many rows per
 * statement: one transaction of the intake holds a batch of pings (group commit).
 */
import { sql } from "kysely";
import type { CheckResult } from "../domain/check-result.ts";
import type { Db } from "./database.ts";
import type { NewMonitorEvent } from "./monitor-events.ts";
import type { MonitorRow } from "./tables.ts";

const HEARTBEAT = "heartbeat";
/** rows per multi-row INSERT: 10 columns × 400 rows stays far below SQLite's bound-parameter limit */
const INSERT_CHUNK = 400;

/** token → monitor id of every heartbeat monitor, to warm the intake's cache at start-up. */
export async function listHeartbeatTokens(db: Db): Promise<{ id: number; heartbeat_token: string }[]> {
  const rows = await db
    .selectFrom("monitors")
    .select(["id", "heartbeat_token"])
    .where("monitor_type", "=", HEARTBEAT)
    .where("heartbeat_token", "is not", null)
    .execute();
  return rows as { id: number; heartbeat_token: string }[];
}

export async function findHeartbeatIdByToken(db: Db, token: string): Promise<number | null> {
  const row = await db.selectFrom("monitors").select("id").where("heartbeat_token", "=", token).where("monitor_type", "=", HEARTBEAT).executeTakeFirst();
  return row?.id ?? null;
}

export async function findHeartbeatToken(db: Db, monitorId: number): Promise<string | null> {
  const row = await db.selectFrom("monitors").select("heartbeat_token").where("id", "=", monitorId).where("monitor_type", "=", HEARTBEAT).executeTakeFirst();
  return row?.heartbeat_token ?? null;
}

export async function loadMonitorsByIds(db: Db, ids: number[]): Promise<Map<number, MonitorRow>> {
  const out = new Map<number, MonitorRow>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom("monitors").selectAll().where("id", "in", ids.slice(i, i + 500)).execute();
    for (const r of rows) out.set(r.id, r);
  }
  return out;
}

/**
 * What the deadline timers are rebuilt from at start-up: every active heartbeat monitor with a
 * persisted deadline, plus those that are up or degraded without one (so a row written by an older
 * build, or by hand, still gets a timer).
 */
export async function listHeartbeatDeadlines(db: Db): Promise<{ id: number; heartbeat_deadline_at: number | null }[]> {
  return db
    .selectFrom("monitors")
    .select(["id", "heartbeat_deadline_at"])
    .where("monitor_type", "=", HEARTBEAT)
    .where("is_paused", "=", 0)
    .where((eb) => eb.or([eb("heartbeat_deadline_at", "is not", null), eb("last_status", "in", ["up", "degraded"])]))
    .execute();
}

export async function insertMonitorEvents(db: Db, events: NewMonitorEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += INSERT_CHUNK) {
    await db
      .insertInto("monitor_events")
      .values(
        events.slice(i, i + INSERT_CHUNK).map((e) => ({
          monitor_id: e.monitorId,
          kind: e.kind,
          at: e.at,
          result: e.result ?? null,
          reason: e.reason ?? null,
          source_ip: e.sourceIp ?? null,
          from_state: e.fromState ?? null,
          to_state: e.toState ?? null,
          duration_ms: e.durationMs ?? null,
        })),
      )
      .execute();
  }
}

/** Many check rows at once, when their ids are not needed (pings that change no state). */
export async function insertChecks(db: Db, region: string, checks: { monitorId: number; result: CheckResult }[]): Promise<void> {
  for (let i = 0; i < checks.length; i += INSERT_CHUNK) {
    await db
      .insertInto("checks")
      .values(
        checks.slice(i, i + INSERT_CHUNK).map(({ monitorId, result: r }) => ({
          monitor_id: monitorId,
          region,
          status: r.status,
          checked_at: r.checked_at,
          latency_ms: r.latency_ms === null ? null : Math.round(r.latency_ms),
          http_code: r.http_code,
          error_code: r.error_code,
          error_message: r.error_message,
          degraded_reason: r.degraded_reason,
          resolved_ip: r.resolved_ip,
          ssl_not_after: r.ssl_not_after,
          dns_answer: null,
          synthetic_trace_json: null,
          result_uid: null,
        })),
      )
      .execute();
  }
}

export interface HeartbeatRowState {
  id: number;
  heartbeat_last_ping_at: number | null;
  heartbeat_last_start_at: number | null;
  heartbeat_deadline_at: number | null;
  last_checked_at: number | null;
}

/**
 * Writes the heartbeat bookkeeping columns of many monitors in one statement per chunk (never their
 * configuration or state). One UPDATE per monitor was the ping path's largest cost.
 * `UPDATE ... FROM (VALUES ...)` with the VALUES columns named column1..N is understood alike by
 * SQLite (3.33+) and PostgreSQL.
 */
export async function updateHeartbeatRows(db: Db, rows: HeartbeatRowState[]): Promise<void> {
  const CHUNK = 500; // 5 parameters a row
  for (let i = 0; i < rows.length; i += CHUNK) {
    const values = sql.join(
      rows.slice(i, i + CHUNK).map((r) => sql`(${r.id}, ${r.heartbeat_last_ping_at}, ${r.heartbeat_last_start_at}, ${r.heartbeat_deadline_at}, ${r.last_checked_at})`),
    );
    await sql`UPDATE monitors SET heartbeat_last_ping_at = v.column2, heartbeat_last_start_at = v.column3,
      heartbeat_deadline_at = v.column4, last_checked_at = v.column5
      FROM (VALUES ${values}) AS v WHERE monitors.id = v.column1`.execute(db);
  }
}
