import type { SQL } from "bun";
import { Database as SqliteDatabase, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { join } from "node:path";
import { Kysely, type CompiledQuery, type QueryResult } from "kysely";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { createPrivateFile, makePrivateDir, restrictToOwner } from "../lib/private-files.ts";
import schemaSql from "../../schema.sql" with { type: "text" };
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./migrations/index.ts";
import { applyPragmas, BUSY_TIMEOUT_MS, schemaVersion, setBusyTimeout, setSchemaVersion } from "./pragmas.ts";
import type { DB } from "./tables.ts";

export type Db = Kysely<DB>;

/**
 * An open store on either engine: the typed query builder, which every query goes through, and for
 * the few things Kysely cannot say, the engine's raw handle.
 */
export type Store = SqliteStore | PostgresStore;

export interface SqliteStore {
  engine: "sqlite";
  db: Db;
  sqlite: SqliteDatabase;
  path: string;
  close(): Promise<void>;
}

export interface PostgresStore {
  engine: "postgres";
  db: Db;
  sql: SQL;
  url: string;
  close(): Promise<void>;
}

export const DATABASE_FILE = "vigil.db";

/**
 * Opens (creating if needed) the SQLite store in `dataDir`, applies pragmas and brings the schema to
 * the latest version. One connection per thread: bun:sqlite is synchronous, so a second connection
 * on the same thread would add locking without adding concurrency. Worker threads (the fold
 * worker, the checkpointer, the maintenance job) have their own, and the CLI's connection meets the
 * server's through busy_timeout.
 */
export function openStore(dataDir: string, file = DATABASE_FILE): SqliteStore {
  makePrivateDir(dataDir);
  const path = join(dataDir, file);
  privateDatabaseFile(path);
  const sqlite = new SqliteDatabase(path, { create: true, strict: false });
  applyPragmas(sqlite);
  migrate(sqlite);
  return storeOn(sqlite, path);
}

/**
 * One more connection to a store that openStore has opened and migrated, for a worker thread (the
 * maintenance job's): the same pragmas, statement cache and transactions as the first.
 */
export function connectStore(path: string): SqliteStore {
  const sqlite = new SqliteDatabase(path, { create: false, strict: false });
  applyPragmas(sqlite);
  return storeOn(sqlite, path);
}

function storeOn(sqlite: SqliteDatabase, path: string): SqliteStore {
  const db = new Kysely<DB>({ dialect: new RollbackSafeDialect(sqlite) });
  let closed = false;
  return {
    engine: "sqlite",
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
 * Creates a database file 0600 before SQLite opens it, or takes an older build's 0644 off it and
 * its -wal and -shm. SQLite creates those two with the database file's mode, whatever the umask, so
 * a private database keeps its WAL private.
 */
export function privateDatabaseFile(path: string): void {
  if (createPrivateFile(path)) return;
  for (const f of [path, `${path}-wal`, `${path}-shm`]) restrictToOwner(f);
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
    // locked" instead of waiting (it failed ping batches in the heartbeat bench). Prepared once:
    // Kysely would prepare BEGIN and COMMIT anew for every transaction.
    const begin = this.sqlite.prepare("BEGIN IMMEDIATE");
    const commit = this.sqlite.prepare("COMMIT");
    const noWait = () => setBusyTimeout(this.sqlite, 0);
    const wait = () => setBusyTimeout(this.sqlite);
    // While another connection holds the write lock (the ping journal's fold worker, a CLI command),
    // BEGIN waits on the event loop, 1 ms at a time, instead of in SQLite's busy handler, which
    // blocks the thread and every request with it (BENCHMARKS.md, heartbeat: the load bench's API
    // writes and check lateness, the first time the fold worker's transactions met it there).
    driver.beginTransaction = async () => {
      const giveUpAt = Date.now() + BUSY_TIMEOUT_MS;
      for (;;) {
        noWait();
        try {
          begin.run();
          return;
        } catch (err) {
          if ((err as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() >= giveUpAt) throw err;
        } finally {
          wait();
        }
        await Bun.sleep(1);
      }
    };
    driver.commitTransaction = async () => {
      commit.run();
    };
    // Prepared statements kept by SQL text (kysely-bun-sqlite prepares every query anew)
    const connection = new CachedStatementConnection(this.sqlite);
    const acquire = driver.acquireConnection.bind(driver);
    driver.acquireConnection = async () => {
      await acquire(); // the driver's one-connection lock
      return connection;
    };
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection) => {
      if (this.sqlite.inTransaction) await rollback(connection);
    };
    return driver;
  }
}

/** Most statements kept; queries of one shape compile to one SQL text, so a few hundred cover the app. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * The connection Kysely runs queries on, with prepared statements reused by SQL text (least
 * recently used dropped past STATEMENT_CACHE_SIZE). Profile (scheduler bench, 11k monitors):
 * bun:sqlite prepare under kysely-bun-sqlite's executeQuery was the largest single cost, about a
 * fifth of the server's samples, for the same few statements every check.
 */
class CachedStatementConnection {
  private cache = new Map<string, { stmt: Statement; returnsRows: boolean }>();
  constructor(private readonly sqlite: SqliteDatabase) {}

  private statement(sql: string): { stmt: Statement; returnsRows: boolean } {
    let entry = this.cache.get(sql);
    if (entry) {
      this.cache.delete(sql);
      this.cache.set(sql, entry);
      return entry;
    }
    const stmt = this.sqlite.prepare(sql);
    entry = { stmt, returnsRows: stmt.columnNames.length > 0 };
    this.cache.set(sql, entry);
    if (this.cache.size > STATEMENT_CACHE_SIZE) {
      const [oldest, old] = this.cache.entries().next().value!;
      this.cache.delete(oldest);
      old.stmt.finalize();
    }
    return entry;
  }

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    const { stmt, returnsRows } = this.statement(q.sql);
    const params = q.parameters as SQLQueryBindings[];
    if (returnsRows) return { rows: stmt.all(...params) as R[] };
    const res = stmt.run(...params);
    return { insertId: BigInt(res.lastInsertRowid), numAffectedRows: BigInt(res.changes), rows: [] };
  }

  async *streamQuery<R>(q: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // not cached: an iteration in progress must not share its statement
    const stmt = this.sqlite.prepare(q.sql);
    try {
      for (const row of stmt.iterate(...(q.parameters as SQLQueryBindings[]))) yield { rows: [row as R] };
    } finally {
      stmt.finalize();
    }
  }
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
    setSchemaVersion(sqlite, LATEST_SCHEMA_VERSION);
  }).immediate();
}

/** The store as the SQLite store, for what exists only on SQLite (tools, benches); a clear error on PostgreSQL. */
export function asSqlite(store: Store, what: string): SqliteStore {
  if (store.engine !== "sqlite") throw new Error(`${what} works on the SQLite store only`);
  return store;
}
