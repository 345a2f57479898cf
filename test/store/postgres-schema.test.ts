/**
 * schema.postgres.sql against schema.sql: on a real PostgreSQL, a fresh store has exactly the
 * tables and columns a fresh SQLite store has (but for what has another form there: SQLite's FTS
 * table of the search, whose counterpart is pg_trgm indexes, and the ping journal), with types that
 * hold the same values, the same nullability, defaults and primary keys, and indexes on the same
 * columns. So a query Kysely builds reads the same rows on both engines.
 */
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { sql } from "kysely";
import { openStore } from "../../src/store/database.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { LATEST_SCHEMA_VERSION, POSTGRES_MIGRATIONS } from "../../src/store/migrations/index.ts";
import type { PostgresStore } from "../../src/store/database.ts";
import { postgresAvailable, startPostgres, type PostgresServer } from "../helpers/postgres.ts";
import { tempDir } from "../helpers/server.ts";

/** SQLite tables with another form on PostgreSQL (the search's FTS5 table and its shadow tables, the ping journal). */
const SQLITE_ONLY = (t: string) => t.startsWith("monitors_search") || t === "ping_journal";
/** PostgreSQL's own: the schema version (SQLite keeps it in user_version). */
const POSTGRES_ONLY = new Set(["vigil_schema"]);
/** PostgreSQL's counterparts of the FTS table: trigram indexes, which SQLite has no form of. */
const POSTGRES_ONLY_INDEXES = new Set(["monitors_name_trgm", "monitors_target_trgm"]);

/** The PostgreSQL types that hold what each SQLite declared type holds in our schema. */
const COMPATIBLE: Record<string, string[]> = {
  INTEGER: ["bigint", "smallint", "integer"],
  TEXT: ["text"],
  BLOB: ["bytea"],
  REAL: ["double precision"],
};

interface Column {
  type: string;
  notNull: boolean;
  default: string | null;
  pk: number;
}

interface Index {
  table: string;
  columns: string[];
  unique: boolean;
  partial: string | null;
}

