/**
 * Migration 033 on the suite's engine: a database from before it (the column dropped, the version
 * set back to 32, and what later migrations add taken off) upgrades in place, and each region's view gets the latency of the check it names
 * when that check row is still there (null when the check had none, or its row is gone).
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { sql } from "kysely";
import { TEST_ENGINE, openTestStore } from "../helpers/engine.ts";
import { MIGRATIONS, POSTGRES_MIGRATIONS } from "../../src/store/migrations/index.ts";
import { tempDir } from "../helpers/server.ts";
import { undoMigrations } from "../helpers/undo-migrations.ts";

const dir = tempDir("vigil-033-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("an older database gets last_latency_ms from the check each region's view names", async () => {
  const before = await openTestStore(dir);
  const db = before.db;
  await sql`ALTER TABLE monitor_region_states DROP COLUMN last_latency_ms`.execute(db);
  // what the migrations after 033 add, taken off too: they run again on the upgrade
  await undoMigrations(db, (TEST_ENGINE === "postgres" ? POSTGRES_MIGRATIONS : MIGRATIONS).filter((m) => m.version > 33), TEST_ENGINE);
  if (TEST_ENGINE === "postgres") await sql`UPDATE vigil_schema SET version = 32`.execute(db);
  else await sql.raw("PRAGMA user_version = 32").execute(db);
  const now = Date.now();
  const account = (await db.insertInto("accounts").values({ name: "a", plan: "pro", created_at: now }).returning("id").executeTakeFirstOrThrow()).id;
  const monitor = (
    await db.insertInto("monitors").values({ account_id: account, name: "m", monitor_type: "http", target: "http://127.0.0.1:9/", interval_sec: 60, timeout_ms: 1000, created_at: now, updated_at: now }).returning("id").executeTakeFirstOrThrow()
  ).id;
  const check = async (latency: number | null) =>
    (await db.insertInto("checks").values({ monitor_id: monitor, region: "local", status: "up", checked_at: now, latency_ms: latency }).returning("id").executeTakeFirstOrThrow()).id;
  const views = { local: await check(42), eu: await check(null), us: 999_999 };
  for (const [region, id] of Object.entries(views)) {
    await sql`INSERT INTO monitor_region_states (monitor_id, region, last_status, last_checked_at, consecutive_down, last_check_id) VALUES (${monitor}, ${region}, 'up', ${now}, 0, ${id})`.execute(db);
  }
  await before.close();

  const after = await openTestStore(dir);
  try {
    const rows = await after.db.selectFrom("monitor_region_states").select(["region", "last_latency_ms"]).orderBy("region").execute();
    expect(rows).toEqual([
      { region: "eu", last_latency_ms: null },
      { region: "local", last_latency_ms: 42 },
      { region: "us", last_latency_ms: null },
    ]);
  } finally {
    await after.close();
  }
});
