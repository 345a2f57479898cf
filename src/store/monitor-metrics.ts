import type { Db } from "./database.ts";

/**
 * What /metrics shows of each monitor (README "Per-monitor metrics"), read at scrape time a page at a
 * time in id order: the monitors of one account (a token's scrape) or of every account
 * (--metrics-public). Pages keep each statement short, so a scrape of 100,000 monitors never holds
 * SQLite's one connection, or the event loop, for long.
 */
export interface MonitorMetricsRow {
  id: number;
  account_id: number;
  name: string;
  monitor_type: string;
  /** its group's name, null when it is in none */
  group_name: string | null;
  last_status: string;
  is_paused: number;
  is_in_maintenance: number;
  interval_sec: number;
  state_changed_at: number | null;
  regions: string | null;
  ssl_expiry_last_not_after: number | null;
}

/** Monitors with an id above `afterId`, in id order, at most `limit`; `accountId` null: every account's. */
export async function monitorMetricsPage(db: Db, accountId: number | null, afterId: number, limit: number): Promise<MonitorMetricsRow[]> {
  let q = db
    .selectFrom("monitors as m")
    .leftJoin("monitor_groups as g", (j) => j.onRef("g.id", "=", "m.group_id").onRef("g.account_id", "=", "m.account_id"))
    .select(["m.id", "m.account_id", "m.name", "m.monitor_type", "g.name as group_name", "m.last_status", "m.is_paused", "m.is_in_maintenance", "m.interval_sec", "m.state_changed_at", "m.regions", "m.ssl_expiry_last_not_after"])
    .where("m.id", ">", afterId);
  if (accountId !== null) q = q.where("m.account_id", "=", accountId);
  return q.orderBy("m.id").limit(limit).execute();
}

export interface RegionLatencyRow {
  monitor_id: number;
  region: string;
  last_checked_at: number;
  last_latency_ms: number;
}

/**
 * Each region's latency of its last check, for the monitors with ids in (afterId, throughId]: a range
 * of the primary key. The caller keeps the rows of the monitors on its page; the ranges of successive
 * pages do not overlap, so a whole scrape reads each row at most once.
 */
export async function regionLatencies(db: Db, afterId: number, throughId: number): Promise<RegionLatencyRow[]> {
  const rows = await db
    .selectFrom("monitor_region_states")
    .select(["monitor_id", "region", "last_checked_at", "last_latency_ms"])
    .where("monitor_id", ">", afterId)
    .where("monitor_id", "<=", throughId)
    .where("last_latency_ms", "is not", null)
    .execute();
  return rows as RegionLatencyRow[];
}

/** Account names by id: one account's, or every account's. */
export async function accountNames(db: Db, accountId: number | null): Promise<Map<number, string>> {
  let q = db.selectFrom("accounts").select(["id", "name"]);
  if (accountId !== null) q = q.where("id", "=", accountId);
  return new Map((await q.execute()).map((a) => [a.id, a.name]));
}
