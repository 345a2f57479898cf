import { bucketStart, splitRange, type UptimeCounts } from "../domain/uptime.ts";
import { checkSamples } from "./check-blocks.ts";
import type { Db } from "./database.ts";
import type { JournaledPings } from "./ping-journal.ts";
import { DAILY_WATERMARK, getWatermark, HOURLY_WATERMARK } from "./rollups.ts";
import type { IncidentRow, StatusPageRow } from "./tables.ts";

/**
 * Reads for the public status pages: the page by slug or custom domain, its monitors, day-by-day
 * uptime and hour-by-hour latency for all of its monitors in a few queries (not one per day), and
 * its incidents. Uptime uses the same sources as uptimeFromRollups (rollups.ts): daily rollups,
 * then hourly ones, then raw checks for what is not rolled up yet (journaled pings included), split
 * by `splitRange`.
 */
export async function findStatusPageBySlug(db: Db, slug: string): Promise<StatusPageRow | undefined> {
  return db.selectFrom("status_pages").selectAll().where("slug", "=", slug).executeTakeFirst();
}

/** The page that serves at this host name: its custom domain, verified (README "Custom domains"). */
export async function findStatusPageByDomain(db: Db, domain: string): Promise<StatusPageRow | undefined> {
  return db.selectFrom("status_pages").selectAll().where("verified_domain", "=", domain).executeTakeFirst();
}

export interface PageMonitor {
  id: number;
  name: string;
  monitor_type: string;
  last_status: string;
  is_paused: number;
  is_in_maintenance: number;
  interval_sec: number;
  group_id: number | null;
}

export async function pageMonitors(db: Db, pageId: number): Promise<PageMonitor[]> {
  return db
    .selectFrom("status_page_monitors as spm")
    .innerJoin("monitors as m", "m.id", "spm.monitor_id")
    .select(["m.id", "m.name", "m.monitor_type", "m.last_status", "m.is_paused", "m.is_in_maintenance", "m.interval_sec", "m.group_id"])
    .where("spm.status_page_id", "=", pageId)
    .orderBy("spm.position")
    .execute();
}

type Counts = Map<number, Map<number, UptimeCounts>>;

function addCounts(out: Counts, monitorId: number, day: number, c: UptimeCounts): void {
  let days = out.get(monitorId);
  if (!days) out.set(monitorId, (days = new Map()));
  const cur = days.get(day) ?? { up: 0, degraded: 0, down: 0 };
  cur.up += c.up;
  cur.degraded += c.degraded;
  cur.down += c.down;
  days.set(day, cur);
}

async function watermarks(db: Db): Promise<{ hourlyUntil: number; dailyUntil: number }> {
  return { hourlyUntil: (await getWatermark(db, HOURLY_WATERMARK)) ?? 0, dailyUntil: (await getWatermark(db, DAILY_WATERMARK)) ?? 0 };
}

/** Up/degraded/down counts per monitor per UTC day in [from, to). */
export async function dailyCounts(pings: JournaledPings, monitorIds: number[], from: number, to: number): Promise<Counts> {
  const out: Counts = new Map();
  if (monitorIds.length === 0) return out;
  const db = await pings.settled(monitorIds);
  const { hourlyUntil, dailyUntil } = await watermarks(db);
  for (const p of splitRange(from, to, hourlyUntil, dailyUntil)) {
    if (p.source === "raw") {
      // what is not rolled up yet is at most a few hours: counted one check at a time
      for (const r of await checkSamples(db, monitorIds, p.from, p.to)) {
        if (r.status !== "up" && r.status !== "degraded" && r.status !== "down") continue;
        const c = { up: 0, degraded: 0, down: 0 };
        c[r.status] = 1;
        addCounts(out, r.monitor_id, bucketStart(r.checked_at, "d"), c);
      }
      continue;
    }
    const rows = await db
      .selectFrom("check_rollups")
      .select(["monitor_id", "bucket_start", "up_count", "degraded_count", "down_count"])
      .where("monitor_id", "in", monitorIds)
      .where("granularity", "=", p.source)
      .where("bucket_start", ">=", p.from)
      .where("bucket_start", "<", p.to)
      .execute();
    for (const r of rows) addCounts(out, r.monitor_id, bucketStart(r.bucket_start, "d"), { up: r.up_count, degraded: r.degraded_count, down: r.down_count });
  }
  return out;
}

export interface LatencyPoint {
  sum: number;
  count: number;
}

/** Latency sums and counts per monitor per UTC hour in [from, to): hourly rollups, then raw checks. */
export async function hourlyLatency(pings: JournaledPings, monitorIds: number[], from: number, to: number): Promise<Map<number, Map<number, LatencyPoint>>> {
  const out = new Map<number, Map<number, LatencyPoint>>();
  if (monitorIds.length === 0) return out;
  const db = await pings.settled(monitorIds);
  const add = (id: number, hour: number, sum: number, count: number) => {
    if (count <= 0) return;
    let hours = out.get(id);
    if (!hours) out.set(id, (hours = new Map()));
    const cur = hours.get(hour) ?? { sum: 0, count: 0 };
    cur.sum += sum;
    cur.count += count;
    hours.set(hour, cur);
  };
  const { hourlyUntil } = await watermarks(db);
  for (const p of splitRange(from, to, hourlyUntil, 0)) {
    if (p.source === "raw") {
      for (const r of await checkSamples(db, monitorIds, p.from, p.to)) if (r.latency_ms !== null) add(r.monitor_id, bucketStart(r.checked_at, "h"), r.latency_ms, 1);
      continue;
    }
    const rows = await db
      .selectFrom("check_rollups")
      .select(["monitor_id", "bucket_start", "latency_sum", "latency_count"])
      .where("monitor_id", "in", monitorIds)
      .where("granularity", "=", "h")
      .where("bucket_start", ">=", p.from)
      .where("bucket_start", "<", p.to)
      .execute();
    for (const r of rows) add(r.monitor_id, r.bucket_start, r.latency_sum, r.latency_count);
  }
  return out;
}

/** Open incidents of these monitors, and those that started since `since`; newest first. */
export async function pageIncidents(db: Db, monitorIds: number[], since: number, limit: number): Promise<IncidentRow[]> {
  if (monitorIds.length === 0) return [];
  return db
    .selectFrom("incidents")
    .selectAll()
    .where("monitor_id", "in", monitorIds)
    .where((eb) => eb.or([eb("status", "=", "open"), eb("started_at", ">=", since)]))
    .orderBy("started_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}

export interface BadgeMonitor extends PageMonitor {
  ssl_expiry_last_not_after: number | null;
  ssl_expiry_warn_days: number | null;
  domain_expiry_warn_days: number | null;
}

/** One monitor of the page, with what its badges show beyond the state; undefined when it is not on the page. */
export async function pageMonitor(db: Db, pageId: number, monitorId: number): Promise<BadgeMonitor | undefined> {
  return db
    .selectFrom("status_page_monitors as spm")
    .innerJoin("monitors as m", "m.id", "spm.monitor_id")
    .select(["m.id", "m.name", "m.monitor_type", "m.last_status", "m.is_paused", "m.is_in_maintenance", "m.interval_sec", "m.group_id", "m.ssl_expiry_last_not_after", "m.ssl_expiry_warn_days", "m.domain_expiry_warn_days"])
    .where("spm.status_page_id", "=", pageId)
    .where("spm.monitor_id", "=", monitorId)
    .executeTakeFirst();
}
