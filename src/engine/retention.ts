import type { AppContext } from "../context.ts";
import { DamagedBlockError } from "../store/check-block-codec.ts";
import type { Db } from "../store/database.ts";
import { bucketStart, DAY_MS, HOUR_MS } from "../domain/uptime.ts";
import { mergeMonitorDays, monitorsWithHourBlocks, monitorsWithPackedChecksBefore, packMonitorChecks, prunePackedChecks } from "../store/check-blocks.ts";
import { DAILY_WATERMARK, getWatermark, HOURLY_WATERMARK, monitorsWithCheckRows, monitorsWithData, pruneChecks, pruneRollups, rollupMonitorRange, setWatermark } from "../store/rollups.ts";

/** Hourly rollups are kept this long: enough for day-by-day drill-down on a 90-day status page. */
export const HOURLY_ROLLUP_KEEP_DAYS = 90;
/** Daily rollups are kept this long: a year of uptime figures with room to spare (issue 4). */
export const DAILY_ROLLUP_KEEP_DAYS = 400;
/** Hours re-rolled on every run, so results delivered late (probe spools) still land in rollups. */
export const HOURLY_LOOKBACK_MS = HOUR_MS;
/** A day is rolled up this long after it ended, for the same reason. */
export const DAILY_GRACE_MS = HOUR_MS;

/**
 * Check rows are packed into blocks once their hour is this long over: late results of the hour
 * (a retry, a probe's batch) usually land before, so a block is seldom rewritten.
 */
export const PACK_GRACE_MS = 10 * 60_000;
/** Work in one packing transaction: short enough that API requests and check writes barely wait. */
const SLICE_MS = 10;

export interface MaintenanceOptions {
  /** raw checks deleted per statement (default 5,000) */
  batchSize?: number;
  /** stop early (shutdown); checked between batches */
  shouldStop?: () => boolean;
  /** most raw checks deleted in one run; the rest waits for the next (default 1,000,000) */
  maxPrunedPerRun?: number;
  /** most check rows packed in one run; the rest waits for the next (default 2,000,000) */
  maxPackedPerRun?: number;
  /**
   * What runs between two transactions. On the serving thread (default) one turn of the event loop,
   * for the requests that came in meanwhile; on a thread of its own a millisecond's sleep, so the
   * serving thread, which polls for the write lock, gets it between them.
   */
  pause?: () => Promise<void>;
}

/** What the job reads of the application: the store, the time, the retention and a log. */
export type MaintenanceContext = Pick<AppContext, "db" | "clock" | "log"> & { config: Pick<AppContext["config"], "retentionDays"> };

export interface MaintenanceReport {
  hourlyBuckets: number;
  dailyBuckets: number;
  checksPruned: number;
  rollupsPruned: number;
  checksPacked: number;
  daysMerged: number;
  /** monitors skipped because one of their packed blocks cannot be read (logged once a run each) */
  damagedMonitors: number;
  stopped: boolean;
}

/** Lets other work (check writes, API reads) in between batches. */
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Sorted ids in any of the (sorted) lists, once each. */
function union(...lists: number[][]): number[] {
  return [...new Set(lists.flat())].sort((a, b) => a - b);
}

function alignUp(t: number, size: number): number {
  return Math.ceil(t / size) * size;
}

/**
 * The periodic job: roll completed hours and days up from raw checks, then prune raw checks past
 * retention and rollups past theirs. Idempotent: a bucket recomputed overwrites itself, so running
 * it twice, or after a crash half-way, gives the same rows. Raw checks are pruned only once they
 * are rolled up, in small batches between which check writes proceed.
 */
