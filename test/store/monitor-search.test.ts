/**
 * The search behind GET /api/v1/monitors?q=, on the suite's engine: SQLite's trigram index
 * (monitors_search, migration 010) or PostgreSQL's pg_trgm indexes, kept in step with inserts,
 * renames, target edits and deletions, and giving exactly the rows a plain substring test gives.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_FILE, openStore, type Store } from "../../src/store/database.ts";
import { MIGRATIONS } from "../../src/store/migrations/index.ts";
import { listMonitors } from "../../src/store/monitors.ts";
import { openTestStore, TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function storeWithMonitors(names: [string, string | null][]): Promise<Store> {
  const dir = tempDir("vigil-search-");
  dirs.push(dir);
  const store = await openTestStore(dir);
  await store.db.insertInto("accounts").values([{ name: "a", plan: "pro", created_at: 0 }, { name: "b", plan: "pro", created_at: 0 }]).execute();
  for (const [name, target] of names) {
    await store.db.insertInto("monitors").values({ account_id: 1, name, monitor_type: "http", target, interval_sec: 60, timeout_ms: 1000, created_at: 0, updated_at: 0 }).execute();
  }
  return store;
}

const search = async (store: Store, q: string) => (await listMonitors(store.db, 1, { q }, { limit: 100, offset: 0 }, "id", Date.now())).rows.map((r) => r.name);

/** The reference: a plain substring test, A-Z folded as SQLite's lower() folds them; a NUL never matches (no stored text holds one). */
const fold = (t: string) => t.replace(/[A-Z]/g, (c) => c.toLowerCase());
const substringOf = (names: [string, string | null][], q: string) =>
  q.includes("\0") ? [] : names.filter(([n, t]) => fold(n).includes(fold(q)) || fold(t ?? "").includes(fold(q))).map(([n]) => n);

describe("monitor search", () => {
  test("follows inserts, renames, target edits and deletions", async () => {
    const store = await storeWithMonitors([["Billing API", "http://127.0.0.1:9/pay"], ["Shop", null], ["Quote \"x\" svc", "http://127.0.0.1:9/q"]]);
    expect(await search(store, "billing")).toEqual(["Billing API"]);
    expect(await search(store, "PAY")).toEqual(["Billing API"]);
    expect(await search(store, '"x"')).toEqual(['Quote "x" svc']);
    await store.db.updateTable("monitors").set({ name: "Invoices" }).where("name", "=", "Billing API").execute();
    expect(await search(store, "billing")).toEqual([]);
    expect(await search(store, "invoices")).toEqual(["Invoices"]);
    expect(await search(store, "/pay")).toEqual(["Invoices"]);
    await store.db.updateTable("monitors").set({ target: "http://127.0.0.1:9/shop-front" }).where("name", "=", "Shop").execute();
    expect(await search(store, "front")).toEqual(["Shop"]);
    // a write of other columns leaves the index alone and the search right
    await store.db.updateTable("monitors").set({ last_status: "down", next_run_at: 5 }).execute();
    expect(await search(store, "front")).toEqual(["Shop"]);
    await store.db.deleteFrom("monitors").where("name", "=", "Shop").execute();
    expect(await search(store, "front")).toEqual([]);
    // SQLite's FTS table is kept by triggers of ours: it must still agree with the monitors table
    if (store.engine === "sqlite") expect((store.sqlite.query("INSERT INTO monitors_search(monitors_search, rank) VALUES ('integrity-check', 1)").run(), true)).toBe(true);
    await store.close();
  });

  test("gives the rows a plain substring test gives, for many queries", async () => {
    const words = ["alpha", "Beta", "gamma_1", "50% off", "DELTA", "ümlaut", "x"];
    const names = Array.from({ length: 60 }, (_, i) => [`${words[i % words.length]} svc ${i}`, i % 3 ? `http://127.0.0.1:9/${words[(i + 2) % words.length]}/${i}` : null] as [string, string | null]);
    const store = await storeWithMonitors(names);
    for (const q of ["alp", "ALPHA", "svc 1", "svc 12", "a_1", "50%", "% o", "lta", "ümla", "ÜMLA", "/be", "9/g", "http", "nothing-here", "ta s"]) {
      expect({ q, rows: await search(store, q) }).toEqual({ q, rows: substringOf(names, q) });
    }
    await store.close();
  });

  test("any search is literal text, never FTS syntax or a LIKE pattern, and never an error", async () => {
    const names: [string, string | null][] = [
      ["abc", null], ["xabc", null], ["abc def", "http://127.0.0.1:9/nul"], ['say "hi" now', null], ["NEAR(abc def)", null],
      ["abc* star", null], ["a AND b", null], ["minus -x", null], ["name:abc", "http://127.0.0.1:9/name:abc"],
      ["50% off_sale", null], ["bidi \u202eevil\u202c", null], ["x".repeat(200), null], ["caf\u00e9 menu", null], ["back\\slash", null],
    ];
    const store = await storeWithMonitors(names);
    const queries = [
      "abc\0", "abc\0def", "\0", "\0\0\0", "c\0d", '"', '"hi"', 'say "', "NEAR(abc", "NEAR", "abc*", "*", "AND", "a AND b", "-x", "-",
      ":", "name:abc", "name:", "%", "_", "50%", "f_s", "\\", "k\\s", "\u202e", "\u202eevil", "evil\u202c", "x".repeat(200), "x".repeat(201),
      "CAF\u00e9", "CAF\u00c9", "\u00e9 m", "(", ")", "^abc", "{abc}", "abc OR def", "'", "\n",
    ];
    for (const q of queries) expect({ q, rows: await search(store, q) }).toEqual({ q, rows: substringOf(names, q) });
    await store.close();
  });
});

// Reads and writes SQLite files directly: migration 010 and SQLite's query plans exist on SQLite only
// (PostgreSQL's search indexes are checked by postgres-schema.test.ts).
describe.skipIf(TEST_ENGINE === "postgres")("monitor search on SQLite", () => {
  test("monitors that existed before migration 010 are found after it", async () => {
    const dir = tempDir("vigil-search-mig-");
    dirs.push(dir);
    const db = new Database(join(dir, DATABASE_FILE), { create: true });
    for (const m of MIGRATIONS) if (m.version <= 2) db.exec(m.sql);
    db.exec("PRAGMA user_version = 2");
    db.exec("INSERT INTO accounts (name, plan, created_at) VALUES ('a', 'pro', 0)");
    db.exec("INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at) VALUES (1, 'Legacy Gateway', 'tcp', '127.0.0.1:8080', 60, 1000, 0, 0)");
    db.close();
    const store = openStore(dir);
    expect(await search(store, "legacy")).toEqual(["Legacy Gateway"]);
    expect(await search(store, ":8080")).toEqual(["Legacy Gateway"]);
    await store.close();
  });

  test("a monitor deleted finds its alerts by index (ON DELETE SET NULL), not by reading the whole outbox", async () => {
    const store = await storeWithMonitors([["x", null]]);
    if (store.engine !== "sqlite") throw new Error("SQLite only");
    const plan = (store.sqlite.query("EXPLAIN QUERY PLAN UPDATE alerts SET monitor_id = NULL WHERE monitor_id = 1").all() as { detail: string }[]).map((r) => r.detail);
    expect(plan.join(" ")).toMatch(/USING (COVERING )?INDEX alerts_monitor/);
    await store.close();
  });
});
