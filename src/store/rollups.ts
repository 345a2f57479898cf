import { bucketSize, bucketStart, splitRange, summarize, uptimeOf, type BucketSummary, type Granularity, type Uptime, type UptimeCounts } from "../domain/uptime.ts";
import { checkSamples, monitorsWithPackedChecks } from "./check-blocks.ts";
import type { Db } from "./database.ts";
import { getKv, putKv } from "./kv.ts";
import { monitorIdsWhere } from "./monitor-ids.ts";
import type { JournaledPings } from "./ping-journal.ts";

/** kv keys: every bucket before this time has been rolled up (epoch ms, as text). */
export const HOURLY_WATERMARK = "rollups.hourly_until";
export const DAILY_WATERMARK = "rollups.daily_until";

export async function getWatermark(db: Db, key: string): Promise<number | null> {
  const value = await getKv(db, key);
  return value === null ? null : Number(value);
}

export async function setWatermark(db: Db, key: string, at: number): Promise<void> {
  await putKv(db, key, String(at));
}

/**
 * Ids of the monitors with raw checks (rows or packed) in [from, to), or (with `g`) with rollups of granularity `g`
 * there: one statement, one index probe per monitor inside SQLite. Maintenance works only on
 * these; asking every monitor with a query of its own cost ~8 s for 110,000 monitors per run
 * with nothing to do.
 */
export async function monitorsWithData(db: Db, from: number, to: number, g?: Granularity): Promise<number[]> {
  if (g === undefined) {
    const packed = await monitorsWithPackedChecks(db, from, to);
    if (packed.length) return [...new Set([...(await monitorsWithRows(db, from, to)), ...packed])].sort((a, b) => a - b);
  }
  return monitorsWithRows(db, from, to, g);
}

/** Ids of the monitors with check rows (not packed ones) in [from, to). */
export async function monitorsWithCheckRows(db: Db, from: number, to: number): Promise<number[]> {
  return monitorsWithRows(db, from, to);
}

async function monitorsWithRows(db: Db, from: number, to: number, g?: Granularity): Promise<number[]> {
  return monitorIdsWhere(db, (eb) =>
    g === undefined
      ? eb.exists(eb.selectFrom("checks").select("checks.id").whereRef("checks.monitor_id", "=", "monitors.id").where("checks.checked_at", ">=", from).where("checks.checked_at", "<", to))
      : eb.exists(
          eb.selectFrom("check_rollups").select("check_rollups.bucket_start").whereRef("check_rollups.monitor_id", "=", "monitors.id").where("check_rollups.granularity", "=", g).where("check_rollups.bucket_start", ">=", from).where("check_rollups.bucket_start", "<", to),
        ),
  );
}

/**
 * Recomputes one monitor's buckets of granularity `g` in [from, to) from raw checks, replacing what
 * was there: running it twice gives the same rows. Callers keep [from, to) inside raw retention.
 */
export async function rollupMonitorRange(db: Db, monitorId: number, g: Granularity, from: number, to: number): Promise<number> {
  const samples = await checkSamples(db, [monitorId], from, to);
  const buckets = new Map<number, typeof samples>();
  for (const s of samples) {
    const b = bucketStart(s.checked_at, g);
    let list = buckets.get(b);
    if (!list) buckets.set(b, (list = []));
    list.push(s);
  }
  await db.deleteFrom("check_rollups").where("monitor_id", "=", monitorId).where("granularity", "=", g).where("bucket_start", ">=", from).where("bucket_start", "<", to).execute();
  for (const [start, list] of buckets) {
    await db
      .insertInto("check_rollups")
      .values({ monitor_id: monitorId, granularity: g, bucket_start: start, ...summarize(list) })
      .execute();
  }
  return buckets.size;
}

export interface RollupRow extends BucketSummary {
  bucket_start: number;
}

/** Deletes up to `limit` check rows of one monitor older than `before`; returns how many (packed ones: prunePackedChecks). */
export async function pruneChecks(db: Db, monitorId: number, before: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom("checks")
    .where("id", "in", (qb) => qb.selectFrom("checks").select("id").where("monitor_id", "=", monitorId).where("checked_at", "<", before).orderBy("checked_at").limit(limit))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function pruneRollups(db: Db, monitorId: number, g: Granularity, before: number): Promise<number> {
  const res = await db.deleteFrom("check_rollups").where("monitor_id", "=", monitorId).where("granularity", "=", g).where("bucket_start", "<", before).executeTakeFirst();
  return Number(res.numDeletedRows);
}

async function rollupCounts(db: Db, monitorId: number, g: Granularity, from: number, to: number): Promise<UptimeCounts> {
  const row = await db
    .selectFrom("check_rollups")
    .select((eb) => [eb.fn.sum<number>("up_count").as("up"), eb.fn.sum<number>("degraded_count").as("degraded"), eb.fn.sum<number>("down_count").as("down")])
    .where("monitor_id", "=", monitorId)
    .where("granularity", "=", g)
    .where("bucket_start", ">=", from)
    .where("bucket_start", "<", to)
    .executeTakeFirst();
  return { up: Number(row?.up ?? 0), degraded: Number(row?.degraded ?? 0), down: Number(row?.down ?? 0) };
}

async function rawCounts(db: Db, monitorId: number, from: number, to: number): Promise<UptimeCounts> {
  const c: UptimeCounts = { up: 0, degraded: 0, down: 0 };
  for (const r of await checkSamples(db, [monitorId], from, to)) if (r.status === "up" || r.status === "degraded" || r.status === "down") c[r.status]++;
  return c;
}

/**
 * Up/degraded/down counts and the uptime ratio of one monitor over [from, to), for status pages:
 * whole days from daily rollups, whole hours from hourly ones, and what is not rolled up yet (the
 * current hour, its journaled pings included) or not a whole hour from raw checks. A partial hour
 * older than raw retention counts nothing, as its checks are gone.
 */
export async function uptimeFromRollups(pings: JournaledPings, monitorId: number, from: number, to: number): Promise<Uptime> {
  const db = await pings.settled([monitorId]);
  const hourlyUntil = (await getWatermark(db, HOURLY_WATERMARK)) ?? 0;
  const dailyUntil = (await getWatermark(db, DAILY_WATERMARK)) ?? 0;
  const total: UptimeCounts = { up: 0, degraded: 0, down: 0 };
  for (const p of splitRange(from, to, hourlyUntil, dailyUntil)) {
    const c = p.source === "raw" ? await rawCounts(db, monitorId, p.from, p.to) : await rollupCounts(db, monitorId, p.source, p.from, p.to);
    total.up += c.up;
    total.degraded += c.degraded;
    total.down += c.down;
  }
  return uptimeOf(total);
}

/** The current, partial bucket computed on demand from raw checks, journaled pings included (not stored). */
export async function partialBucket(pings: JournaledPings, monitorId: number, g: Granularity, now: number): Promise<RollupRow> {
  const db = await pings.settled([monitorId]);
  const start = bucketStart(now, g);
  const samples = await checkSamples(db, [monitorId], start, start + bucketSize(g));
  return { bucket_start: start, ...summarize(samples) };
}
