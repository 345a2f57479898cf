/**
 * The one writer of `checks` rows: the engine's results through Kysely (insertCheck, in the write
 * queue's transaction), and the ping path's many at a time: on SQLite through prepared statements
 * on the same connection (prepareCheckWrites: a batch's rows one at a time; prepareCheckFold: the
 * journal's fold many to a statement), on PostgreSQL a batch's rows gathered into one statement
 * (gatherCheckRows). All take the row's columns from checkValues or CHECK_COLUMNS, so a column
 * added to the table is added here, once.
 */
import type { Database, Statement } from "bun:sqlite";
import type { Insertable } from "kysely";
import type { CheckResult, CheckTimings } from "../domain/check-result.ts";
import { packedCheckExists, packedUntil } from "./check-blocks.ts";
import type { Db } from "./database.ts";
import { fixedQuery } from "./fixed-query.ts";
import { arrayParams, GatheredRows, statementFrom } from "./gathered-rows.ts";
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

const checkInsert = fixedQuery((db, v: CheckValues) =>
  db
    .insertInto("checks")
    .values(Object.fromEntries(CHECK_COLUMNS.map((c) => [c, v[c]])) as CheckValues)
    .returning("id"),
);

/** Writes one check row; returns its id. */
export async function insertCheck(db: Db, monitorId: number, region: string, r: CheckResult, resultUid: string | null = null): Promise<number> {
  return (await checkInsert(db, checkValues(monitorId, region, r, resultUid))).rows[0]!.id;
}

/**
 * One ping batch's check rows (heartbeat/apply-batch.ts; a row whose id a state change names goes
 * through insertCheck), inside the write queue's transaction, written in the order they were added:
 * on SQLite at once, through statements prepared once on the one connection (building and compiling
 * a Kysely query per row was most of a ping's cost, README "Heartbeat monitors"); on PostgreSQL
 * gathered, and written with the batch's other rows (gatherCheckRows). `region` is this instance's.
 */
export interface PingCheckWrites {
  /** one result (a heartbeat's failure, a missed deadline) */
  add(monitorId: number, r: CheckResult): void;
  /** an accepted ping's up check, the job's run time as its latency if known */
  addPing(monitorId: number, at: number, latencyMs: number | null): void;
}

const PING_CHECK_HEAD = "INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms) VALUES";
const PING_CHECK_ROW = "(?, ?, 'up', ?, ?)";
const latency = (ms: number | null) => (ms === null ? null : Math.round(ms));

/** On SQLite: every row written at once. */
export function prepareCheckWrites(sqlite: Database, region: string): PingCheckWrites {
  const full = sqlite.prepare(`INSERT INTO checks (${CHECK_COLUMNS.join(", ")}) VALUES (${CHECK_COLUMNS.map(() => "?").join(", ")})`);
  const ping = sqlite.prepare(`${PING_CHECK_HEAD} ${PING_CHECK_ROW}`) as Statement<unknown, [number, string, number, number | null]>;
  return {
    add(monitorId, r) {
      const v = checkValues(monitorId, region, r, null);
      full.run(...CHECK_COLUMNS.map((c) => v[c]));
    },
    addPing: (monitorId, at, latencyMs) => void ping.run(monitorId, region, at, latency(latencyMs)),
  };
}

/**
 * The ping journal's fold (store/ping-fold.ts, SQLite): up checks for many pings, written many to a
 * statement, in the order added, by `flush`. Only inside a transaction of the caller's on the same
 * connection.
 */
export interface FoldCheckRows {
  addPing(monitorId: number, at: number, latencyMs: number | null): void;
  flush(): void;
  /** forgets what was added and not flushed: its transaction is being rolled back */
  discard(): void;
}

export function prepareCheckFold(sqlite: Database, region: string): FoldCheckRows {
  const pings = new MultiRowInsert(sqlite, PING_CHECK_HEAD, PING_CHECK_ROW);
  return {
    addPing: (monitorId, at, latencyMs) => pings.add(monitorId, region, at, latency(latencyMs)),
    flush: () => pings.flush(),
    discard: () => pings.discard(),
  };
}

/** PostgreSQL's types of CHECK_COLUMNS but region, which is this instance's for every row. */
const CHECK_TYPES: Record<Exclude<(typeof CHECK_COLUMNS)[number], "region">, string> = {
  monitor_id: "bigint", status: "text", checked_at: "bigint", latency_ms: "bigint", http_code: "bigint", error_code: "text",
  error_message: "text", degraded_reason: "text", resolved_ip: "text", ssl_not_after: "bigint", dns_answer: "text",
  synthetic_trace_json: "text", result_uid: "text", dns_ms: "bigint", connect_ms: "bigint", tls_ms: "bigint", ttfb_ms: "bigint",
};
const ARRAY_COLUMNS = Object.keys(CHECK_TYPES) as (keyof typeof CHECK_TYPES)[];
const INSERT_CHECKS = statementFrom(
  (first) => `INSERT INTO checks (region, ${ARRAY_COLUMNS.join(", ")}) SELECT $${first}::text, * FROM unnest(${arrayParams(first + 1, Object.values(CHECK_TYPES))})`,
);

/** the columns of an accepted ping's up check, which every check sets; the others are null */
const [MONITOR, STATUS, CHECKED_AT, LATENCY] = ["monitor_id", "status", "checked_at", "latency_ms"].map((c) => ARRAY_COLUMNS.indexOf(c as never));

/** On PostgreSQL: rows gathered into `rows`, written with the batch's other rows (store/gathered-rows.ts). */
export function gatherCheckRows(region: string): PingCheckWrites & { rows: GatheredRows } {
  const rows = new GatheredRows(ARRAY_COLUMNS.length, INSERT_CHECKS, [region]);
  return {
    rows,
    add(monitorId, r) {
      const v = checkValues(monitorId, region, r, null);
      for (let i = 0; i < ARRAY_COLUMNS.length; i++) rows.sparse(i).push(v[ARRAY_COLUMNS[i]!]);
      rows.added();
    },
    addPing(monitorId, at, latencyMs) {
      const c = rows.columns;
      c[MONITOR]!.push(monitorId);
      c[STATUS]!.push("up");
      c[CHECKED_AT]!.push(at);
      c[LATENCY]!.push(latency(latencyMs));
      rows.added();
    },
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
