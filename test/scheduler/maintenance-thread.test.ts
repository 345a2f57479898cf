/**
 * The maintenance job on SQLite runs on a worker thread with its own connection (README "Storage"):
 * the same rollups and pruning as on the serving thread, the serving thread's clock and
 * log, and the serving thread takes the job back when the worker cannot start or fails.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { startMaintenance, type MaintenanceJob } from "../../src/scheduler/maintenance.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir, waitFor } from "../helpers/server.ts";
import { engineHarness, insertMonitor, type EngineHarness } from "../engine/helpers.ts";

// The job's clock is 60 days ahead of the real one, half past an hour: by it the hour that began
// 2.5 h before is over and a check 40 days old is past the 30 days' retention, while by the real
// clock that hour has not come yet and that check is 20 days ahead. A run that used its own thread's
// clock would leave both alone.
const NOW = Math.floor((Date.now() + 60 * DAY_MS) / HOUR_MS) * HOUR_MS + 30 * 60_000;
const H10 = NOW - 30 * 60_000 - 2 * HOUR_MS;
const OLD = NOW - 40 * DAY_MS;

let h: EngineHarness;
let job: MaintenanceJob | null = null;
let monitor: number;
beforeEach(async () => {
  h = await engineHarness([], { now: () => NOW });
  monitor = await insertMonitor(h);
  const rows = Array.from({ length: 60 }, (_, i) => ({ monitor_id: monitor, region: "local", status: i < 57 ? "up" : "down", checked_at: H10 + i * 60_000, latency_ms: i < 57 ? i + 1 : null }));
  rows.push({ monitor_id: monitor, region: "local", status: "up", checked_at: OLD, latency_ms: 5 });
  await h.ctx.db.insertInto("checks").values(rows).execute();
});
const linux = existsSync("/proc/self/task");
afterEach(async () => {
  await job?.stop(5000);
  job = null;
  await h.close();
  // a terminated worker's thread ends a moment later; the next test starts without it
  if (linux) expect(await waitFor(() => !threadNames().includes("vigil-maint"))).toBe(true);
});

const hourlyRollup = () =>
  h.ctx.db.selectFrom("check_rollups").selectAll().where("monitor_id", "=", monitor).where("granularity", "=", "h").where("bucket_start", "=", H10).executeTakeFirst();
const oldChecks = async () => (await h.ctx.db.selectFrom("checks").select((eb) => eb.fn.countAll<number>().as("n")).where("checked_at", "=", OLD).executeTakeFirstOrThrow()).n;

/** The names of this process's threads (Linux). */
function threadNames(): string[] {
  return readdirSync("/proc/self/task").flatMap((tid) => {
    try {
      return [readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim()];
    } catch {
      return []; // ended meanwhile
    }
  });
}

/** The run's results as the serving thread's connection reads them: the hour rolled up, the 40-day-old check pruned. */
async function expectRunDone(report: Awaited<ReturnType<MaintenanceJob["runNow"]>>) {
  expect(report).not.toBeNull();
  expect(report!.hourlyBuckets).toBeGreaterThanOrEqual(1);
  expect(report!.checksPruned).toBe(1);
  const bucket = await hourlyRollup();
  expect(bucket).toMatchObject({ up_count: 57, down_count: 3, latency_count: 57, latency_min: 1, latency_max: 57 });
  expect(await oldChecks()).toBe(0);
}

const everyHour = HOUR_MS;

// PostgreSQL runs the job on the serving thread: its statements wait on the network there
describe.skipIf(TEST_ENGINE === "postgres")("maintenance on a worker thread", () => {
  test("a run on the worker rolls up and prunes with the serving thread's clock, and its log lines reach the serving thread's log", async () => {
    job = startMaintenance(h.ctx, everyHour);
    await expectRunDone(await job.runNow());
    // the worker's "maintenance done" line, with its report, in this thread's log
    const done = h.logs().find((l) => l.component === "retention" && l.msg === "maintenance done");
    expect(done).toMatchObject({ level: "debug", checksPruned: 1 });
    expect(h.logs().some((l) => /maintenance worker/.test(String(l.msg)))).toBe(false);
    if (linux) expect(threadNames()).toContain("vigil-maint");
  });

  test("on stop the worker ends: its thread is gone", async () => {
    job = startMaintenance(h.ctx, everyHour);
    await job.runNow();
    if (linux) expect(threadNames()).toContain("vigil-maint");
    await job.stop(5000);
    job = null;
    if (linux) expect(await waitFor(() => !threadNames().includes("vigil-maint"))).toBe(true);
  });

  test("a worker that cannot start is logged and the serving thread runs the job", async () => {
    job = startMaintenance(h.ctx, everyHour, { thread: { module: join(tempDir("vigil-maint-"), "missing.ts") } });
    await expectRunDone(await job.runNow());
    expect(h.logs().some((l) => l.level === "error" && l.msg === "the maintenance worker did not start; the job runs on the serving thread")).toBe(true);
  });

  test("a worker that fails during a run is logged; that run and the next are done on the serving thread", async () => {
    // answers the handshake, then throws on the first run
    const module = join(tempDir("vigil-maint-"), "fails-on-run.ts");
    writeFileSync(
      module,
      `self.onmessage = (e) => { if (e.data.type === "start") postMessage({ type: "started" }); else if (e.data.type === "run") throw new Error("worker broke"); };`,
    );
    job = startMaintenance(h.ctx, everyHour, { thread: { module } });
    await expectRunDone(await job.runNow());
    const failed = h.logs().filter((l) => l.level === "error" && l.msg === "the maintenance worker failed; the job runs on the serving thread from now on");
    expect(failed).toHaveLength(1);
    expect(String(failed[0].error)).toContain("worker broke");
    const again = await job.runNow();
    expect(again).not.toBeNull();
    expect(h.logs().filter((l) => l.msg === "maintenance done")).toHaveLength(2);
  });

  // Linux: the worker's end is seen as its thread leaving /proc
  test.skipIf(!linux)("a worker that dies between runs is logged at the next run, which the serving thread does", async () => {
    // answers the handshake and its first run with an empty report, then dies on its own
    const module = join(tempDir("vigil-maint-"), "dies-later.ts");
    writeFileSync(
      module,
      `const report = { hourlyBuckets: 0, dailyBuckets: 0, checksPruned: 0, rollupsPruned: 0, checksPacked: 0, daysMerged: 0, damagedMonitors: 0, stopped: false };
       self.onmessage = (e) => {
         if (e.data.type === "start") postMessage({ type: "started" });
         else if (e.data.type === "run") { postMessage({ type: "done", report }); setTimeout(() => { throw new Error("worker broke later"); }, 20); }
       };`,
    );
    job = startMaintenance(h.ctx, everyHour, { thread: { module } });
    expect((await job.runNow())!.hourlyBuckets).toBe(0);
    expect(await hourlyRollup()).toBeUndefined();
    expect(await waitFor(() => !threadNames().includes("vigil-maint"))).toBe(true);
    await expectRunDone(await job.runNow());
    const failed = h.logs().filter((l) => l.level === "error" && l.msg === "the maintenance worker failed; the job runs on the serving thread from now on");
    expect(failed).toHaveLength(1);
    expect(String(failed[0].error)).toContain("worker broke later");
  });

  test("thread: false keeps the job on the serving thread", async () => {
    job = startMaintenance(h.ctx, everyHour, { thread: false });
    await expectRunDone(await job.runNow());
    if (linux) expect(threadNames()).not.toContain("vigil-maint");
  });
});
