/**
 * Migration 030 on a data directory and a database written before groups existed: group ids that
 * named nothing become groups "Group <id>" of their account, and their monitors move to them, so
 * monitors grouped together stay together (README "Groups, tags and status page updates").
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { DATABASE_FILE, openStore, type Store } from "../../src/store/database.ts";
import { MIGRATIONS, POSTGRES_MIGRATIONS } from "../../src/store/migrations/index.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";
import { undoMigrations } from "../helpers/undo-migrations.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Two accounts whose monitors carry group ids from before 030: 7 and 9 in one, 7 in the other. */
const OLD_ROWS = [
  "INSERT INTO accounts (name, plan, created_at) VALUES ('a', 'pro', 1), ('b', 'pro', 1)",
  `INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, group_id, created_at, updated_at) VALUES
    (1, 'a1', 'http', 'https://example.com/', 60, 5000, 7, 1, 1),
    (1, 'a2', 'http', 'https://example.com/', 60, 5000, 7, 1, 1),
    (1, 'a3', 'http', 'https://example.com/', 60, 5000, 9, 1, 1),
    (1, 'a4', 'http', 'https://example.com/', 60, 5000, NULL, 1, 1),
    (2, 'b1', 'http', 'https://example.com/', 60, 5000, 7, 1, 1)`,
];

async function expectRegrouped(store: Store): Promise<void> {
  const groups = await store.db.selectFrom("monitor_groups").select(["id", "account_id", "name", "sort_order"]).orderBy("account_id").orderBy("name").execute();
  expect(groups.map((g) => [Number(g.account_id), g.name, Number(g.sort_order)])).toEqual([
    [1, "Group 7", 0],
    [1, "Group 9", 0],
    [2, "Group 7", 0],
  ]);
  const idOf = (account: number, name: string) => Number(groups.find((g) => Number(g.account_id) === account && g.name === name)!.id);
  const monitors = await store.db.selectFrom("monitors").select(["name", "group_id"]).orderBy("name").execute();
  expect(monitors.map((m) => [m.name, m.group_id === null ? null : Number(m.group_id)])).toEqual([
    ["a1", idOf(1, "Group 7")],
    ["a2", idOf(1, "Group 7")],
    ["a3", idOf(1, "Group 9")],
    ["a4", null],
    ["b1", idOf(2, "Group 7")],
  ]);
}

describe.skipIf(TEST_ENGINE === "postgres")("SQLite: a version 24 data directory", () => {
  test("gets its group ids turned into groups of their accounts", async () => {
    const dir = tempDir("vigil-groups-migration-");
    dirs.push(dir);
    const db = new Database(join(dir, DATABASE_FILE), { create: true });
    for (const m of MIGRATIONS) if (m.version <= 24) db.exec(m.sql);
    db.exec("PRAGMA user_version = 24");
    for (const q of OLD_ROWS) db.exec(q);
    db.close();
    const store = openStore(dir);
    try {
      await expectRegrouped(store);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(TEST_ENGINE === "sqlite")("PostgreSQL: a version 29 database", () => {
  test("gets its group ids turned into groups of their accounts", async () => {
    const url = await (await testCluster()).createDatabase();
    // a database as version 29 left it: the fresh schema without what 030 and later add
    const old = await openPostgresStore(url, { poolSize: 1 });
    await undoMigrations(old.db, POSTGRES_MIGRATIONS.filter((m) => m.version >= 30), "postgres");
    for (const q of OLD_ROWS) await sql.raw(q).execute(old.db);
    await sql`UPDATE vigil_schema SET version = 29`.execute(old.db);
    await old.close();
    const store = await openPostgresStore(url, { poolSize: 2 });
    try {
      await expectRegrouped(store);
    } finally {
      await store.close();
    }
  });
});
