import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startCheckpointer } from "../../src/store/checkpointer.ts";
import { asSqlite, openStore, type SqliteStore } from "../../src/store/database.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir, waitFor } from "../helpers/server.ts";

let store: SqliteStore | null = null;
let dir: string | null = null;
afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  store = null;
  dir = null;
});

const autocheckpoint = (s: SqliteStore) => (s.sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

// SQLite's write-ahead log has no counterpart here on PostgreSQL, which checkpoints by itself.
describe.skipIf(TEST_ENGINE === "postgres")("WAL checkpointer", () => {
  test("checkpoints on its worker keep the WAL from growing while the writer never checkpoints; data intact", async () => {
    dir = tempDir("vigil-ckpt-");
    store = openStore(dir);
    const own = autocheckpoint(store);
    expect(own).toBeGreaterThan(0);
    store.sqlite.exec("CREATE TABLE filler (id INTEGER PRIMARY KEY, blob BLOB)");
    const ckpt = await startCheckpointer(store, { everyMs: 20 });
    expect(autocheckpoint(store)).toBe(0);

    const insert = store.sqlite.prepare("INSERT INTO filler (blob) VALUES (?)");
    const blob = new Uint8Array(2000).fill(7);
    const rounds = 12;
    const perRound = 1000; // ~2 MB of pages a round
    for (let r = 0; r < rounds; r++) {
      store.sqlite.transaction(() => {
        for (let i = 0; i < perRound; i++) insert.run(blob);
      })();
      const before = ckpt.stats.runs;
      await waitFor(() => ckpt.stats.runs >= before + 2, { timeoutMs: 10_000 });
    }
    const written = rounds * perRound * blob.length;
    // the writer restarted the log once the worker had copied it: it holds a round or two, not all
    expect(statSync(`${store.path}-wal`).size).toBeLessThan(written / 3);
    expect(ckpt.stats.errors).toBe(0);
    expect(ckpt.stats.restarts).toBe(0);

    await ckpt.stop();
    expect(autocheckpoint(store)).toBe(own);
    await store.close();
    store = null;
    const check = new Database(`${dir}/vigil.db`, { readonly: true });
    expect((check.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
    expect((check.query("SELECT count(*) AS n FROM filler").get() as { n: number }).n).toBe(rounds * perRound);
    check.close();
  });

  test("each checkpoint reports how long it took, and whether the log had outgrown its bound and was RESTARTed", async () => {
    dir = tempDir("vigil-ckpt-");
    store = openStore(dir);
    store.sqlite.exec("CREATE TABLE filler (id INTEGER PRIMARY KEY, blob BLOB)");
    const seen: { seconds: number; restarted: boolean }[] = [];
    // a bound of 8 frames: the ~1,000 a round writes take a RESTART (the first test, under the default bound, none)
    const ckpt = await startCheckpointer(store, { everyMs: 20, restartAboveFrames: 8, onCheckpoint: (seconds, restarted) => seen.push({ seconds, restarted }) });
    const insert = store.sqlite.prepare("INSERT INTO filler (blob) VALUES (?)");
    const blob = new Uint8Array(2000).fill(7);
    for (let r = 0; r < 3; r++) {
      store.sqlite.transaction(() => {
        for (let i = 0; i < 1000; i++) insert.run(blob);
      })();
      const before = ckpt.stats.runs;
      await waitFor(() => ckpt.stats.runs >= before + 2, { timeoutMs: 10_000 });
    }
    await ckpt.stop();
    expect(seen.length).toBe(ckpt.stats.runs);
    expect(seen.every((c) => c.seconds >= 0 && c.seconds < 10)).toBe(true);
    expect(ckpt.stats.restarts).toBeGreaterThan(0);
    expect(seen.filter((c) => c.restarted).length).toBe(ckpt.stats.restarts);
  });

  test("the server runs one: the writing connection does not checkpoint while it serves", async () => {
    const { startTestServer } = await import("../helpers/server.ts");
    const server = await startTestServer();
    try {
      expect(autocheckpoint(asSqlite(server.ctx.store, "this"))).toBe(0);
      // and its checkpoints' durations reach /metrics
      const count = async () => {
        const text = await server.ctx.metrics.registry.metrics();
        return Number(text.match(/^vigil_wal_checkpoint_duration_seconds_count\{mode="passive"\} (\d+)$/m)?.[1] ?? 0);
      };
      const end = Date.now() + 10_000;
      while ((await count()) === 0 && Date.now() < end) await Bun.sleep(50);
      expect(await count()).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  });
});

describe.skipIf(TEST_ENGINE === "postgres")("WAL checkpointer when its worker fails", () => {
  function logger() {
    const lines: Record<string, unknown>[] = [];
    return { lines, log: createLogger("info", "store", (l) => lines.push(JSON.parse(l))) };
  }

  test("a worker that cannot load: the server still starts, and the writing connection keeps its own checkpoints", async () => {
    dir = tempDir("vigil-ckpt-");
    store = openStore(dir);
    const own = autocheckpoint(store);
    const { log, lines } = logger();
    const module = join(dir, "broken-worker.js");
    writeFileSync(module, "this is not JavaScript (");
    const ckpt = await startCheckpointer(store, { log, module });
    expect(ckpt.running).toBe(false);
    expect(autocheckpoint(store)).toBe(own);
    expect(lines.some((l) => l.level === "error" && String(l.msg).startsWith("the checkpoint worker did not start"))).toBe(true);
    await ckpt.stop();
    expect(autocheckpoint(store)).toBe(own);
  });

  test("a worker that fails after it started: the writing connection gets its checkpoints back, once, and it is logged", async () => {
    dir = tempDir("vigil-ckpt-");
    store = openStore(dir);
    const own = autocheckpoint(store);
    const { log, lines } = logger();
    const failing = `self.onmessage = (e) => {
      if (e.data.type === "start") { postMessage({ type: "started" }); setTimeout(() => { throw new Error("disk on fire"); }, 20); }
    };`;
    const module = join(dir, "failing-worker.js");
    writeFileSync(module, failing);
    const ckpt = await startCheckpointer(store, { log, module });
    expect(autocheckpoint(store)).toBe(0);
    await waitFor(() => !ckpt.running, { timeoutMs: 5000 });
    expect(ckpt.running).toBe(false);
    expect(autocheckpoint(store)).toBe(own);
    const failures = lines.filter((l) => l.level === "error" && String(l.msg).startsWith("the checkpoint worker failed"));
    expect(failures.length).toBe(1);
    expect(String(failures[0]!.error)).toContain("disk on fire");
    await ckpt.stop();
    expect(autocheckpoint(store)).toBe(own);
  });
});
