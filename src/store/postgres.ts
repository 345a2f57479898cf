/**
 * The PostgreSQL store: the same tables (schema.postgres.sql) and the same Kysely query builder as
 * the SQLite store, over Bun's built-in client (BENCHMARKS.md, "PostgreSQL client": the fastest of
 * the three measured under a full pool) through kysely-postgres-js.
 *
 * Bun returns `int8` as a string or, with `bigint: true`, a BigInt. Our ids and epoch-ms times are
 * int8 and every caller expects numbers, as SQLite gives them, so each row's BigInts are turned into
 * numbers on the way out (every value stays far below 2^53).
 */
import { SQL } from "bun";
import { Kysely } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import schemaSql from "../../schema.postgres.sql" with { type: "text" };
import { LATEST_SCHEMA_VERSION, POSTGRES_BASELINE_VERSION, POSTGRES_MIGRATIONS } from "./migrations/index.ts";
import type { PostgresStore } from "./database.ts";
import type { DB } from "./tables.ts";

/** connections per instance: the write queue holds one, reads share the rest (lease renewals have their own, openSidePool) */
const POOL_SIZE = 16;
/** any number that names Vigil's migration lock among the database's advisory locks (a copy into the database holds it too) */
export const MIGRATION_LOCK = 0x5649_4749; // "VIGI"

type Row = Record<string, unknown>;

/** Bun's SQL as kysely-postgres-js sees it (postgres.js's reserve()/unsafe() shape), rows with numbers for BigInts. */
export function numbersForBigInts(sql: SQL) {
  return () => ({
    async reserve() {
      const r = await sql.reserve();
      return {
        release: () => r.release(),
        async unsafe(query: string, params?: unknown[]) {
          const rows = await r.unsafe(query, params as never[]);
          for (const row of rows as Row[]) for (const k in row) if (typeof row[k] === "bigint") row[k] = Number(row[k]);
          return rows;
        },
      };
    },
    end: () => sql.close(),
  });
}

/** A URL with its password replaced, for logs and errors. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://…";
  }
}

/**
 * Connects to the database at `url`, creates the schema in an empty database or checks that a used
 * one is at this build's version. Several instances starting at once take turns through an advisory
 * lock, so only one creates the schema.
 */
export async function openPostgresStore(url: string, o: { poolSize?: number } = {}): Promise<PostgresStore> {
  const sql = new SQL({ url, bigint: true, max: o.poolSize ?? POOL_SIZE, connectionTimeout: 10, idleTimeout: 60 } as ConstructorParameters<typeof SQL>[0]);
  try {
    await migratePostgres(sql);
  } catch (err) {
    await sql.close().catch(() => {});
    throw err;
  }
  const db = kyselyOver(sql);
  let closed = false;
  return {
    engine: "postgres",
    db,
    sql,
    url,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy(); // ends the SQL pool too
    },
  };
}

function kyselyOver(sql: SQL): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresJSDialect({ postgres: numbersForBigInts(sql) as never }) });
}

/**
 * A few connections of their own to the store's database, for work that must not wait behind a
 * busy main pool: the cluster's lease renewals (README "Several instances"), whose lateness would
 * cost an instance its leadership. The schema is the store's; nothing is migrated here.
 */
export function openSidePool(store: PostgresStore, max: number): { db: Kysely<DB>; close(): Promise<void> } {
  const sql = new SQL({ url: store.url, bigint: true, max, connectionTimeout: 5, idleTimeout: 60 } as ConstructorParameters<typeof SQL>[0]);
  const db = kyselyOver(sql);
  return { db, close: () => db.destroy() };
}

async function migratePostgres(sql: SQL): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS vigil_schema (version integer NOT NULL)`;
    const rows = (await tx`SELECT version FROM vigil_schema`) as { version: number }[];
    const current = rows[0]?.version ?? 0;
    if (current !== 0 && current < POSTGRES_BASELINE_VERSION) throw new Error(`the database has schema version ${current}, older than any PostgreSQL store Vigil made`);
    if (current > LATEST_SCHEMA_VERSION) {
      throw new Error(`the database has schema version ${current}, newer than this build's ${LATEST_SCHEMA_VERSION}: upgrade Vigil`);
    }
    if (current === LATEST_SCHEMA_VERSION) return;
    if (current !== 0) {
      for (const m of POSTGRES_MIGRATIONS) if (m.version > current) await tx.unsafe(m.sql);
      await tx`UPDATE vigil_schema SET version = ${LATEST_SCHEMA_VERSION}`;
      return;
    }
    const tables = (await tx`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name <> 'vigil_schema'`) as { n: number }[];
    if (tables[0]!.n > 0) throw new Error("the database is not empty and holds no Vigil schema: give Vigil a database of its own");
    await tx.unsafe(schemaSql);
    await tx`INSERT INTO vigil_schema (version) VALUES (${LATEST_SCHEMA_VERSION})`;
  });
}
