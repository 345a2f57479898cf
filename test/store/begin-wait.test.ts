/**
 * A write transaction that meets another connection's write lock (the ping journal's fold worker,
 * a CLI command) waits on the event loop, not in SQLite's busy handler (store/database.ts): the
 * thread keeps serving meanwhile, and the write commits once the lock is free.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_FILE, openStore } from "../../src/store/database.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("vigil-begin-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// SQLite's one-writer lock; PostgreSQL's transactions do not take one.
test.skipIf(TEST_ENGINE === "postgres")("a write waits for another connection's lock without blocking the thread, then commits", async () => {
  const store = openStore(dir);
  const other = new Database(join(dir, DATABASE_FILE));
  try {
    other.exec("BEGIN IMMEDIATE");
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    let committed = false;
    const write = store.db
      .transaction()
      .execute((trx) => trx.insertInto("accounts").values({ name: "waited", plan: "pro", created_at: 1 } as never).execute())
      .then(() => (committed = true));
    // With the busy handler this thread would sleep inside BEGIN: no timer fires, and the COMMIT
    // below, on this same thread, could not run before the 5 s timeout failed the write.
    const until = Date.now() + 5000;
    while (ticks < 3 && Date.now() < until) await Bun.sleep(5);
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect(committed).toBe(false);
    other.exec("COMMIT");
    await write;
    clearInterval(timer);
    expect(committed).toBe(true);
    const names = (await store.db.selectFrom("accounts").select("name").execute()).map((a) => a.name);
    expect(names).toContain("waited");
  } finally {
    other.close();
    await store.close();
  }
});
