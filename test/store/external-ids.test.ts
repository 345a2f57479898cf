/**
 * Migration 032's indexes, on the suite's engine: external_id is unique within the account for each
 * kind of resource, any number of rows may have none, and another account or another kind of
 * resource may use the same one (README "Configuration as code"). The API checks first and answers
 * 422; the index is what holds when two writes race past that check.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { Store } from "../../src/store/database.ts";
import { externalIdTaken } from "../../src/store/external-ids.ts";
import { openTestStore } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("vigil-external-ids-");
let store: Store;
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("one external_id per account and kind; nulls and other accounts are free", async () => {
  store = await openTestStore(dir);
  const db = store.db;
  const [a, b] = await Promise.all(
    ["a", "b"].map(async (name) => Number((await db.insertInto("accounts").values({ name, plan: "pro", created_at: 1 } as never).returning("id").executeTakeFirstOrThrow()).id)),
  );
  const group = (account_id: number, name: string, external_id: string | null) =>
    db.insertInto("monitor_groups").values({ account_id, name, external_id, created_at: 1, updated_at: 1 }).execute();
  const monitor = (account_id: number, name: string, external_id: string | null) =>
    db.insertInto("monitors").values({ account_id, name, monitor_type: "http", target: "https://example.com/", interval_sec: 60, timeout_ms: 5000, external_id, created_at: 1, updated_at: 1 } as never).execute();

  await group(a!, "g1", "prod");
  await group(a!, "g2", null);
  await group(a!, "g3", null);
  await group(b!, "g1", "prod");
  await monitor(a!, "m1", "prod");
  await expect(group(a!, "g4", "prod")).rejects.toThrow(/external_id|unique/i);
  await expect(monitor(a!, "m2", "prod")).rejects.toThrow();

  expect(await externalIdTaken(db, "monitor_groups", a!, "prod")).toBe(true);
  expect(await externalIdTaken(db, "monitor_groups", a!, "staging")).toBe(false);
  const prodGroup = await db.selectFrom("monitor_groups").select("id").where("account_id", "=", a!).where("external_id", "=", "prod").executeTakeFirstOrThrow();
  expect(await externalIdTaken(db, "monitor_groups", a!, "prod", Number(prodGroup.id))).toBe(false);
  expect(await externalIdTaken(db, "notification_channels", a!, "prod")).toBe(false);
});
