/**
 * The ping path's reads and writes of one batch behind one interface: the monitor row's reads and
 * bookkeeping here, its events and checks through the writers of the modules that own those tables
 * (store/monitor-events.ts, store/checks.ts). On SQLite (this file) prepared statements on the raw
 * bun:sqlite handle, run as they are called; on PostgreSQL one query reading a batch's rows and one
 * statement writing them (store/ping-store-postgres.ts). Either is handed out only inside a write
 * of the ping store (store/ping-store.ts), on its transaction.
 *
 * Why not Kysely here: building and compiling a query tree per call was most of the CPU a ping cost
 * (README "Heartbeat monitors"; BENCHMARKS.md, heartbeat). On SQLite they must only be run inside a
 * transaction the caller holds through Kysely (a write-queue job): there is one connection, so they
 * are part of that transaction.
 */
import type { Database, Statement } from "bun:sqlite";
import { prepareCheckWrites, type PingCheckWrites } from "./checks.ts";
import { prepareEventWrites, type PingEventWrites } from "./monitor-events.ts";
import type { MonitorRow } from "./tables.ts";

export interface HeartbeatRowState {
  id: number;
  heartbeat_last_ping_at: number | null;
  heartbeat_last_start_at: number | null;
  heartbeat_deadline_at: number | null;
  last_checked_at: number | null;
}

/**
 * The columns the ping path reads: `SELECT *` builds a ~60-property object per ping, and was the
 * costliest statement of a ping in the heartbeat bench's profile; the whole row is read only for
 * the rare state change.
 */
export const PING_MONITOR_COLUMNS = [
  "id", "account_id", "monitor_type", "heartbeat_token", "is_paused", "is_in_maintenance", "last_status", "state_changed_at",
  "last_checked_at", "interval_sec", "heartbeat_period_sec", "heartbeat_grace_sec", "heartbeat_schedule", "heartbeat_timezone",
  "heartbeat_last_ping_at", "heartbeat_last_start_at", "heartbeat_deadline_at", "heartbeat_payload_policy",
  "heartbeat_payload_status_key", "heartbeat_notify_on_late", "updated_at",
] as const satisfies readonly (keyof MonitorRow)[];

export type PingMonitorRow = Pick<MonitorRow, (typeof PING_MONITOR_COLUMNS)[number]>;

/**
 * One batch's statements (heartbeat/apply-batch.ts), on the write queue's transaction. Rows are
 * written in the order they are added, by `flush` at the latest, and a batch flushes before
 * anything else reads or writes those tables in its transaction (a state change) and at its end.
 */
export interface BatchStatements {
  /**
   * These monitors' PING_MONITOR_COLUMNS (null: no such monitor), read once for the batch. On
   * PostgreSQL the rows stay locked until the commit, so another instance's batch for the same
   * monitors waits for this one and then reads what it wrote.
   */
  pingMonitors(ids: readonly number[]): Map<number, PingMonitorRow | null> | Promise<Map<number, PingMonitorRow | null>>;
  /** the whole row (a state change's alert names the monitor) */
  monitor(id: number): MonitorRow | null | Promise<MonitorRow | null>;
  events: PingEventWrites;
  /** this instance's region's check rows */
  checks: PingCheckWrites;
  /** the heartbeat bookkeeping columns only, never configuration or state */
  updateBookkeeping(r: HeartbeatRowState): void;
  /** writes the events, checks and bookkeeping added and not written yet */
  flush(): void | Promise<void>;
}

/**
 * On SQLite, statements prepared once on the one connection (which the write queue's transaction
 * holds), run as they are called: every batch is given the same ones. The heartbeat epoch is read
 * outside transactions too, by the ping journal's split (store/ping-journal-split.ts).
 */
export interface SqlitePingStatements extends BatchStatements {
  pingMonitors(ids: readonly number[]): Map<number, PingMonitorRow | null>;
  /**
   * The heartbeat epoch (schema: heartbeat_epoch): it moves whenever a heartbeat monitor's token,
   * last edit, pause, state or type changes or one is deleted, so rows read while it stood still
   * are still true.
   */
  heartbeatEpoch(): number;
}

export function preparePingStatements(sqlite: Database, region: string): SqlitePingStatements {
  const monitor = sqlite.prepare("SELECT * FROM monitors WHERE id = ?") as Statement<MonitorRow, [number]>;
  const pingMonitor = sqlite.prepare(`SELECT ${PING_MONITOR_COLUMNS.join(", ")} FROM monitors WHERE id = ?`) as Statement<PingMonitorRow, [number]>;
  const bookkeeping = sqlite.prepare(
    "UPDATE monitors SET heartbeat_last_ping_at = ?, heartbeat_last_start_at = ?, heartbeat_deadline_at = ?, last_checked_at = ? WHERE id = ?",
  );
  // Every edit of a monitor (API, CLI: store/monitors.ts) sets updated_at; the token and the state
  // are compared too, so a rotation, a pause or a flip is seen even within the same millisecond.
  const epoch = sqlite.prepare("SELECT n FROM heartbeat_epoch WHERE id = 1") as Statement<{ n: number }, []>;
  const stmts: SqlitePingStatements = {
    pingMonitors(ids) {
      const rows = new Map<number, PingMonitorRow | null>();
      for (const id of ids) if (!rows.has(id)) rows.set(id, pingMonitor.get(id) ?? null);
      return rows;
    },
    monitor: (id) => monitor.get(id) ?? null,
    events: prepareEventWrites(sqlite),
    checks: prepareCheckWrites(sqlite, region),
    heartbeatEpoch: () => epoch.get()?.n ?? 0,
    updateBookkeeping: (r) => {
      bookkeeping.run(r.heartbeat_last_ping_at, r.heartbeat_last_start_at, r.heartbeat_deadline_at, r.last_checked_at, r.id);
    },
    flush: () => {},
  };
  return stmts;
}
