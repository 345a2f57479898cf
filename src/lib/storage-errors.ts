/**
 * Recognises the storage failures a person can act on: the disk holding the data is full
 * (SQLITE_FULL, ENOSPC, PostgreSQL's disk_full), the store cannot be written at all (SQLITE_IOERR and
 * its extended codes, PostgreSQL's io_error), or the PostgreSQL server cannot be reached (down, restarting, failing over). The API answers these
 * with 507 / 503 and a code instead of a 500, and logs them at most once a minute per component: a
 * full disk or a database that is down fails every request, and a log line per request would fill
 * the disk that holds the logs too.
 */
import type { Logger } from "./logger.ts";

export type StorageFailure = "full" | "io" | "unavailable";

/** SQLite primary result codes (https://sqlite.org/rescode.html); extended codes keep them in the low byte. */
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
/** PostgreSQL's SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html), which Bun's PostgresError carries in `errno`. */
const PG_DISK_FULL = "53100";
const PG_IO_ERROR = "58030";

/**
 * Bun.sql's codes for a connection that could not be made or was lost: the server is down, refuses
 * connections, or went away mid-query. Each leaves the pool to connect afresh on the next query.
 */
const POSTGRES_CONNECTION_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
]);

/**
 * SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) the server sends when
 * it cannot serve now but will: 57P01 admin_shutdown (a stop or a failover cut the session), 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up, in recovery), 53300 too_many_connections,
 * 25006 read_only_sql_transaction (a write reached a standby: a failover not yet seen by the address
 * we connect to), and class 08, connection exceptions.
 */
function postgresUnavailable(sqlState: string): boolean {
  return sqlState === "57P01" || sqlState === "57P02" || sqlState === "57P03" || sqlState === "53300" || sqlState === "25006" || sqlState.startsWith("08");
}

/**
 * "full" for a full disk, "io" for an I/O error, "unavailable" for a PostgreSQL server that cannot
 * be reached now, null for anything else (PostgreSQL's disk_full and io_error are "full" and "io"). Looks at bun:sqlite's SQLiteError (`code` "SQLITE_FULL" /
 * "SQLITE_IOERR_WRITE", `errno` possibly extended), at Node's ENOSPC, at Bun.sql's PostgresError
 * (`code` ERR_POSTGRES_*, `errno` the server's SQLSTATE), and one level of `cause`.
 */
export function storageFailure(err: unknown): StorageFailure | null {
  for (let e: unknown = err, depth = 0; e && typeof e === "object" && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (typeof code === "string") {
      if (code === "SQLITE_FULL" || code === "ENOSPC") return "full";
      if (code.startsWith("SQLITE_IOERR") || code === "EIO") return "io";
      if (code.startsWith("ERR_POSTGRES_")) {
        if (POSTGRES_CONNECTION_CODES.has(code)) return "unavailable";
        if (code === "ERR_POSTGRES_SERVER_ERROR" && typeof errno === "string" && postgresUnavailable(errno)) return "unavailable";
      }
    }
    if (typeof errno === "string" && (e as { name?: unknown }).name === "PostgresError") {
      if (errno === PG_DISK_FULL) return "full";
      if (errno === PG_IO_ERROR) return "io";
    }
    if (typeof errno === "number" && (e as { name?: unknown }).name === "SQLiteError") {
      if ((errno & 0xff) === SQLITE_FULL) return "full";
      if ((errno & 0xff) === SQLITE_IOERR) return "io";
    }
  }
  return null;
}

export const STORAGE_MESSAGES: Record<StorageFailure, { status: number; code: string; message: string }> = {
  full: {
    status: 507,
    code: "insufficient_storage",
    message: "the disk holding Vigil's data is full, so nothing was saved; free some space and retry (no restart is needed)",
  },
  io: {
    status: 503,
    code: "storage_unavailable",
    message: "Vigil's data store could not be written (I/O error), so nothing was saved; retry shortly",
  },
  unavailable: {
    status: 503,
    code: "storage_unavailable",
    message: "Vigil's database cannot be reached now (it is down, restarting or failing over), so nothing was read or saved; retry shortly",
  },
};

const LOG_LINES: Record<StorageFailure, string> = {
  full: "the disk holding the data directory is full; writes are refused until space returns",
  io: "the data store cannot be written (I/O error); writes are refused",
  unavailable: "the database cannot be reached; requests are answered 503 and check results wait in memory until it returns",
};

export const STORAGE_LOG_INTERVAL_MS = 60_000;

/** Last time each logger reported a storage failure; keyed by logger so each instance keeps its own. */
const lastLogged = new WeakMap<Logger, number>();

/**
 * Logs a storage failure at error level, at most once per `STORAGE_LOG_INTERVAL_MS` per logger,
 * with the number of failures since the last line. Returns true when it wrote a line.
 */
export function logStorageFailure(log: Logger, kind: StorageFailure, fields: Record<string, unknown> = {}, now = Date.now()): boolean {
  const suppressed = suppressedCounts.get(log) ?? 0;
  const last = lastLogged.get(log);
  if (last !== undefined && now - last < STORAGE_LOG_INTERVAL_MS) {
    suppressedCounts.set(log, suppressed + 1);
    return false;
  }
  lastLogged.set(log, now);
  suppressedCounts.set(log, 0);
  log.error(LOG_LINES[kind], {
    storage_failure: kind,
    failures_since_last_report: suppressed,
    ...fields,
  });
  return true;
}

const suppressedCounts = new WeakMap<Logger, number>();

/**
 * Logs a failed background write: a storage failure through the once-a-minute report, anything else
 * as `msg` at error level, every time.
 */
export function logWriteFailure(log: Logger, msg: string, err: unknown, fields: Record<string, unknown> = {}): void {
  const kind = storageFailure(err);
  if (kind) logStorageFailure(log, kind, fields);
  else log.error(msg, { ...fields, error: String(err) });
}