export async function runMaintenance(ctx: MaintenanceContext, opts: MaintenanceOptions = {}): Promise<MaintenanceReport> {
  const log = ctx.log.child("retention");
  const stop = opts.shouldStop ?? (() => false);
  const pause = opts.pause ?? yieldToOthers;
  const now = ctx.clock.now();
  const rawCutoff = now - ctx.config.retentionDays * DAY_MS;
  const report: MaintenanceReport = { hourlyBuckets: 0, dailyBuckets: 0, checksPruned: 0, rollupsPruned: 0, checksPacked: 0, daysMerged: 0, damagedMonitors: 0, stopped: false };
  // a damaged block (disk damage) costs its own monitor's packing and rollups, not everyone's: each
  // step reads its blocks before it writes, so a skipped monitor is left exactly as it was
  const damaged = new Set<number>();
  const guarded = async (id: number, fn: () => Promise<number>): Promise<number> => {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof DamagedBlockError)) throw err;
      if (!damaged.has(id)) log.error("a packed check block of this monitor cannot be read; its packed checks are left as they are", { monitor_id: id, error: err.message });
      damaged.add(id);
      report.damagedMonitors = damaged.size;
      return 0;
    }
  };
  // rollups never reach back past raw retention: those checks may be gone, and a recomputed bucket
  // would overwrite a good rollup with a partial one
  const rollRange = async (key: string, g: "h" | "d", done: number | null, start: number, end: number): Promise<number | null> => {
    let buckets = 0;
    // only monitors with checks or rollups in the range can have a bucket to (re)compute
    const ids = end > start ? union(await monitorsWithData(ctx.db, start, end), await monitorsWithData(ctx.db, start, end, g)) : [];
    // by time, as packing: the current hour of a monitor pinged several times a second is
    // thousands of rows, and 100 such monitors in one transaction held requests behind them
    const rolled = await inTimeSlices(ctx.db, ids, stop, pause, async (trx, id) => {
      buckets += await guarded(id, () => rollupMonitorRange(trx, id, g, start, end));
    });
    if (!rolled) return null;
    // the watermark only moves forward, also when there was nothing to roll up
    if (done === null || end > done) await setWatermark(ctx.db, key, end);
    return buckets;
  };

  const hourlyUntil = await getWatermark(ctx.db, HOURLY_WATERMARK);
  const hourEnd = bucketStart(now, "h");
  const hourFloor = alignUp(rawCutoff, HOUR_MS);
  const hourStart = hourlyUntil === null ? hourFloor : Math.max(hourFloor, Math.min(hourlyUntil, hourEnd) - HOURLY_LOOKBACK_MS);
  const hourly = await rollRange(HOURLY_WATERMARK, "h", hourlyUntil, hourStart, hourEnd);
  if (hourly === null) return { ...report, stopped: true };
  report.hourlyBuckets = hourly;

  const dailyUntil = await getWatermark(ctx.db, DAILY_WATERMARK);
  const dayEnd = bucketStart(now - DAILY_GRACE_MS, "d");
  const dayStart = Math.max(alignUp(rawCutoff, DAY_MS), dailyUntil ?? -Infinity);
  const daily = await rollRange(DAILY_WATERMARK, "d", dailyUntil, dayStart, dayEnd);
  if (daily === null) return { ...report, stopped: true };
  report.dailyBuckets = daily;

  // prune only what both rollups have already taken in
  const pruneBefore = Math.min(rawCutoff, (await getWatermark(ctx.db, HOURLY_WATERMARK)) ?? -Infinity, (await getWatermark(ctx.db, DAILY_WATERMARK)) ?? -Infinity);
  const batch = opts.batchSize ?? 5000;
  const maxPruned = opts.maxPrunedPerRun ?? 1_000_000;
  const hourlyKeep = now - HOURLY_ROLLUP_KEEP_DAYS * DAY_MS;
  const dailyKeep = now - DAILY_ROLLUP_KEEP_DAYS * DAY_MS;
  const ids = union(
    Number.isFinite(pruneBefore) ? await monitorsWithData(ctx.db, Number.MIN_SAFE_INTEGER, pruneBefore) : [],
    await monitorsWithData(ctx.db, Number.MIN_SAFE_INTEGER, hourlyKeep, "h"),
    await monitorsWithData(ctx.db, Number.MIN_SAFE_INTEGER, dailyKeep, "d"),
  );
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    // A monitor with nothing to prune resolves without touching the event loop: 10,000 of them in
    // a row held it for over a second (heartbeat bench: p99 1.3 s right after start-up).
    if (i % 100 === 99) await pause();
    for (let guard = 0; guard < 10_000 && report.checksPruned < maxPruned; guard++) {
      if (stop()) return { ...report, stopped: true };
      const n = await pruneChecks(ctx.db, id, pruneBefore, Math.min(batch, maxPruned - report.checksPruned));
      report.checksPruned += n;
      if (n > 0) await pause();
      if (n < batch) break;
    }
    report.rollupsPruned += await pruneRollups(ctx.db, id, "h", hourlyKeep);
    report.rollupsPruned += await pruneRollups(ctx.db, id, "d", dailyKeep);
  }
  // packed checks go by whole hours: a block is rewritten at most once an hour, not every run
  const packedBefore = Number.isFinite(pruneBefore) ? bucketStart(pruneBefore, "h") : null;
  const packedIds = packedBefore === null ? [] : await monitorsWithPackedChecksBefore(ctx.db, packedBefore);
  const pruned = await inTimeSlices(ctx.db, packedIds, stop, pause, async (trx, id) => {
    report.checksPruned += await guarded(id, () => prunePackedChecks(trx, id, packedBefore!));
  });
  if (!pruned) return { ...report, stopped: true };

  // what is left of the rows past the last whole hour is packed, then finished days into one block
  const packBefore = bucketStart(now - PACK_GRACE_MS, "h");
  const maxPacked = opts.maxPackedPerRun ?? 2_000_000;
  const packed = await inTimeSlices(ctx.db, await monitorsWithCheckRows(ctx.db, Number.MIN_SAFE_INTEGER, packBefore), stop, pause, async (trx, id) => {
    if (report.checksPacked < maxPacked) report.checksPacked += await guarded(id, () => packMonitorChecks(trx, id, packBefore));
  });
  if (!packed) return { ...report, stopped: true };
  const merged = await inTimeSlices(ctx.db, await monitorsWithHourBlocks(ctx.db, bucketStart(packBefore, "d")), stop, pause, async (trx, id) => {
    report.daysMerged += await guarded(id, () => mergeMonitorDays(trx, id, packBefore));
  });
  if (!merged) return { ...report, stopped: true };
  log.debug("maintenance done", { ...report });
  return report;
}

/**
 * `fn` for each monitor, in transactions of at most SLICE_MS of work, other work let in between;
 * false if stopped. Time rather than a count: merging a monitor's day unpacks and packs ~1,440
 * checks (several ms), packing an hour ~60, rolling up an hour anything from one check to
 * thousands, and a count right for one would hold the event loop for a second in the other
 * (storage bench).
 */
async function inTimeSlices(db: Db, ids: number[], stop: () => boolean, pause: () => Promise<void>, fn: (trx: Db, id: number) => Promise<void>): Promise<boolean> {
  let i = 0;
  while (i < ids.length) {
    if (stop()) return false;
    const until = performance.now() + SLICE_MS;
    await db.transaction().execute(async (trx) => {
      do await fn(trx, ids[i++]!);
      while (i < ids.length && performance.now() < until);
    });
    await pause();
  }
  return true;
}
