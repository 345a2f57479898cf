import type { Database } from "bun:sqlite";

/** How long a write waits for another connection's write lock (a CLI command, the fold worker). */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Every SQLite pragma in one place (as PocketBase does). WAL lets readers run beside the one writer;
 * synchronous=NORMAL is durable against process crashes in WAL mode (only an OS crash can lose the
 * last commits), which is the trade every SQLite server makes for group commit throughput.
 */
export function applyPragmas(db: Database): void {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec("PRAGMA cache_size = -65536"); // 64 MiB page cache
  db.exec("PRAGMA wal_autocheckpoint = 10000");
}

/**
 * How long this connection's statements wait for another connection's lock. Run with exec, never
 * as a prepared statement: SQLite applies this pragma when it compiles it, so a prepared one run
 * again changes nothing.
 */
export function setBusyTimeout(db: Database, ms: number = BUSY_TIMEOUT_MS): void {
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(ms))}`);
}

/** The schema version this database is at (SQLite's user_version). */
export function schemaVersion(db: Database): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

export function setSchemaVersion(db: Database, version: number): void {
  db.exec(`PRAGMA user_version = ${Math.trunc(version)}`);
}

export type CheckpointMode = "PASSIVE" | "RESTART" | "TRUNCATE";

/** One WAL checkpoint: `log` frames in the WAL, `checkpointed` of them copied back, `busy` 1 if a reader held it up. */
export function checkpointWal(db: Database, mode: CheckpointMode): { busy: number; log: number; checkpointed: number } {
  return db.query(`PRAGMA wal_checkpoint(${mode})`).get() as { busy: number; log: number; checkpointed: number };
}

/** WAL pages after which a commit on this connection checkpoints by itself (0: never). */
export function autoCheckpoint(db: Database): number {
  return (db.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
}

export function setAutoCheckpoint(db: Database, pages: number): void {
  db.exec(`PRAGMA wal_autocheckpoint = ${Math.max(0, Math.trunc(pages))}`);
}

/** SQLite's integrity_check: ["ok"] when the file is sound, else what is wrong. */
export function integrityCheck(db: Database): string[] {
  return (db.query("PRAGMA integrity_check").all() as { integrity_check: string }[]).map((r) => r.integrity_check);
}
