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
