import { afterEach, beforeEach, expect, test } from "bun:test";
import { DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { runMaintenance } from "../../src/engine/retention.ts";
import { checkSamples } from "../../src/store/check-blocks.ts";
import { DAILY_WATERMARK, getWatermark, HOURLY_WATERMARK, partialBucket, uptimeFromRollups } from "../../src/store/rollups.ts";
import { engineHarness, insertMonitor, type EngineHarness } from "./helpers.ts";

// 2026-11-21 12:30 UTC; raw retention is the default 30 days
const NOW = Date.UTC(2026, 10, 21, 12, 30);
const TODAY = Date.UTC(2026, 10, 21);
const YESTERDAY = TODAY - DAY_MS;
const H10 = TODAY + 10 * HOUR_MS;

let h: EngineHarness;
let a: number;
let b: number;
beforeEach(async () => {
  h = await engineHarness([], { now: () => NOW });
  a = await insertMonitor(h);
  b = await insertMonitor(h);
});
afterEach(async () => {
  await h.close();
});

async function seed(monitorId: number, rows: { at: number; status: string; latency: number | null }[]): Promise<void> {
  await h.ctx.db
    .insertInto("checks")
    .values(rows.map((r) => ({ monitor_id: monitorId, region: "local", status: r.status, checked_at: r.at, latency_ms: r.latency })))
    .execute();
}

const rollups = (monitorId: number, g: "h" | "d") =>
  h.ctx.db.selectFrom("check_rollups").selectAll().where("monitor_id", "=", monitorId).where("granularity", "=", g).orderBy("bucket_start").execute();
/** every check's time, rows and packed alike, oldest first */
const checkTimes = async (monitorId: number) => (await checkSamples(h.ctx.db, [monitorId], 0, Number.MAX_SAFE_INTEGER)).map((r) => r.checked_at).sort((x, y) => x - y);

/** Hour 10:00 today: latencies 1..100; 90 up, 5 degraded, 5 down without a latency. */
function hourTen() {
  return Array.from({ length: 100 }, (_, k) => {
    const i = k + 1;
    return { at: H10 + i * 30_000, status: i <= 90 ? "up" : i <= 95 ? "degraded" : "down", latency: i <= 95 ? i : null };
  });
}

test("rollups: counts and percentiles of completed hours and days; the current hour is left to on-demand", async () => {
  await seed(a, hourTen());
  // yesterday: one check an hour, two of them down
  await seed(a, Array.from({ length: 24 }, (_, i) => ({ at: YESTERDAY + i * HOUR_MS + 60_000, status: i === 3 || i === 4 ? "down" : "up", latency: 10 + i })));
  // the current, partial hour
  await seed(a, [0, 1, 2].map((i) => ({ at: TODAY + 12 * HOUR_MS + i * 60_000, status: "up", latency: 5 })));
  await seed(b, [{ at: H10 + 1000, status: "down", latency: null }]);

  const report = await runMaintenance(h.ctx);
  expect(report.stopped).toBe(false);

  const hourly = await rollups(a, "h");
  const ten = hourly.find((r) => r.bucket_start === H10);
  expect(ten).toMatchObject({
    up_count: 90,
    degraded_count: 5,
    down_count: 5,
    latency_count: 95,
    latency_sum: (95 * 96) / 2,
    latency_min: 1,
    latency_max: 95,
    latency_p50: 48,
    latency_p95: 91,
    latency_p99: 95,
  });
  expect(hourly.some((r) => r.bucket_start === TODAY + 12 * HOUR_MS)).toBe(false);
  expect(hourly.filter((r) => r.bucket_start >= YESTERDAY && r.bucket_start < TODAY)).toHaveLength(24);
  expect((await rollups(b, "h")).map((r) => [r.bucket_start, r.down_count, r.latency_count, r.latency_p50])).toEqual([[H10, 1, 0, null]]);

  const daily = await rollups(a, "d");
  expect(daily).toHaveLength(1);
  expect(daily[0]).toMatchObject({ bucket_start: YESTERDAY, up_count: 22, down_count: 2, degraded_count: 0, latency_count: 24, latency_min: 10, latency_max: 33, latency_p50: 21 });

  expect(await getWatermark(h.ctx.db, HOURLY_WATERMARK)).toBe(TODAY + 12 * HOUR_MS);
  expect(await getWatermark(h.ctx.db, DAILY_WATERMARK)).toBe(TODAY);

  const partial = await partialBucket(h.ctx.pings, a, "h", NOW);
  expect(partial).toMatchObject({ bucket_start: TODAY + 12 * HOUR_MS, up_count: 3, latency_count: 3, latency_p99: 5 });

  // idempotent: a second run rewrites the same rows
  const snapshot = JSON.stringify([await rollups(a, "h"), await rollups(a, "d"), await rollups(b, "h")]);
  await runMaintenance(h.ctx);
  expect(JSON.stringify([await rollups(a, "h"), await rollups(a, "d"), await rollups(b, "h")])).toBe(snapshot);

  // a result delivered late into the last completed hour is taken in on the next run
  await seed(a, [{ at: TODAY + 11 * HOUR_MS + 5, status: "down", latency: null }]);
  await runMaintenance(h.ctx);
  expect((await rollups(a, "h")).find((r) => r.bucket_start === TODAY + 11 * HOUR_MS)).toMatchObject({ down_count: 1, up_count: 0 });
});

test("uptimeFromRollups: daily and hourly rollups plus raw checks of the current hour", async () => {
  await seed(a, hourTen());
  await seed(a, Array.from({ length: 24 }, (_, i) => ({ at: YESTERDAY + i * HOUR_MS + 60_000, status: i === 3 || i === 4 ? "down" : "up", latency: 10 })));
  await seed(a, [0, 1, 2].map((i) => ({ at: TODAY + 12 * HOUR_MS + i * 60_000, status: "up", latency: 5 })));
  await runMaintenance(h.ctx);
  // raw checks of yesterday and of hour 10 gone (as after retention): the figures come from rollups
  await h.ctx.db.deleteFrom("checks").where("monitor_id", "=", a).where("checked_at", "<", TODAY + 11 * HOUR_MS).execute();

  const u = await uptimeFromRollups(h.ctx.pings, a, YESTERDAY, NOW);
  expect(u).toEqual({ up: 22 + 90 + 3, degraded: 5, down: 2 + 5, total: 127, uptime: 120 / 127 });
  // a window with nothing in it
  expect(await uptimeFromRollups(h.ctx.pings, a, YESTERDAY - 5 * DAY_MS, YESTERDAY - 4 * DAY_MS)).toEqual({ up: 0, degraded: 0, down: 0, total: 0, uptime: null });
  // only hour 10 (whole hour from the hourly rollup)
  expect(await uptimeFromRollups(h.ctx.pings, a, H10, H10 + HOUR_MS)).toMatchObject({ up: 90, degraded: 5, down: 5 });
});

test("retention: raw checks older than retentionDays are pruned in batches, newer ones kept; rollups past theirs too", async () => {
  const old = [35, 33, 32, 31, 30.5].map((d) => ({ at: NOW - d * DAY_MS, status: "up", latency: 1 }));
  const kept = [29.9, 10, 0.01].map((d) => ({ at: NOW - d * DAY_MS, status: "up", latency: 1 }));
  await seed(a, [...old, ...kept]);
  await seed(b, [{ at: NOW - 40 * DAY_MS, status: "down", latency: null }]);
  const rollupRow = (monitorId: number, g: "h" | "d", at: number) => ({ monitor_id: monitorId, granularity: g, bucket_start: at, up_count: 1, degraded_count: 0, down_count: 0, latency_count: 0, latency_sum: 0 });
  await h.ctx.db
    .insertInto("check_rollups")
    .values([rollupRow(a, "h", TODAY - 100 * DAY_MS), rollupRow(a, "h", TODAY - 80 * DAY_MS), rollupRow(a, "d", TODAY - 401 * DAY_MS), rollupRow(a, "d", TODAY - 399 * DAY_MS)])
    .execute();

  const report = await runMaintenance(h.ctx, { batchSize: 2 });
  expect(report.checksPruned).toBe(6);
  expect(await checkTimes(a)).toEqual(kept.map((k) => k.at).sort((x, y) => x - y));
  expect(await checkTimes(b)).toEqual([]);
  const left = (await h.ctx.db.selectFrom("check_rollups").select(["granularity", "bucket_start"]).where("monitor_id", "=", a).where("bucket_start", "<", TODAY - 30 * DAY_MS).orderBy("bucket_start").execute()).map((r) => [r.granularity, r.bucket_start]);
  expect(left).toEqual([["d", TODAY - 399 * DAY_MS], ["h", TODAY - 80 * DAY_MS]]);
  expect(report.rollupsPruned).toBe(2);

  // nothing more to do on a second run
  expect((await runMaintenance(h.ctx, { batchSize: 2 })).checksPruned).toBe(0);
});

test("a stop request ends the job between batches", async () => {
  await seed(a, [{ at: NOW - 40 * DAY_MS, status: "up", latency: 1 }]);
  const report = await runMaintenance(h.ctx, { shouldStop: () => true });
  expect(report.stopped).toBe(true);
  expect(await checkTimes(a)).toHaveLength(1);
});

test("only monitors with data in a range are visited, and a rollup in the range whose checks are gone is recomputed away", async () => {
  // a: checks in hour 10; b: a stale hourly rollup in hour 10 and no checks; many monitors with nothing
  for (let i = 0; i < 300; i++) await insertMonitor(h);
  await seed(a, hourTen());
  await h.ctx.db
    .insertInto("check_rollups")
    .values({ monitor_id: b, granularity: "h", bucket_start: H10, up_count: 7, degraded_count: 0, down_count: 0, latency_count: 0, latency_sum: 0 })
    .execute();
  const report = await runMaintenance(h.ctx);
  expect((await rollups(a, "h")).map((r) => [r.bucket_start, r.up_count, r.degraded_count, r.down_count])).toEqual([[H10, 90, 5, 5]]);
  // b's bucket had no checks behind it: recomputed from nothing, as when every monitor was visited
  expect(await rollups(b, "h")).toEqual([]);
  expect(report.hourlyBuckets).toBe(1);
  const all = await h.ctx.db.selectFrom("check_rollups").select("monitor_id").distinct().execute();
  expect(all.map((r) => r.monitor_id)).toEqual([a]);
});
