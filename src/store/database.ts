import { Database as SqliteDatabase } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Kysely } from "kysely";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import schemaSql from "../../schema.sql" with { type: "text" };
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./migrations/index.ts";
import { applyPragmas } from "./pragmas.ts";
import type { DB } from "./tables.ts";

export type Db = Kysely<DB>;

/** An open store: the typed query builder and, for the few things Kysely cannot say, the raw handle. */
export interface Store {
  db: Db;
  sqlite: SqliteDatabase;
  path: string;
  close(): Promise<void>;
}

export const DATABASE_FILE = "vigil.db";

/**
 * Opens (creating if needed) the SQLite store in `dataDir`, applies pragmas and brings the schema to
 * the latest version. One connection per process: bun:sqlite is synchronous, so a second connection
 * would add locking without adding concurrency; the CLI's connection meets the server's through
 * busy_timeout.
 */
export function openStore(dataDir: string, file = DATABASE_FILE): Store {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, file);
  const sqlite = new SqliteDatabase(path, { create: true, strict: false });
  applyPragmas(sqlite);
  migrate(sqlite);
  const db = new Kysely<DB>({ dialect: new RollbackSafeDialect(sqlite) });
  let closed = false;
  return {
    db,
    sqlite,
    path,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy(); // closes the sqlite handle too
    },
  };
}

/**
 * On some errors (SQLITE_FULL at commit, SQLITE_IOERR) SQLite rolls the transaction back by itself;
 * Kysely then sends ROLLBACK anyway, which fails with "no transaction is active" and replaces the
 * real error, so a full disk would read as an internal error. ROLLBACK is skipped when SQLite has
 * no transaction open, and the original error reaches the caller.
 */
class RollbackSafeDialect extends BunSqliteDialect {
  constructor(private readonly sqlite: SqliteDatabase) {
    super({ database: sqlite });
  }
  override createDriver() {
    const driver = super.createDriver();
    // BEGIN IMMEDIATE: the write lock is taken at the start, where SQLite waits (busy_timeout) for
    // another connection that holds it (the WAL checkpointer, a CLI command). A plain BEGIN takes
    // it at the first write, after a read, and that upgrade fails at once with "database is
    // locked" instead of waiting (heartbeat bench: ~1 batch in 300 failed this way). Prepared once:
    // Kysely would prepare BEGIN and COMMIT anew for every transaction.
    const begin = this.sqlite.prepare("BEGIN IMMEDIATE");
    const commit = this.sqlite.prepare("COMMIT");
    driver.beginTransaction = async () => {
      begin.run();
    };
    driver.commitTransaction = async () => {
      commit.run();
    };
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection) => {
      if (this.sqlite.inTransaction) await rollback(connection);
    };
    return driver;
  }
}

export function schemaVersion(sqlite: SqliteDatabase): number {
  return (sqlite.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

/** A fresh database gets schema.sql whole; an older one gets each missing migration in order. */
export function migrate(sqlite: SqliteDatabase): void {
  const current = schemaVersion(sqlite);
  if (current > LATEST_SCHEMA_VERSION) {
    throw new Error(`the data directory has schema version ${current}, newer than this build's ${LATEST_SCHEMA_VERSION}: upgrade Vigil`);
  }
  if (current === LATEST_SCHEMA_VERSION) return;
  const isEmpty = current === 0 && (sqlite.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n === 0;
  sqlite.transaction(() => {
    if (isEmpty) {
      sqlite.exec(schemaSql);
    } else {
      for (const m of MIGRATIONS) if (m.version > current) sqlite.exec(m.sql);
    }
    sqlite.exec(`PRAGMA user_version = ${LATEST_SCHEMA_VERSION}`);
  }).immediate();
}
