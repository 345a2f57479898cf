import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { WriteQueue } from "../../src/store/write-queue.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { engineHarness, type EngineHarness } from "./helpers.ts";

let h: EngineHarness;
beforeEach(async () => {
  h = await engineHarness();
});
afterEach(async () => {
  await h.close();
});

const kv = (key: string) => h.ctx.db.selectFrom("kv").select("value").where("key", "=", key).executeTakeFirst();
const put = (key: string) => (trx: typeof h.ctx.db) => trx.insertInto("kv").values({ key, value: "1" }).execute().then(() => key);

test("a job awaited right after another one's commit is still written (no lost wake-up)", async () => {
  const q = new WriteQueue(h.ctx.db);
  for (let i = 0; i < 20; i++) expect(await q.run(put(`k${i}`))).toBe(`k${i}`);
  expect((await h.ctx.db.selectFrom("kv").select("key").where("key", "like", "k%").execute()).length).toBe(20);
});

test("jobs queued together commit in one transaction, and each promise settles after the commit", async () => {
  const q = new WriteQueue(h.ctx.db, { windowMs: 5 });
  const seen: (string | undefined)[] = [];
  const all = Array.from({ length: 30 }, (_, i) => q.run(put(`b${i}`)).then(async (k) => seen.push((await kv(k)) ? k : undefined)));
  await Promise.all(all);
  expect(seen.filter(Boolean)).toHaveLength(30);
  expect(q.counters.batches).toBe(1);
  expect(q.counters.jobs).toBe(30);
});

test("a failing job fails alone: the others of its batch are retried and committed", async () => {
  const q = new WriteQueue(h.ctx.db, { windowMs: 5 });
  const good1 = q.run(put("g1"));
  // its refusal is taken at once: awaited only after the others, it would be an unhandled rejection
  // for as long as their commits take (on PostgreSQL, past the end of a turn of the event loop)
  const bad = q
    .run(async (trx) => {
      await trx.insertInto("kv").values({ key: "g1", value: "duplicate key" }).execute();
    })
    .then(() => null, (err: unknown) => err);
  const good2 = q.run(put("g2"));
  expect(await good1).toBe("g1");
  expect(await good2).toBe("g2");
  expect(await bad).toBeInstanceOf(Error);
  expect(q.counters.retriedBatches).toBe(1);
  expect(await kv("g1")).toEqual({ value: "1" });
  expect(await kv("g2")).toEqual({ value: "1" });
});

test("a batch past its time budget commits what it ran and lets the event loop turn before the rest, in order", async () => {
  // a budget of 0 ms: every batch ends after its first job
  const q = new WriteQueue(h.ctx.db, { windowMs: 5, batchBudgetMs: 0 });
  const ran: string[] = [];
  const job = (key: string) => async (trx: typeof h.ctx.db) => {
    // an immediate set by the first job runs only once the event loop turns; the jobs after it are
    // chained by promises alone unless the queue lets the loop turn between batches (a timer would
    // not do here: 12 batches can end within its 1 ms)
    if (ran.length === 0) setImmediate(() => ran.push("turn"));
    ran.push(key);
    return put(key)(trx);
  };
  const all = Array.from({ length: 12 }, (_, i) => q.run(job(`t${i}`)));
  expect(await Promise.all(all)).toEqual(Array.from({ length: 12 }, (_, i) => `t${i}`));
  expect(q.counters.batches).toBe(12);
  expect(ran.filter((k) => k !== "turn")).toEqual(Array.from({ length: 12 }, (_, i) => `t${i}`));
  // the loop turned right after the first batch, not after the last one
  expect(ran.indexOf("turn")).toBe(1);
  expect((await h.ctx.db.selectFrom("kv").select("key").where("key", "like", "t%").execute()).length).toBe(12);
});

test("close writes what is queued and refuses new jobs", async () => {
  const q = new WriteQueue(h.ctx.db, { windowMs: 50 });
  const pending = q.run(put("late"));
  await q.close();
  expect(await pending).toBe("late");
  expect(await kv("late")).toEqual({ value: "1" });
  await expect(q.run(put("after"))).rejects.toThrow("closed");
});

// Lanes are for PostgreSQL, whose pool gives each lane a connection of its own; SQLite has one
// connection, so a second lane's transaction would only wait for the first.
describe.skipIf(TEST_ENGINE !== "postgres")("lanes (PostgreSQL)", () => {
  test("a job in one lane commits while another lane's transaction is still open", async () => {
    const q = new WriteQueue(h.ctx.db, { lanes: 2 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // key 0: its transaction stays open until the other lane's job has committed
    const slow = q.run(async (trx) => {
      await put("slow")(trx);
      await held;
      return "slow";
    }, { key: 0 });
    const fast = await q.run(put("fast"), { key: 1 });
    expect(fast).toBe("fast");
    expect(await kv("fast")).toEqual({ value: "1" });
    expect(await kv("slow")).toBeUndefined();
    release();
    expect(await slow).toBe("slow");
    expect(await kv("slow")).toEqual({ value: "1" });
  });

  test("jobs with the same key keep their order", async () => {
    const q = new WriteQueue(h.ctx.db, { lanes: 4, windowMs: 1 });
    const order: number[] = [];
    const jobs = Array.from({ length: 40 }, (_, i) => q.run(async () => void order.push(i), { key: 7 }));
    await Promise.all(jobs);
    expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  test("runByKey gives each lane only the keys that pick it", async () => {
    const q = new WriteQueue(h.ctx.db, { lanes: 3 });
    const parts: number[][] = [];
    await q.runByKey(new Map(Array.from({ length: 12 }, (_, i) => [i + 1, `v${i + 1}`] as const)), (part) => async () => void parts.push([...part.keys()]));
    expect(parts).toHaveLength(3);
    for (const keys of parts) expect(new Set(keys.map((k) => k % 3)).size).toBe(1);
    expect(parts.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });
});