/** A default as both engines can be compared on: no casts, no parentheses, no quotes. */
const normalDefault = (d: string | null) => (d === null ? null : d.replace(/::[a-z ]+/g, "").replace(/[()']/g, "").trim());
/** A partial index's condition with the punctuation each engine adds taken out. */
const normalPredicate = (p: string | null) => (p === null ? null : p.replace(/::[a-z ]+/g, "").replace(/[()']/g, "").replace(/\s+/g, " ").trim().toLowerCase());

function sqliteSchema(db: Database) {
  const tables = (db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((t) => t.name).filter((t) => !SQLITE_ONLY(t));
  const columns: Record<string, Record<string, Column>> = {};
  const indexes: Record<string, Index> = {};
  const constraintIndexes: string[] = [];
  for (const table of tables) {
    columns[table] = {};
    for (const c of db.query(`PRAGMA table_info(${table})`).all() as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[]) {
      // a primary key column is NOT NULL on PostgreSQL by definition; on SQLite an INTEGER one is the
      // rowid, and Vigil never writes NULL into another (SQLite's old quirk would let it)
      columns[table][c.name] = { type: c.type, notNull: c.notnull === 1 || c.pk > 0, default: normalDefault(c.dflt_value), pk: c.pk };
    }
    for (const i of db.query(`PRAGMA index_list(${table})`).all() as { name: string; unique: number; origin: string; partial: number }[]) {
      const cols = (db.query(`PRAGMA index_info(${i.name})`).all() as { seqno: number; name: string }[]).sort((a, b) => a.seqno - b.seqno).map((c) => c.name);
      if (i.origin === "pk") continue; // primary keys are compared with the columns
      if (i.origin === "u") {
        constraintIndexes.push(`${table}(${cols.join(", ")}) unique`);
        continue;
      }
      const where = (db.query("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(i.name) as { sql: string }).sql.match(/\bWHERE\s+(.*)$/is)?.[1] ?? null;
      indexes[i.name] = { table, columns: cols, unique: i.unique === 1, partial: normalPredicate(where) };
    }
  }
  return { tables, columns, indexes, constraintIndexes: constraintIndexes.sort() };
}

async function postgresSchema(store: PostgresStore) {
  const db = store.db;
  const tables = (await sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(db)).rows
    .map((t) => t.table_name)
    .filter((t) => !POSTGRES_ONLY.has(t));
  const columns: Record<string, Record<string, Column>> = {};
  const cols = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null; is_identity: string }>`
    SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`.execute(db);
  const pks = await sql<{ table_name: string; column_name: string; position: number }>`
    SELECT tc.table_name, kcu.column_name, kcu.ordinal_position AS position
    FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
    WHERE tc.table_schema = current_schema() AND tc.constraint_type = 'PRIMARY KEY'`.execute(db);
  const pkOf = new Map(pks.rows.map((p) => [`${p.table_name}.${p.column_name}`, p.position]));
  for (const c of cols.rows) {
    if (POSTGRES_ONLY.has(c.table_name)) continue;
    (columns[c.table_name] ??= {})[c.column_name] = { type: c.data_type, notNull: c.is_nullable === "NO", default: normalDefault(c.column_default), pk: pkOf.get(`${c.table_name}.${c.column_name}`) ?? 0 };
  }
  const idx = await sql<{ table: string; name: string; columns: string[]; unique: boolean; primary: boolean; constraint: boolean; partial: string | null }>`
    SELECT t.relname AS table, i.relname AS name,
      array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns,
      x.indisunique AS unique, x.indisprimary AS primary,
      EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid) AS constraint,
      pg_get_expr(x.indpred, x.indrelid) AS partial
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace s ON s.oid = t.relnamespace
    WHERE s.nspname = current_schema() ORDER BY i.relname`.execute(db);
  const indexes: Record<string, Index> = {};
  const constraintIndexes: string[] = [];
  for (const i of idx.rows) {
    if (POSTGRES_ONLY.has(i.table) || i.primary || POSTGRES_ONLY_INDEXES.has(i.name)) continue;
    if (i.constraint) constraintIndexes.push(`${i.table}(${i.columns.join(", ")}) unique`);
    else indexes[i.name] = { table: i.table, columns: i.columns, unique: i.unique, partial: normalPredicate(i.partial) };
  }
  return { tables, columns, indexes, constraintIndexes: constraintIndexes.sort() };
}

describe.skipIf(!postgresAvailable("PostgreSQL schema test"))("schema.postgres.sql matches schema.sql", () => {
  let pg: PostgresServer;
  let lite: ReturnType<typeof sqliteSchema>;
  let post: Awaited<ReturnType<typeof postgresSchema>>;
  const dir = tempDir("vigil-pg-schema-");

  beforeAll(async () => {
    pg = (await startPostgres())!;
    const sqlite = openStore(dir);
    lite = sqliteSchema(sqlite.sqlite);
    await sqlite.close();
    const store = await openPostgresStore(await pg.createDatabase(), { poolSize: 2 });
    post = await postgresSchema(store);
    // the extension the search indexes need is there, and serves them
    expect((await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'`.execute(store.db)).rows[0]!.n).toBe(1);
    await store.close();
  });
  afterAll(async () => {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the same tables", () => {
    expect(post.tables).toEqual(lite.tables);
  });

  test("the same columns, in compatible types, with the same nullability, defaults and primary keys", () => {
    for (const table of lite.tables) {
      const want = lite.columns[table]!;
      const got = post.columns[table] ?? {};
      expect({ table, columns: Object.keys(got) }).toEqual({ table, columns: Object.keys(want) });
      for (const [name, c] of Object.entries(want)) {
        const p = got[name]!;
        const at = `${table}.${name}`;
        expect({ at, type: COMPATIBLE[c.type]?.includes(p.type) ? c.type : `${p.type} for ${c.type}` }).toEqual({ at, type: c.type });
        expect({ at, notNull: p.notNull, pk: p.pk }).toEqual({ at, notNull: c.notNull, pk: c.pk });
        // an id's identity on PostgreSQL is its rowid on SQLite: neither has a default to compare
        if (!(c.pk > 0 && c.type === "INTEGER")) expect({ at, default: p.default }).toEqual({ at, default: c.default });
      }
    }
  });

  test("the same indexes on the same columns, unique and partial alike", () => {
    expect(post.indexes).toEqual(lite.indexes);
    expect(post.constraintIndexes).toEqual(lite.constraintIndexes);
  });

  test("a version 23 database migrates to the same schema as a fresh one (024: the new monitor types' columns)", async () => {
    const url = await pg.createDatabase();
    // a database as version 23 left it: the fresh schema without what 024 adds
    const old = await openPostgresStore(url, { poolSize: 1 });
    // what 024 and every later migration add: their columns and tables, taken off again
    const later = POSTGRES_MIGRATIONS.filter((m) => m.version >= 24).map((m) => m.sql).join("\n");
    const added = [...later.matchAll(/ALTER TABLE (\w+) ADD COLUMN (\w+)/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(added).toContainEqual(["monitors", "db_password_enc"]);
    await old.db.insertInto("accounts").values({ name: "old", plan: "pro", created_at: 1 }).execute();
    for (const [table, column] of added) await sql.raw(`ALTER TABLE ${table} DROP COLUMN ${column}`).execute(old.db);
    // and without the indexes and tables those migrations create
    for (const m of POSTGRES_MIGRATIONS.filter((m) => m.version >= 24).reverse()) {
      for (const [, name] of m.sql.matchAll(/CREATE (?:UNIQUE )?INDEX (\w+)/g)) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(old.db);
      for (const [, name] of [...m.sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g)].reverse()) await sql.raw(`DROP TABLE IF EXISTS ${name} CASCADE`).execute(old.db);
      // and with the names those migrations changed, as they were
      for (const [, table, kind, from, to] of m.sql.matchAll(/ALTER TABLE (\w+) RENAME (COLUMN|CONSTRAINT) (\w+) TO (\w+)/g)) await sql.raw(`ALTER TABLE ${table} RENAME ${kind} ${to} TO ${from}`).execute(old.db);
    }
    await sql.raw("INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at) SELECT id, 'web', 'http', 'https://example.com/', 60, 5000, 1, 1 FROM accounts").execute(old.db);
    // a custom domain an older build served unproven: kept as asked for, not serving (037)
    await sql.raw("INSERT INTO status_pages (account_id, name, slug, custom_domain, created_at, updated_at) SELECT id, 'Old', 'old', 'status.old.test', 1, 1 FROM accounts").execute(old.db);
    await sql`UPDATE vigil_schema SET version = 23`.execute(old.db);
    await old.close();

    const store = await openPostgresStore(url, { poolSize: 2 });
    try {
      expect((await postgresSchema(store)).columns).toEqual(post.columns);
      expect(await store.db.selectFrom("monitors").selectAll().executeTakeFirstOrThrow()).toMatchObject({ name: "web", grpc_tls: 0, db_tls: 0, db_password_enc: null, domain_expires_at: null });
      const page = await store.db.selectFrom("status_pages").selectAll().executeTakeFirstOrThrow();
      expect(page).toMatchObject({ custom_domain: "status.old.test", verified_domain: null, custom_domain_verified_at: null });
      expect(page.custom_domain_token).toMatch(/^[0-9a-f]{32}$/);
      // the unique constraint followed the column
      await store.db.updateTable("status_pages").set({ verified_domain: "status.old.test" }).execute();
      await expect(sql.raw("INSERT INTO status_pages (account_id, name, slug, verified_domain, created_at, updated_at) SELECT id, 'Twin', 'twin', 'status.old.test', 1, 1 FROM accounts").execute(store.db)).rejects.toThrow(/status_pages_verified_domain_key/);
      expect((await sql<{ version: number }>`SELECT version FROM vigil_schema`.execute(store.db)).rows[0]!.version).toBe(LATEST_SCHEMA_VERSION);
    } finally {
      await store.close();
    }
  });
});
