import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_FILE, openStore } from "../../src/store/database.ts";
import { schemaVersion } from "../../src/store/pragmas.ts";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "../../src/store/migrations/index.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
const fresh = () => {
  const d = tempDir("vigil-store-");
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Tables with their columns (name, type, notnull, default, pk), foreign keys and indexes. */
function describeSchema(db: Database) {
  const tables = db.query("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
  const out: Record<string, unknown> = {};
  for (const { name } of tables) {
    out[name] = {
      columns: db.query(`PRAGMA table_info(${name})`).all(),
      fks: db.query(`PRAGMA foreign_key_list(${name})`).all(),
      indexes: (db.query(`SELECT name, sql FROM sqlite_master WHERE type='index' AND tbl_name=? AND sql IS NOT NULL ORDER BY name`).all(name) as { sql: string }[]).map((i) => ({ ...i, sql: i.sql.replace(/\s+/g, " ") })),
    };
  }
  return out;
}

function databaseAt(version: number): { dir: string; db: Database } {
  const dir = fresh();
  const db = new Database(join(dir, DATABASE_FILE), { create: true });
  for (const m of MIGRATIONS) if (m.version <= version) db.exec(m.sql);
  db.exec(`PRAGMA user_version = ${version}`);
  return { dir, db };
}

// schema.sql and the SQLite migrations, read from SQLite files; postgres-schema.test.ts holds
// PostgreSQL's schema to the same tables, columns and indexes.
describe.skipIf(TEST_ENGINE === "postgres")("schema and migrations", () => {
  test("schema.sql equals the result of every migration applied in order", async () => {
    const store = openStore(fresh());
    const fromSchema = describeSchema(store.sqlite);
    await store.close();
    const { db } = databaseAt(LATEST_SCHEMA_VERSION);
    expect(describeSchema(db)).toEqual(fromSchema);
    db.close();
  });

  test("an older data directory (version 1) upgrades in place and keeps its data", async () => {
    const { dir, db } = databaseAt(1);
    db.exec("INSERT INTO accounts (name, plan, created_at) VALUES ('old', 'pro', 1)");
    db.exec("INSERT INTO api_tokens (account_id, token_hash, scopes, created_at) VALUES (1, 'h', 'monitors:read', 1)");
    expect(() => db.query("SELECT * FROM monitors").all()).toThrow();
    db.close();
    const store = openStore(dir);
    expect(schemaVersion(store.sqlite)).toBe(LATEST_SCHEMA_VERSION);
    const accounts = await store.db.selectFrom("accounts").selectAll().execute();
    expect(accounts.map((a) => a.name)).toEqual(["old"]);
    expect(await store.db.selectFrom("monitors").selectAll().execute()).toEqual([]);
    await store.close();
  });

  test("peers created before account scopes (version 13) keep serving every account; new rows serve none by default", async () => {
    const { dir, db } = databaseAt(13);
    db.exec("INSERT INTO peers (region, token_hash, created_at) VALUES ('eu', 'h1', 1)");
    db.close();
    const store = openStore(dir);
    const [old] = await store.db.selectFrom("peers").selectAll().execute();
    expect(old!.all_accounts).toBe(1);
    await store.db.insertInto("peers").values({ region: "us", token_hash: "h2", created_at: 2 }).execute();
    const fresh = await store.db.selectFrom("peers").selectAll().where("region", "=", "us").executeTakeFirstOrThrow();
    expect(fresh.all_accounts).toBe(0);
    await store.close();
  });

  test("monitors of a version 23 data directory get the new types' columns (024) with their defaults", async () => {
    const { dir, db } = databaseAt(23);
    db.exec("INSERT INTO accounts (name, plan, created_at) VALUES ('old', 'pro', 1)");
    db.exec("INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at) VALUES (1, 'web', 'http', 'https://example.com/', 60, 5000, 1, 1)");
    db.close();
    const store = openStore(dir);
    const m = await store.db.selectFrom("monitors").selectAll().executeTakeFirstOrThrow();
    expect(m).toMatchObject({ name: "web", target: "https://example.com/", ws_send: null, grpc_service: null, grpc_tls: 0, smtp_security: null, db_password_enc: null, db_tls: 0, docker_host: null, domain_expiry_warn_days: null, domain_expires_at: null });
    await store.close();
  });

  test("custom domains of a version 36 data directory wait for their verification (037); queued confirmation mail is dropped", async () => {
    const { dir, db } = databaseAt(36);
    db.exec("INSERT INTO accounts (name, plan, created_at) VALUES ('old', 'pro', 1)");
    db.exec("INSERT INTO status_pages (account_id, name, slug, custom_domain, created_at, updated_at) VALUES (1, 'Old', 'old', 'status.old.test', 1, 1), (1, 'Plain', 'plain', NULL, 1, 1)");
    db.exec("INSERT INTO status_page_subscribers (status_page_id, email, token, confirmed_at, confirm_expires_at, created_at) VALUES (1, 'a@example.com', 't1', NULL, 9, 1), (1, 'b@example.com', 't2', 1, 9, 1)");
    db.exec("INSERT INTO status_mail_queue (subscriber_id, subject, body, link, kind, next_attempt_at, created_at) VALUES (1, 'Confirm', 'x', 'http://evil.example/s/old/confirm?token=t1', 'confirm', 1, 1), (2, 'News', 'y', 'http://localhost:8080/s/old/unsubscribe?token=t2', 'notice', 1, 1)");
    db.close();
    const store = openStore(dir);
    const [old, plain] = await store.db.selectFrom("status_pages").selectAll().orderBy("id").execute();
    expect(old).toMatchObject({ custom_domain: "status.old.test", verified_domain: null, custom_domain_verified_at: null });
    expect(old!.custom_domain_token).toMatch(/^[0-9a-f]{32}$/);
    expect(plain).toMatchObject({ custom_domain: null, verified_domain: null, custom_domain_token: null });
    expect((await store.db.selectFrom("status_mail_queue").select("kind").execute()).map((r) => r.kind)).toEqual(["notice"]);
    await store.close();
  });

  test("a data directory from a newer build is refused with a readable error", () => {
    const { dir, db } = databaseAt(LATEST_SCHEMA_VERSION);
    db.exec(`PRAGMA user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openStore(dir)).toThrow(/newer than this build/);
  });

  test("pragmas: WAL, foreign keys on, busy timeout set", async () => {
    const store = openStore(fresh());
    const get = (p: string) => Object.values(store.sqlite.query(`PRAGMA ${p}`).get() as object)[0];
    expect(get("journal_mode")).toBe("wal");
    expect(get("foreign_keys")).toBe(1);
    expect(get("busy_timeout")).toBe(5000);
    expect(get("synchronous")).toBe(1); // NORMAL
    await store.close();
  });

  test("foreign keys cascade: deleting an account removes its tokens", async () => {
    const store = openStore(fresh());
    store.sqlite.exec("INSERT INTO accounts (name, plan, created_at) VALUES ('a', 'pro', 1)");
    store.sqlite.exec("INSERT INTO api_tokens (account_id, token_hash, scopes, created_at) VALUES (1, 'h', 's', 1)");
    store.sqlite.exec("DELETE FROM accounts");
    expect(await store.db.selectFrom("api_tokens").selectAll().execute()).toEqual([]);
    await store.close();
  });
});
