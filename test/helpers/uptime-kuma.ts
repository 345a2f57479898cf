/**
 * Builds an Uptime Kuma database the way Kuma does, from Kuma's own files in
 * test/fixtures/uptime-kuma (NOTE.md there says where they come from): the template kuma.db, the
 * numbered patches, the named patches in Kuma's order and, for 2.x, the knex migrations run by knex.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import knexFactory, { type Knex } from "knex";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "uptime-kuma");

/** Database.patchList of Kuma's server/database.js (the same in 1.23.17 and 2.x), in its order. */
const PATCH_LIST = [
  "patch-setting-value-type.sql", "patch-improve-performance.sql", "patch-2fa.sql", "patch-add-retry-interval-monitor.sql", "patch-incident-table.sql",
  "patch-group-table.sql", "patch-monitor-push_token.sql", "patch-http-monitor-method-body-and-headers.sql", "patch-2fa-invalidate-used-token.sql",
  "patch-notification_sent_history.sql", "patch-monitor-basic-auth.sql", "patch-add-docker-columns.sql", "patch-status-page.sql", "patch-proxy.sql",
  "patch-monitor-expiry-notification.sql", "patch-status-page-footer-css.sql", "patch-added-mqtt-monitor.sql", "patch-add-clickable-status-page-link.sql",
  "patch-add-sqlserver-monitor.sql", "patch-add-other-auth.sql", "patch-grpc-monitor.sql", "patch-add-radius-monitor.sql", "patch-monitor-add-resend-interval.sql",
  "patch-ping-packet-size.sql", "patch-maintenance-table2.sql", "patch-add-gamedig-monitor.sql", "patch-add-google-analytics-status-page-tag.sql",
  "patch-http-body-encoding.sql", "patch-add-description-monitor.sql", "patch-api-key-table.sql", "patch-monitor-tls.sql", "patch-maintenance-cron.sql",
  "patch-add-parent-monitor.sql", "patch-add-invert-keyword.sql", "patch-added-json-query.sql", "patch-added-kafka-producer.sql",
  "patch-add-certificate-expiry-status-page.sql", "patch-monitor-oauth-cc.sql", "patch-add-timeout-monitor.sql", "patch-add-gamedig-given-port.sql",
  "patch-notification-config.sql", "patch-fix-kafka-producer-booleans.sql", "patch-timeout.sql", "patch-monitor-tls-info-add-fk.sql",
];

/** Kuma's Database.importSQLFile: drop "--" lines, split on ";", run each statement. */
function importSqlFile(db: Database, file: string): void {
  const text = readFileSync(file, "utf8").split("\n").filter((l) => !l.startsWith("--")).join("\n");
  for (const statement of text.split(";").map((s) => s.trim()).filter((s) => s !== "")) db.run(statement);
}

/**
 * What patch-monitor-tls-info-add-fk.sql does (adds the foreign key to monitor_tls_info's
 * monitor_id) by SQLite's table rebuild, since Bun's SQLite refuses writable_schema edits.
 */
function addTlsInfoForeignKey(db: Database): void {
  db.run("BEGIN");
  db.run("CREATE TABLE monitor_tls_info_new (id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, monitor_id INTEGER NOT NULL REFERENCES [monitor] ([id]) ON DELETE CASCADE ON UPDATE CASCADE, info_json TEXT)");
  db.run("INSERT INTO monitor_tls_info_new SELECT id, monitor_id, info_json FROM monitor_tls_info");
  db.run("DROP TABLE monitor_tls_info");
  db.run("ALTER TABLE monitor_tls_info_new RENAME TO monitor_tls_info");
  db.run("COMMIT");
}

