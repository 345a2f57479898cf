/**
 * The one writer of `checks` rows: the engine's results through Kysely (insertCheck, in the write
 * queue's transaction), and the ping path's through prepared statements on the same connection
 * (prepareCheckWrites: the direct path's rows one at a time, the journal's fold many to a
 * statement). Both take the row's columns from checkValues, so a column added to the table is added
 * here, once.
 */
import type { Database, Statement } from "bun:sqlite";
import type { Insertable } from "kysely";
import type { CheckResult, CheckTimings } from "../domain/check-result.ts";
import { packedCheckExists, packedUntil } from "./check-blocks.ts";
import type { Db } from "./database.ts";
import { MultiRowInsert } from "./multi-row-insert.ts";
import type { ChecksTable } from "./tables.ts";

const whole = (v: number | null | undefined) => (typeof v === "number" && Number.isFinite(v) ? Math.max(0, Math.round(v)) : null);

/** A result's timings as the check row's columns (whole ms, never negative). */
export function timingColumns(t: CheckTimings | null | undefined) {
  return { dns_ms: whole(t?.dns_ms), connect_ms: whole(t?.connect_ms), tls_ms: whole(t?.tls_ms), ttfb_ms: whole(t?.ttfb_ms) };
}

type CheckValues = Required<Omit<Insertable<ChecksTable>, "id">>;

/** A check row's columns for a result. JSON-valued fields are stored as text. */
function checkValues(monitorId: number, region: string, r: CheckResult, resultUid: string | null): CheckValues {
  return {
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
    dns_answer: r.dns_answer === null ? null : JSON.stringify(r.dns_answer),
    synthetic_trace_json: r.synthetic_trace_json === null ? null : JSON.stringify(r.synthetic_trace_json),
    result_uid: resultUid,
    ...timingColumns(r.timings),
  };
}

const CHECK_COLUMNS = [
  "monitor_id", "region", "status", "checked_at", "latency_ms", "http_code", "error_code", "error_message", "degraded_reason",
  "resolved_ip", "ssl_not_after", "dns_answer", "synthetic_trace_json", "result_uid", "dns_ms", "connect_ms", "tls_ms", "ttfb_ms",
] as const satisfies readonly (keyof CheckValues)[];

/** Writes one check row; returns its id. */
export async function insertCheck(db: Db, monitorId: number, region: string, r: CheckResult, resultUid: string | null = null): Promise<number> {
  const row = await db.insertInto("checks").values(checkValues(monitorId, region, r, resultUid)).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Check rows through statements prepared once on one connection, for the ping path, where building
 * and compiling a Kysely query per row was most of a ping's cost (README "Heartbeat monitors").
 * Run only inside a transaction the caller holds on that connection. `region` is this instance's.
 */
export interface CheckWrites {
  /** one result (a heartbeat's failure, a missed deadline); returns the row's id */
  insert(monitorId: number, r: CheckResult): number;
  /** an accepted ping's up check, the job's run time as its latency if known; returns the row's id */
  insertPing(monitorId: number, at: number, latencyMs: number | null): number;
  /** the same rows for many pings (the journal's fold): written many to a statement, in the order added, by `flush` */
  addPing(monitorId: number, at: number, latencyMs: number | null): void;
  flush(): void;
  /** forgets what was added and not flushed: its transaction is being rolled back */
  discard(): void;
}

const PING_CHECK_HEAD = "INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms) VALUES";
const PING_CHECK_ROW = "(?, ?, 'up', ?, ?)";

export function prepareCheckWrites(sqlite: Database, region: string): CheckWrites {
  const full = sqlite.prepare(`INSERT INTO checks (${CHECK_COLUMNS.join(", ")}) VALUES (${CHECK_COLUMNS.map(() => "?").join(", ")})`);
  const ping = sqlite.prepare(`${PING_CHECK_HEAD} ${PING_CHECK_ROW}`) as Statement<unknown, [number, string, number, number | null]>;
  const pings = new MultiRowInsert(sqlite, PING_CHECK_HEAD, PING_CHECK_ROW);
  const latency = (ms: number | null) => (ms === null ? null : Math.round(ms));
  return {
    insert(monitorId, r) {
      const v = checkValues(monitorId, region, r, null);
      return Number(full.run(...CHECK_COLUMNS.map((c) => v[c])).lastInsertRowid);
    },
    insertPing: (monitorId, at, latencyMs) => Number(ping.run(monitorId, region, at, latency(latencyMs)).lastInsertRowid),
    addPing: (monitorId, at, latencyMs) => pings.add(monitorId, region, at, latency(latencyMs)),
    flush: () => pings.flush(),
    discard: () => pings.discard(),
  };
}

/**
 * Whether a probe's result is already stored: by its uid among check rows, or, for a result older
 * than the monitor's packed checks (blocks keep no uids), by region and time, which a probe never
 * repeats for two different checks. `mayBePacked` false (the caller knows the check is too recent
 * to have been packed) spares the look at the blocks.
 */
export async function resultAlreadyStored(db: Db, monitorId: number, region: string, resultUid: string, checkedAt: number, mayBePacked = true): Promise<boolean> {
  if (await db.selectFrom("checks").select("id").where("result_uid", "=", resultUid).executeTakeFirst()) return true;
  if (!mayBePacked) return false;
  const packed = await packedUntil(db, monitorId);
  return packed !== null && checkedAt < packed && (await packedCheckExists(db, monitorId, region, checkedAt));
}
