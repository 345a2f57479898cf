import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { sql } from "kysely";
import { openStore, type Store } from "../../src/store/database.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

let store: Store | null = null;
let dir: string | null = null;
afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  store = null;
  dir = null;
});

// The statement cache is the SQLite driver's (store/database.ts); Bun.sql prepares and caches on its own.
describe.skipIf(TEST_ENGINE === "postgres")("Kysely's connection reuses prepared statements", () => {
  test("the same query with other parameters gives the right rows; past the cache size old statements are dropped and re-prepared", async () => {
    dir = tempDir("vigil-stmt-");
    store = openStore(dir);
    const db = store.db;
    const now = Date.now();
    for (const name of ["a", "b", "c"]) await db.insertInto("accounts").values({ name, plan: "pro", created_at: now }).execute();
    const byName = (n: string) => db.selectFrom("accounts").select(["name"]).where("name", "=", n).executeTakeFirst();
    expect((await byName("a"))?.name).toBe("a");
    expect((await byName("b"))?.name).toBe("b");
    expect(await byName("zz")).toBeUndefined();
    // 700 distinct SQL texts, more than the cache holds
    for (let i = 0; i < 700; i++) {
      const row = await sql<{ n: number }>`SELECT ${sql.raw(String(i))} AS n, count(*) AS c FROM accounts`.execute(db);
      expect(row.rows[0]!.n).toBe(i);
    }
    // the first statement was evicted (and finalized) long ago: prepared again, still right
    expect((await byName("c"))?.name).toBe("c");
    const upd = await db.updateTable("accounts").set({ plan: "enterprise" }).where("name", "in", ["a", "b"]).executeTakeFirst();
    expect(Number(upd.numUpdatedRows)).toBe(2);
    const ins = await db.insertInto("accounts").values({ name: "d", plan: "free", created_at: now }).executeTakeFirst();
    expect(Number(ins.insertId)).toBe(4);
  });

  test("a transaction that throws is rolled back through the same connection", async () => {
    dir = tempDir("vigil-stmt-");
    store = openStore(dir);
    const db = store.db;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto("accounts").values({ name: "gone", plan: "pro", created_at: 1 }).execute();
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await db.selectFrom("accounts").selectAll().execute()).toEqual([]);
    expect(store.sqlite.inTransaction).toBe(false);
  });
});
