/**
 * fixedQuery (store/fixed-query.ts): a statement compiled once per engine and run with each call's
 * values must give what the same query built by Kysely gives, on either engine, in and out of a
 * transaction; a build that does anything but pass its values into the query is refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { Store } from "../../src/store/database.ts";
import type { AccountsTable } from "../../src/store/tables.ts";
import { changedRows, firstRow, fixedQuery } from "../../src/store/fixed-query.ts";
import { openTestStore } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("vigil-fixed-query-");
let store: Store;
beforeAll(async () => {
  store = await openTestStore(dir);
  for (const [name, plan] of [["a", "free"], ["b", "pro"], ["c", "pro"]] as const) await store.db.insertInto("accounts").values({ name, plan, created_at: 5 }).execute();
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

type Plan = AccountsTable["plan"];

const byPlan = fixedQuery((db, v: { plan: Plan; after: number }) =>
  db.selectFrom("accounts").select(["name", "plan"]).where("plan", "=", v.plan).where("created_at", ">", v.after).where("name", "!=", "zzz").orderBy("name"),
);

test("each call binds its own values; constants of the query stay", async () => {
  expect((await byPlan(store.db, { plan: "pro", after: 0 })).rows).toEqual([{ name: "b", plan: "pro" }, { name: "c", plan: "pro" }]);
  expect((await byPlan(store.db, { plan: "free", after: 0 })).rows).toEqual([{ name: "a", plan: "free" }]);
  expect((await byPlan(store.db, { plan: "pro", after: 5 })).rows).toEqual([]);
  // the same as the query built and compiled by Kysely for those values
  const built = await store.db.selectFrom("accounts").select(["name", "plan"]).where("plan", "=", "pro").where("created_at", ">", 0).where("name", "!=", "zzz").orderBy("name").execute();
  expect((await byPlan(store.db, { plan: "pro", after: 0 })).rows).toEqual(built);
});

test("a value used twice is bound at both places; updates report the rows they changed; inside a transaction too", async () => {
  const rename = fixedQuery((db, v: { name: string; plan: Plan }) => db.updateTable("accounts").set({ plan: v.plan }).where("name", "=", v.name).where("plan", "!=", v.plan));
  const one = fixedQuery((db, v: { name: string }) => db.selectFrom("accounts").select("plan").where("name", "=", v.name));
  expect(await changedRows(rename(store.db, { name: "a", plan: "enterprise" }))).toBe(1);
  expect(await changedRows(rename(store.db, { name: "a", plan: "enterprise" }))).toBe(0);
  await store.db.transaction().execute(async (trx) => {
    expect(await changedRows(rename(trx, { name: "b", plan: "free" }))).toBe(1);
    expect(await firstRow(one(trx, { name: "b" }))).toEqual({ plan: "free" });
  });
  expect(await firstRow(one(store.db, { name: "a" }))).toEqual({ plan: "enterprise" });
  expect(await firstRow(one(store.db, { name: "nobody" }))).toBeUndefined();
});

test("a build that computes with a value instead of passing it is refused, naming the SQL", async () => {
  const wrong = fixedQuery((db, v: { at: number }) => db.selectFrom("accounts").select("name").where("created_at", ">", Number(v.at) - 1));
  expect(() => wrong(store.db, { at: 1 })).toThrow(/1 of the values read while building were not passed/);
});
