import { expect, test } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { logStorageFailure, STORAGE_LOG_INTERVAL_MS, storageFailure } from "../../src/lib/storage-errors.ts";

class SQLiteError extends Error {
  override name = "SQLiteError";
  constructor(readonly code: string | undefined, readonly errno: number) {
    super("sqlite");
  }
}

/** The shape of Bun.sql's errors: `code` ERR_POSTGRES_*, `errno` the server's SQLSTATE when the server sent one. */
class PostgresError extends Error {
  override name = "PostgresError";
  constructor(readonly code: string, readonly errno?: string) {
    super("postgres");
  }
}

test.each([
  ["SQLITE_FULL by code", new SQLiteError("SQLITE_FULL", 13), "full"],
  ["SQLITE_FULL by errno alone", new SQLiteError(undefined, 13), "full"],
  ["ENOSPC from node:fs", Object.assign(new Error("no space"), { code: "ENOSPC" }), "full"],
  ["SQLITE_IOERR", new SQLiteError("SQLITE_IOERR", 10), "io"],
  ["SQLITE_IOERR_WRITE (extended)", new SQLiteError("SQLITE_IOERR_WRITE", 778), "io"],
  ["extended IOERR by errno alone", new SQLiteError(undefined, 10 | (3 << 8)), "io"],
  ["wrapped in a cause", new Error("outer", { cause: new SQLiteError("SQLITE_FULL", 13) }), "full"],
  ["SQLITE_CONSTRAINT", new SQLiteError("SQLITE_CONSTRAINT_UNIQUE", 2067), null],
  ["SQLITE_BUSY", new SQLiteError("SQLITE_BUSY", 5), null],
  ["errno 13 outside SQLite (EACCES)", Object.assign(new Error("denied"), { errno: 13, code: "EACCES" }), null],
  ["PostgreSQL refuses connections (down)", new PostgresError("ERR_POSTGRES_CONNECTION_REFUSED"), "unavailable"],
  ["PostgreSQL connection lost", new PostgresError("ERR_POSTGRES_CONNECTION_CLOSED"), "unavailable"],
  ["PostgreSQL connection timeout", new PostgresError("ERR_POSTGRES_CONNECTION_TIMEOUT"), "unavailable"],
  ["PostgreSQL shutting down (57P01)", new PostgresError("ERR_POSTGRES_SERVER_ERROR", "57P01"), "unavailable"],
  ["PostgreSQL starting up (57P03)", new PostgresError("ERR_POSTGRES_SERVER_ERROR", "57P03"), "unavailable"],
  ["a write on a standby after a failover (25006)", new PostgresError("ERR_POSTGRES_SERVER_ERROR", "25006"), "unavailable"],
  ["a connection exception (08006)", new PostgresError("ERR_POSTGRES_SERVER_ERROR", "08006"), "unavailable"],
  ["PostgreSQL unique violation (23505)", new PostgresError("ERR_POSTGRES_SERVER_ERROR", "23505"), null],
  ["PostgreSQL syntax error", new PostgresError("ERR_POSTGRES_SYNTAX_ERROR"), null],
  ["PostgreSQL disk_full (53100)", new PostgresError("ERR_POSTGRES_SERVER_ERROR", "53100"), "full"],
  ["PostgreSQL io_error (58030)", new PostgresError("ERR_POSTGRES_SERVER_ERROR", "58030"), "io"],
  ["a plain error", new Error("boom"), null],
  ["not an error", "SQLITE_FULL", null],
] as const)("%s", (_what, err, expected) => {
  expect(storageFailure(err)).toBe(expected);
});

test("a storage failure is logged at error once per interval per logger, with the count in between", () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("debug", "api", (l) => lines.push(JSON.parse(l)));
  const other = createLogger("debug", "heartbeat", (l) => lines.push(JSON.parse(l)));
  const t0 = 1_000_000;
  expect(logStorageFailure(log, "full", {}, t0)).toBe(true);
  for (let i = 1; i <= 5; i++) expect(logStorageFailure(log, "full", {}, t0 + i * 1000)).toBe(false);
  expect(logStorageFailure(other, "full", {}, t0 + 1000)).toBe(true);
  expect(logStorageFailure(log, "io", {}, t0 + STORAGE_LOG_INTERVAL_MS)).toBe(true);
  expect(lines.map((l) => [l.component, l.level, l.storage_failure, l.failures_since_last_report])).toEqual([
    ["api", "error", "full", 0],
    ["heartbeat", "error", "full", 0],
    ["api", "error", "io", 5],
  ]);
});