/** Kuma's SQLite patches on a copy of the template: the schema of a 1.23 database, and what 2.x starts from. */
function applyPatches(path: string, template: string, dir: string): void {
  copyFileSync(template, path);
  const db = new Database(path);
  try {
    for (let i = 1; i <= 10; i++) importSqlFile(db, join(dir, `patch${i}.sql`));
    db.run("INSERT INTO setting (key, value, type) VALUES ('database_version', '10', NULL)");
    for (const f of PATCH_LIST) {
      if (f === "patch-monitor-tls-info-add-fk.sql") addTlsInfoForeignKey(db);
      else importSqlFile(db, join(dir, f));
    }
    db.run("INSERT INTO setting (key, value, type) VALUES ('databasePatchedFiles', ?, NULL)", [JSON.stringify(Object.fromEntries(PATCH_LIST.map((f) => [f, true])))]);
  } finally {
    db.close();
  }
}

/** node-sqlite3's Database, as knex's SQLite dialect drives it, over bun:sqlite. */
const bindings = (b: unknown[] | undefined) => (b ?? []).map((v) => (v instanceof Date ? v.getTime() : v === undefined ? null : v)) as never[];
class Sqlite3Shim {
  private readonly db: Database;
  constructor(file: string, _flags: number, done: (err: Error | null) => void) {
    this.db = new Database(file);
    queueMicrotask(() => done(null));
  }
  run(sql: string, b: unknown[], done: (this: { lastID: number; changes: number }, err: Error | null) => void) {
    let r;
    try {
      r = this.db.query(sql).run(...bindings(b));
    } catch (err) {
      return done.call({ lastID: 0, changes: 0 }, err as Error);
    }
    done.call({ lastID: Number(r.lastInsertRowid), changes: r.changes }, null);
  }
  all(sql: string, b: unknown[], done: (err: Error | null, rows?: unknown[]) => void) {
    let rows;
    try {
      rows = this.db.query(sql).all(...bindings(b));
    } catch (err) {
      return done(err as Error);
    }
    done(null, rows);
  }
  close(done: (err: Error | null) => void) {
    this.db.close();
    done(null);
  }
}

/** Kuma 2.x's knex migrations, run by knex as Kuma runs them (foreign keys off meanwhile). */
async function runKnexMigrations(path: string, dir: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const Dialect = require("knex/lib/dialects/sqlite3/index.js");
  class BunSqliteDialect extends Dialect {
    _driver() {
      return { Database: Sqlite3Shim, OPEN_READWRITE: 2, OPEN_CREATE: 4 };
    }
  }
  const files = readdirSync(dir).filter((f) => f.endsWith(".js")).sort();
  // one migration reads Kuma's tldts and extra/rdap-dns.json for rows an empty database has none of
  const stubs: Record<string, unknown> = { tldts: { parse: () => ({}) }, "../../extra/rdap-dns.json": { services: [] } };
  const load = (f: string) => {
    const module = { exports: {} as Record<string, unknown> };
    const requireStub = (name: string) => {
      if (name in stubs) return stubs[name];
      throw new Error(`migration ${f} requires ${name}, which the test does not provide`);
    };
    new Function("exports", "require", "module", readFileSync(join(dir, f), "utf8"))(module.exports, requireStub, module);
    return module.exports;
  };
  const knex = knexFactory({ client: BunSqliteDialect as unknown as typeof Knex.Client, connection: { filename: path }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
  try {
    await knex.raw("PRAGMA foreign_keys = OFF");
    await knex.migrate.latest({ migrationSource: { getMigrations: async () => files, getMigrationName: (f: string) => f, getMigration: async (f: string) => load(f) as unknown as Knex.Migration } });
  } finally {
    await knex.destroy();
  }
}

export type KumaVersion = "1.23" | "2.x";

/** A new, empty Kuma database of `version` at `path`, built from Kuma's own schema files. */
export async function buildKumaDatabase(version: KumaVersion, path: string): Promise<void> {
  if (version === "1.23") return applyPatches(path, join(FIXTURES, "1.23.17", "kuma.db"), join(FIXTURES, "1.23.17"));
  applyPatches(path, join(FIXTURES, "2.x", "kuma.db"), join(FIXTURES, "2.x", "old_migrations"));
  await runKnexMigrations(path, join(FIXTURES, "2.x", "knex_migrations"));
}
