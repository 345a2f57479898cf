/**
 * The ping path's four statements as prepared statements on the raw bun:sqlite handle.
 *
 * Why not Kysely here: Kysely builds and compiles a query tree per call and kysely-bun-sqlite
 * prepares every statement anew, which together were about 60% of the CPU a ping cost
 * (scripts/bench/heartbeat.ts with --profile). Prepared once, each statement costs a few
 * microseconds. They must only be run inside a transaction the caller holds through Kysely (a
 * write-queue job): there is one connection, so they are part of that transaction. The SQL is plain
 * ANSI; a PostgreSQL port replaces this file.
 */
import type { Database, Statement } from "bun:sqlite";
import type { CheckResult } from "../domain/check-result.ts";
import type { NewMonitorEvent } from "./monitor-events.ts";
import type { MonitorRow } from "./tables.ts";

export interface HeartbeatRowState {
  id: number;
  heartbeat_last_ping_at: number | null;
  heartbeat_last_start_at: number | null;
  heartbeat_deadline_at: number | null;
  last_checked_at: number | null;
}

/**
 * The columns the ping path reads. `SELECT *` built a ~60-property object per ping and was the
 * costliest statement of a ping (heartbeat bench profile: `get` under `monitor`, ~7% of the
 * server's CPU); the whole row is read only for the rare state change.
 */
export const PING_MONITOR_COLUMNS = [
  "id", "account_id", "monitor_type", "heartbeat_token", "is_paused", "is_in_maintenance", "last_status", "state_changed_at",
  "last_checked_at", "interval_sec", "heartbeat_period_sec", "heartbeat_grace_sec", "heartbeat_schedule", "heartbeat_timezone",
  "heartbeat_last_ping_at", "heartbeat_last_start_at", "heartbeat_deadline_at", "heartbeat_payload_policy",
  "heartbeat_payload_status_key", "heartbeat_notify_on_late", "updated_at",
] as const satisfies readonly (keyof MonitorRow)[];

export type PingMonitorRow = Pick<MonitorRow, (typeof PING_MONITOR_COLUMNS)[number]>;

export interface PingStatements {
  monitor(id: number): MonitorRow | null;
  /** the columns of PING_MONITOR_COLUMNS only */
  pingMonitor(id: number): PingMonitorRow | null;
  insertEvent(e: NewMonitorEvent): void;
  /** a ping's event, without the event object (the ping path's every request) */
  insertPingEvent(monitorId: number, kind: string, at: number, result: string, sourceIp: string | null, durationMs: number | null): void;
  /** returns the new check's id */
  insertCheck(monitorId: number, region: string, r: CheckResult): number;
  /** an accepted ping's check: up, with the job's duration if known; returns the new check's id */
  insertUpCheck(monitorId: number, region: string, at: number, latencyMs: number | null): number;
  /** the heartbeat bookkeeping columns only, never configuration or state */
  updateBookkeeping(r: HeartbeatRowState): void;
  /**
   * The heartbeat epoch (schema: heartbeat_epoch): it moves whenever a heartbeat monitor's token,
   * last edit, pause, state or type changes or one is deleted, so rows read while it stood still
   * are still true.
   */
  heartbeatEpoch(): number;
}

export function preparePingStatements(sqlite: Database): PingStatements {
  const monitor = sqlite.prepare("SELECT * FROM monitors WHERE id = ?") as Statement<MonitorRow, [number]>;
  const pingMonitor = sqlite.prepare(`SELECT ${PING_MONITOR_COLUMNS.join(", ")} FROM monitors WHERE id = ?`) as Statement<PingMonitorRow, [number]>;
  const event = sqlite.prepare(
    "INSERT INTO monitor_events (monitor_id, kind, at, result, reason, source_ip, from_state, to_state, duration_ms, body, body_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const check = sqlite.prepare(
    "INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms, http_code, error_code, error_message, degraded_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const bookkeeping = sqlite.prepare(
    "UPDATE monitors SET heartbeat_last_ping_at = ?, heartbeat_last_start_at = ?, heartbeat_deadline_at = ?, last_checked_at = ? WHERE id = ?",
  );
  // Every edit of a monitor (API, CLI: store/monitors.ts) sets updated_at; the token and the state
  // are compared too, so a rotation, a pause or a flip is seen even within the same millisecond.
  const epoch = sqlite.prepare("SELECT n FROM heartbeat_epoch WHERE id = 1") as Statement<{ n: number }, []>;
  return {
    monitor: (id) => monitor.get(id) ?? null,
    pingMonitor: (id) => pingMonitor.get(id) ?? null,
    insertEvent: (e) => {
      event.run(e.monitorId, e.kind, e.at, e.result ?? null, e.reason ?? null, e.sourceIp ?? null, e.fromState ?? null, e.toState ?? null, e.durationMs ?? null, e.body ?? null, e.bodyBytes ?? null);
    },
    insertPingEvent: (monitorId, kind, at, result, sourceIp, durationMs) => {
      event.run(monitorId, kind, at, result, null, sourceIp, null, null, durationMs, null, null);
    },
    insertUpCheck: (monitorId, region, at, latencyMs) => {
      const res = check.run(monitorId, region, "up", at, latencyMs === null ? null : Math.round(latencyMs), null, null, null, null);
      return Number(res.lastInsertRowid);
    },
    insertCheck: (monitorId, region, r) => {
      const res = check.run(monitorId, region, r.status, r.checked_at, r.latency_ms === null ? null : Math.round(r.latency_ms), r.http_code, r.error_code, r.error_message, r.degraded_reason);
      return Number(res.lastInsertRowid);
    },
    heartbeatEpoch: () => epoch.get()?.n ?? 0,
    updateBookkeeping: (r) => {
      bookkeeping.run(r.heartbeat_last_ping_at, r.heartbeat_last_start_at, r.heartbeat_deadline_at, r.last_checked_at, r.id);
    },
  };
}
