/**
 * A Vigil database copied from one engine to the other, table by table and a batch of rows at a
 * time, so memory stays bounded whatever the size of `checks`: SQLite into an empty PostgreSQL
 * database (`vigil migrate`, `vigil restore --database-url`) and PostgreSQL into a new SQLite file
 * (`vigil backup --database-url`). README, "Moving to PostgreSQL" and "Backup and restore".
 *
 * Rows keep their ids; each identity counter is set past the highest id either engine handed out,
 * so an id is never handed out twice. The reading side is one snapshot (a read transaction on
 * SQLite, REPEATABLE READ on PostgreSQL) and the writing side one transaction: a copy that fails
 * leaves the target as empty as it was. The row counts of every table are compared at the end.
 */
import { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { MIGRATION_LOCK } from "./postgres.ts";

/** Every table both engines have, each after the tables its rows refer to. */
export const COPIED_TABLES = [
  "accounts",
  "monitor_groups",
  "api_tokens",
  "peers",
  "peer_accounts",
  "monitors",
  "monitor_region_states",
  "checks",
  "check_blocks",
  "check_rollups",
  "incidents",
  "monitor_events",
  "heartbeat_epoch",
  "status_pages",
  "status_page_monitors",
  "notification_channels",
  "monitor_channels",
  "monitor_dependencies",
  "monitor_escalation_channels",
  "alerts",
  "alert_attempts",
  "incident_followups",
  "users",
  "sessions",
  "spool",
  "kv",
  "maintenance_windows",
  "maintenance_window_monitors",
  "monitor_tags",
  "status_page_updates",
  "status_page_update_monitors",
  "status_page_subscribers",
  "status_mail_queue",
  "status_mail_changes",
] as const;

/**
 * What one engine has and the other does not: SQLite's ping journal table (folded before a copy,
 * PostgreSQL writes pings directly), its AUTOINCREMENT counters (read for the identity counters) and
 * its FTS5 search index over monitors (PostgreSQL searches with pg_trgm indexes; SQLite's triggers
 * rebuild it as monitors are inserted); PostgreSQL's schema version table.
 */
const SQLITE_ONLY = /^(ping_journal|sqlite_sequence|monitors_search(_.+)?)$/;
const POSTGRES_ONLY = new Set(["vigil_schema"]);
/**
 * The membership and leases of running instances (README "Several instances"): a copy is made with
 * the servers stopped, and the instances that start on it register afresh, so these are not copied.
 */
const LIVE_ONLY = new Set(["instances", "leases"]);
/** rows the schema files insert themselves: the copy replaces them with the source's */
const SEEDED = new Set<string>(["heartbeat_epoch"]);

/**
 * Rows a batch: read, sent as one INSERT of one array per column (unnest), and written while the
 * next batch is read. A few megabytes at most, whatever the table.
 */
const BATCH_ROWS = 2000;

export interface TableShape {
  name: string;
  columns: string[];
  /** each column's PostgreSQL type (int8, int2, text, bytea) */
  types: string[];
  /** the primary key's columns: the order rows are read in */
  key: string[];
  /** the table's ids come from an identity counter (an AUTOINCREMENT table on SQLite) */
  identity: boolean;
}

export interface CopyProgress {
  table: string;
  copied: number;
  total: number;
}

export interface CopyOptions {
  /** after each batch */
  onProgress?: (p: CopyProgress) => void;
}

export interface CopyReport {
  /** per table, in copy order: rows in the source's snapshot and in the target after the commit */
  tables: { name: string; source: number; target: number }[];
  /** text values holding NUL characters, which PostgreSQL's text cannot store: written with U+FFFD in their place */
  nulReplaced: number;
}

/** The tables whose row counts differ between source and target. */
export function countMismatches(report: CopyReport): CopyReport["tables"] {
  return report.tables.filter((t) => t.source !== t.target);
}

/** The target database already holds Vigil data; the copy goes into an empty one only. */
export class TargetNotEmptyError extends Error {
  constructor(readonly tables: { name: string; rows: number }[]) {
    super(`the database already holds data (${tables.map((t) => `${t.name}: ${t.rows} rows`).join(", ")})`);
  }
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Reads one SQL statement's rows on PostgreSQL, BigInts as numbers (ids and epoch-ms times stay far below 2^53). */
async function pgRows(sql: SQL, text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const rows = (await sql.unsafe(text, params as never[])) as Record<string, unknown>[];
  for (const row of rows) for (const k in row) if (typeof row[k] === "bigint") row[k] = Number(row[k]);
  return rows;
}

/** The copied tables as PostgreSQL's catalog describes them; refuses a table this build does not know to copy. */
export async function postgresShapes(sql: SQL): Promise<TableShape[]> {
  const cols = await pgRows(
    sql,
    `SELECT c.table_name AS t, c.column_name AS c, c.udt_name AS type, c.is_identity AS ident
       FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const keys = await pgRows(
    sql,
    `SELECT i.indrelid::regclass::text AS t, a.attname AS c
       FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
      WHERE i.indisprimary AND i.indrelid::regclass::text = ANY ($1)
      ORDER BY array_position(i.indkey, a.attnum)`,
    [COPIED_TABLES as unknown as string[]],
  );
  const byTable = new Map<string, TableShape>();
  for (const r of cols) {
    const name = r.t as string;
    if (POSTGRES_ONLY.has(name) || LIVE_ONLY.has(name)) continue;
    if (!(COPIED_TABLES as readonly string[]).includes(name)) throw new Error(`table ${name} is not one this build of Vigil copies: is the database newer than this build?`);
    const shape = byTable.get(name) ?? byTable.set(name, { name, columns: [], types: [], key: [], identity: false }).get(name)!;
    shape.columns.push(r.c as string);
    shape.types.push(r.type as string);
    if (r.ident === "YES") shape.identity = true;
  }
  for (const r of keys) byTable.get(r.t as string)?.key.push(r.c as string);
  return COPIED_TABLES.map((name) => {
    const shape = byTable.get(name);
    if (!shape) throw new Error(`the database has no table ${name}: it is not at this build's schema`);
    return shape;
  });
}

/** Checks that an SQLite database has the same tables and columns as `shapes` (the schema files are kept in step). */
export function checkSqliteShapes(sqlite: Database, shapes: readonly TableShape[]): void {
  const tables = (sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
  for (const t of tables) {
    if (!SQLITE_ONLY.test(t) && !LIVE_ONLY.has(t) && !(COPIED_TABLES as readonly string[]).includes(t)) throw new Error(`table ${t} of the SQLite database is not one this build of Vigil copies`);
  }
  for (const shape of shapes) {
    const columns = (sqlite.query(`PRAGMA table_info(${q(shape.name)})`).all() as { name: string }[]).map((c) => c.name);
    const missing = shape.columns.filter((c) => !columns.includes(c));
    const extra = columns.filter((c) => !shape.columns.includes(c));
    if (missing.length || extra.length) {
      throw new Error(`table ${shape.name} differs between the engines' schemas (${[...missing.map((c) => `no ${c} on SQLite`), ...extra.map((c) => `no ${c} on PostgreSQL`)].join(", ")})`);
    }
  }
}

/** The copied tables of a PostgreSQL database that hold rows, the seeded one aside; empty when the database is empty. */
export async function postgresTablesWithRows(sql: SQL): Promise<{ name: string; rows: number }[]> {
  const found: { name: string; rows: number }[] = [];
  for (const t of COPIED_TABLES) {
    if (SEEDED.has(t)) continue;
    const [row] = await pgRows(sql, `SELECT count(*) AS n FROM ${q(t)}`);
    if ((row!.n as number) > 0) found.push({ name: t, rows: row!.n as number });
  }
  return found;
}

/**
 * Copies the SQLite database file at `sqlitePath` (opened here, closed after) into the PostgreSQL
 * database behind `sql`, which must have this build's schema and no rows. The ping journal table
 * must be empty (its pings folded first). Holds the schema lock PostgreSQL instances take at
 * start-up until the copy commits, so an instance started meanwhile waits and then finds the whole
 * copy.
 */
export async function copySqliteToPostgres(sqlitePath: string, sql: SQL, o: CopyOptions = {}): Promise<CopyReport> {
  const sqlite = new Database(sqlitePath);
  try {
    return await copyOpenSqliteToPostgres(sqlite, sql, o);
  } finally {
    sqlite.close();
  }
}

async function copyOpenSqliteToPostgres(sqlite: Database, sql: SQL, o: CopyOptions): Promise<CopyReport> {
  const journaled = (sqlite.query("SELECT count(*) AS n FROM ping_journal").get() as { n: number }).n;
  if (journaled > 0) throw new Error(`the SQLite database carries ${journaled} pings not folded yet: open it with vigil serve once, or fold them first`);
  const shapes = await postgresShapes(sql);
  checkSqliteShapes(sqlite, shapes);
  let nulReplaced = 0;
  const totals = new Map<string, number>();
  sqlite.exec("BEGIN"); // one snapshot for the counts and every row
  try {
    for (const s of shapes) totals.set(s.name, (sqlite.query(`SELECT count(*) AS n FROM ${q(s.name)}`).get() as { n: number }).n);
    const counters = new Map((sqlite.query("SELECT name, seq FROM sqlite_sequence").all() as { name: string; seq: number }[]).map((r) => [r.name, r.seq]));
    await sql.begin(async (tx) => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      const taken = await postgresTablesWithRows(tx as unknown as SQL);
      if (taken.length > 0) throw new TargetNotEmptyError(taken);
      for (const t of SEEDED) await tx.unsafe(`DELETE FROM ${q(t)}`);
      for (const shape of shapes) {
        const total = totals.get(shape.name)!;
        const insert = insertSql(shape);
        const width = shape.columns.length;
        let arrays: unknown[][] = shape.columns.map(() => []);
        let rows = 0;
        let copied = 0;
        let writing: Promise<unknown> | null = null;
        const flush = async () => {
          await writing; // one batch in flight; the next one is read meanwhile
          const batch = arrays;
          const n = rows;
          writing = tx.unsafe(insert, batch as never[]).then(() => {
            copied += n;
            o.onProgress?.({ table: shape.name, copied, total });
          });
          // its failure is thrown at the next await of it; until then it must not count as unhandled
          writing.catch(() => {});
          arrays = shape.columns.map(() => []);
          rows = 0;
        };
        // rowid (or, WITHOUT ROWID, key) order: PostgreSQL's indexes are filled in order
        // (iterate: a row at a time; values() would read the whole table into memory)
        for (const row of sqlite.query(`SELECT ${shape.columns.map(q).join(", ")} FROM ${q(shape.name)}`).iterate() as Iterable<Record<string, unknown>>) {
          for (let c = 0; c < width; c++) {
            let v = row[shape.columns[c]!];
            if (typeof v === "string" && v.includes("\0")) {
              v = v.replaceAll("\0", "\uFFFD");
              nulReplaced++;
            }
            arrays[c]!.push(v);
          }
          if (++rows === BATCH_ROWS) await flush();
        }
        if (rows > 0) await flush();
        await writing;
        if (copied === 0) o.onProgress?.({ table: shape.name, copied, total });
        if (shape.identity) {
          const [max] = await pgRows(tx as unknown as SQL, `SELECT coalesce(max(id), 0) AS n FROM ${q(shape.name)}`);
          const top = Math.max(max!.n as number, counters.get(shape.name) ?? 0);
          if (top > 0) await tx.unsafe("SELECT setval(pg_get_serial_sequence($1, 'id'), $2)", [shape.name, top] as never[]);
        }
      }
    });
  } finally {
    sqlite.exec("COMMIT");
  }
  const tables: CopyReport["tables"] = [];
  for (const s of shapes) {
    const [row] = await pgRows(sql, `SELECT count(*) AS n FROM ${q(s.name)}`);
    tables.push({ name: s.name, source: totals.get(s.name)!, target: row!.n as number });
  }
  return { tables, nulReplaced };
}

/**
 * VACUUM (ANALYZE) of every table a copy filled. A fresh copy has no planner statistics and no
 * visibility map until autovacuum comes round (a minute or more later), and until then PostgreSQL
 * plans the monitor list of a 100,000-monitor account as if it held a hundred rows, and every count
 * reads the heap (BENCHMARKS.md, "API on PostgreSQL"). Outside any transaction, as VACUUM must be.
 */
export async function analyzeCopied(sql: SQL): Promise<void> {
  for (const shape of await postgresShapes(sql)) await sql.unsafe(`VACUUM (ANALYZE) ${q(shape.name)}`);
}

/** INSERT INTO t (cols) SELECT * FROM unnest($1::type[], …): one parameter per column, whatever the rows. */
function insertSql(shape: TableShape): string {
  const arrays = shape.types.map((t, i) => `$${i + 1}::${t}[]`).join(", ");
  return `INSERT INTO ${q(shape.name)} (${shape.columns.map(q).join(", ")}) SELECT * FROM unnest(${arrays})`;
}

/**
 * Copies the PostgreSQL database behind `sql` into `target`, an SQLite database with this build's
 * schema and no rows, from one REPEATABLE READ snapshot: instances keep writing meanwhile, and the
 * copy is the database as it was at one moment. The caller commits nothing: the copy is one
 * transaction of `target`'s, committed here.
 */
export async function copyPostgresToSqlite(sql: SQL, target: Database, o: CopyOptions = {}): Promise<CopyReport> {
  const totals = new Map<string, number>();
  const shapes = await sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    const txSql = tx as unknown as SQL;
    const shapes = await postgresShapes(txSql);
    checkSqliteShapes(target, shapes);
    for (const s of shapes) totals.set(s.name, (await pgRows(txSql, `SELECT count(*) AS n FROM ${q(s.name)}`))[0]!.n as number);
    target.exec("BEGIN");
    try {
      for (const t of SEEDED) target.exec(`DELETE FROM ${q(t)}`);
      // Secondary indexes are built once the rows are in: filled row by row, an index on
      // (monitor_id, checked_at) takes checks in id order at a thousand places at once, and past
      // the page cache every row cost a random read (BENCHMARKS.md, "Moving between engines").
      const indexes = target.query("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() as { name: string; sql: string }[];
      for (const i of indexes) target.exec(`DROP INDEX ${q(i.name)}`);
      for (const shape of shapes) {
        const total = totals.get(shape.name)!;
        const list = shape.columns.map(q).join(", ");
        const insert = target.prepare(`INSERT INTO ${q(shape.name)} (${list}) VALUES (${shape.columns.map(() => "?").join(", ")})`);
        // in key order: SQLite appends rows and index entries instead of inserting them anywhere
        await tx.unsafe(`DECLARE vigil_copy NO SCROLL CURSOR FOR SELECT ${list} FROM ${q(shape.name)} ORDER BY ${shape.key.map(q).join(", ")}`);
        let copied = 0;
        for (;;) {
          const rows = await pgRows(txSql, `FETCH FORWARD ${BATCH_ROWS} FROM vigil_copy`);
          if (rows.length === 0) break;
          for (const row of rows) insert.run(...(shape.columns.map((c) => row[c]) as never[]));
          copied += rows.length;
          o.onProgress?.({ table: shape.name, copied, total });
        }
        if (copied === 0) o.onProgress?.({ table: shape.name, copied, total });
        await tx.unsafe("CLOSE vigil_copy");
        insert.finalize();
      }
      for (const i of indexes) target.exec(i.sql);
      // AUTOINCREMENT counters past every id PostgreSQL handed out, deleted rows' included
      for (const shape of shapes.filter((s) => s.identity)) {
        const [{ s: sequence }] = (await pgRows(txSql, "SELECT pg_get_serial_sequence($1, 'id') AS s", [shape.name])) as [{ s: string }];
        const [counter] = await pgRows(txSql, `SELECT last_value AS n, is_called AS used FROM ${sequence}`);
        if (!counter!.used) continue;
        const seq = counter!.n as number;
        const updated = target.query("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?").run(seq, shape.name);
        if (updated.changes === 0) target.query("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)").run(shape.name, seq);
      }
      target.exec("COMMIT");
    } catch (err) {
      if (target.inTransaction) target.exec("ROLLBACK");
      throw err;
    }
    return shapes;
  });
  const tables = shapes.map((s) => ({ name: s.name, source: totals.get(s.name)!, target: (target.query(`SELECT count(*) AS n FROM ${q(s.name)}`).get() as { n: number }).n }));
  return { tables, nulReplaced: 0 };
}
