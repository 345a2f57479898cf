/**
 * The monitor list's ?tag= and ?group_id= filters are answered from indexes on both engines
 * (monitor_tags_account_tag once per tag, monitors_account_group), never by reading every monitor
 * or every tag: the plan each engine makes for the query the API runs is read here. On PostgreSQL
 * sequential scans are switched off for the EXPLAIN, so a plan without one shows an index can serve
 * the query (with a few rows the planner would rightly pick a scan).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CompiledQuery, sql } from "kysely";
import { rmSync } from "node:fs";
import type { Store } from "../../src/store/database.ts";
import { monitorListQuery, type MonitorFilter } from "../../src/store/monitors.ts";
import { openTestStore, TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

let dir: string;
let store: Store;
let accountId: number;
let groupId: number;

beforeAll(async () => {
  dir = tempDir("vigil-filter-plan-");
  store = await openTestStore(dir);
  const db = store.db;
  accountId = (await db.insertInto("accounts").values({ name: "a", plan: "pro", created_at: 1 }).returning("id").executeTakeFirstOrThrow()).id;
  groupId = (await db.insertInto("monitor_groups").values({ account_id: accountId, name: "g", created_at: 1, updated_at: 1 }).returning("id").executeTakeFirstOrThrow()).id;
  for (let i = 0; i < 50; i++) {
    const m = await db
      .insertInto("monitors")
      .values({ account_id: accountId, name: `m${i}`, monitor_type: "http", target: "https://example.com/", interval_sec: 60, timeout_ms: 5000, group_id: i % 2 ? groupId : null, created_at: 1, updated_at: 1 })
      .returning("id")
      .executeTakeFirstOrThrow();
    await db.insertInto("monitor_tags").values([{ monitor_id: m.id, account_id: accountId, tag: `t${i % 5}` }, { monitor_id: m.id, account_id: accountId, tag: "all" }]).execute();
  }
  if (store.engine === "sqlite") store.sqlite.exec("ANALYZE");
  else await sql`ANALYZE`.execute(store.db);
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function plan(f: MonitorFilter): Promise<string> {
  const q = monitorListQuery(store.db, accountId, f)!.selectAll().orderBy("id").limit(25).compile();
  if (store.engine === "sqlite") {
    const rows = store.sqlite.query(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as never[])) as { detail: string }[];
    return rows.map((r) => r.detail).join("\n");
  }
  return store.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    const res = await trx.executeQuery<{ "QUERY PLAN": string }>(CompiledQuery.raw(`EXPLAIN ${q.sql}`, [...q.parameters]));
    return res.rows.map((r) => r["QUERY PLAN"]).join("\n");
  });
}

/** Reading a whole table: SQLite says SCAN <table> (without an index), PostgreSQL Seq Scan on <table>. */
const WHOLE_TABLE = TEST_ENGINE === "sqlite" ? /^SCAN (monitors|monitor_tags)$/m : /Seq Scan on (monitors|monitor_tags)\b/;

test("several tags: each one through monitor_tags_account_tag", async () => {
  const p = await plan({ tags: ["t1", "all"] });
  expect(p).toContain("monitor_tags_account_tag");
  expect(p).not.toMatch(WHOLE_TABLE);
});

test("group_id: through monitors_account_group", async () => {
  const p = await plan({ groupId });
  expect(p).toContain("monitors_account_group");
  expect(p).not.toMatch(WHOLE_TABLE);
});

test("group_id and a tag together", async () => {
  const p = await plan({ groupId, tags: ["t3"] });
  expect(p).toContain("monitor_tags_account_tag");
  expect(p).not.toMatch(WHOLE_TABLE);
});

test("the query finds what the filters say", async () => {
  const names = async (f: MonitorFilter) => (await monitorListQuery(store.db, accountId, f)!.select("name").orderBy("id").execute()).map((r) => r.name);
  expect(await names({ tags: ["t1", "all"] })).toEqual(["m1", "m6", "m11", "m16", "m21", "m26", "m31", "m36", "m41", "m46"]);
  expect(await names({ groupId, tags: ["t1"] })).toEqual(["m1", "m11", "m21", "m31", "m41"]);
});
