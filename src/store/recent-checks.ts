import { DAY_MS, splitRange, type UptimeCounts } from "../domain/uptime.ts";
import { checkSamples } from "./check-blocks.ts";
import type { Db } from "./database.ts";
import type { JournaledPings } from "./ping-journal.ts";
import { DAILY_WATERMARK, getWatermark, HOURLY_WATERMARK } from "./rollups.ts";

/**
 * Figures for a page of the dashboard's monitor list, for every monitor of the page at once (README
 * "Dashboard"): a handful of statements per page whatever its length, never one per row.
 */

export interface RecentCheck {
  status: string;
  checked_at: number;
}

/**
 * The last `n` check results of each monitor, oldest first: one statement, a UNION ALL of one
 * bounded probe of checks_monitor_time per monitor (a window function over the same rows would read
 * every check of every monitor). Checks older than an hour or two are packed into check_blocks
 * (README "State, scheduling and incidents"); a monitor with fewer than `n` rows left (one checked every few minutes)
 * gets the rest from its blocks of the day before its oldest row, read for all such monitors at once.
 */
export async function recentChecks(pings: JournaledPings, monitorIds: number[], n: number, now: number): Promise<Map<number, RecentCheck[]>> {
  const out = new Map<number, RecentCheck[]>(monitorIds.map((id) => [id, []]));
  if (monitorIds.length === 0) return out;
  const db = await pings.settled(monitorIds);
  const arm = (id: number) =>
    db.selectFrom((eb) => eb.selectFrom("checks").select(["monitor_id", "status", "checked_at"]).where("monitor_id", "=", id).orderBy("checked_at", "desc").limit(n).as(`r${id}`)).selectAll();
  const [first, ...rest] = monitorIds;
  const rows = await rest.reduce((q, id) => q.unionAll(arm(id)), arm(first!)).execute();
  for (const r of rows) out.get(r.monitor_id)?.push({ status: r.status, checked_at: Number(r.checked_at) });
  const short = monitorIds.filter((id) => out.get(id)!.length < n);
  if (short.length) {
    // each monitor's packed results older than its oldest row (rows and blocks never overlap in time)
    const oldest = new Map(short.map((id) => [id, Math.min(now + 1, ...out.get(id)!.map((r) => r.checked_at))]));
    const to = Math.max(...oldest.values());
    for (const sm of await checkSamples(db, short, now - DAY_MS, to)) {
      if (sm.checked_at < oldest.get(sm.monitor_id)!) out.get(sm.monitor_id)!.push({ status: sm.status, checked_at: sm.checked_at });
    }
  }
  for (const [id, list] of out) {
    list.sort((a, b) => a.checked_at - b.checked_at);
    if (list.length > n) out.set(id, list.slice(-n));
  }
  return out;
}

/**
 * Up/degraded/down counts of each monitor over [from, to), as uptimeFromRollups (store/rollups.ts)
 * counts one monitor's: rollups where they exist, raw checks for the rest; one statement per piece
 * of the range (at most a daily, an hourly and two raw ones), each for every monitor.
 */
export async function uptimeCountsOf(pings: JournaledPings, monitorIds: number[], from: number, to: number): Promise<Map<number, UptimeCounts>> {
  const out = new Map<number, UptimeCounts>(monitorIds.map((id) => [id, { up: 0, degraded: 0, down: 0 }]));
  if (monitorIds.length === 0) return out;
  const db = await pings.settled(monitorIds);
  const hourlyUntil = (await getWatermark(db, HOURLY_WATERMARK)) ?? 0;
  const dailyUntil = (await getWatermark(db, DAILY_WATERMARK)) ?? 0;
  const pieces = splitRange(from, to, hourlyUntil, dailyUntil);
  for (let i = 0; i < monitorIds.length; i += IDS_PER_STATEMENT) await countInto(db, out, monitorIds.slice(i, i + IDS_PER_STATEMENT), pieces);
  return out;
}

/**
 * Monitor ids one statement names at most. The dashboard's sort by uptime asks for every monitor of
 * an account, and an IN list past the engine's bound on one statement's values is an error
 * (PostgreSQL's protocol carries 65,535; Bun's SQLite takes 250,000).
 */
const IDS_PER_STATEMENT = 10_000;

async function countInto(db: Db, out: Map<number, UptimeCounts>, monitorIds: number[], pieces: ReturnType<typeof splitRange>): Promise<void> {
  await Promise.all(
    pieces.map(async (p) => {
      if (p.source === "raw") {
        for (const s of await checkSamples(db, monitorIds, p.from, p.to)) {
          const c = out.get(s.monitor_id);
          if (c && (s.status === "up" || s.status === "degraded" || s.status === "down")) c[s.status]++;
        }
        return;
      }
      const rows = await db
        .selectFrom("check_rollups")
        .select((eb) => ["monitor_id", eb.fn.sum<number>("up_count").as("up"), eb.fn.sum<number>("degraded_count").as("degraded"), eb.fn.sum<number>("down_count").as("down")])
        .where("monitor_id", "in", monitorIds)
        .where("granularity", "=", p.source)
        .where("bucket_start", ">=", p.from)
        .where("bucket_start", "<", p.to)
        .groupBy("monitor_id")
        .execute();
      for (const r of rows) {
        const c = out.get(r.monitor_id);
        if (!c) continue;
        c.up += Number(r.up ?? 0);
        c.degraded += Number(r.degraded ?? 0);
        c.down += Number(r.down ?? 0);
      }
    }),
  );
}
