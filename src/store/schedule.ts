import type { Db } from "./database.ts";
import { firstRow, fixedQuery } from "./fixed-query.ts";
import type { MonitorRow } from "./tables.ts";

/**
 * Monitors the scheduler runs: not paused and pulled (heartbeat monitors are pushed). The region
 * filter (`regions` JSON) is applied by the caller, as JSON is not queried portably.
 */
export async function listSchedulableMonitors(db: Db): Promise<MonitorRow[]> {
  return db.selectFrom("monitors").selectAll().where("is_paused", "=", 0).where("monitor_type", "!=", "heartbeat").orderBy("id").execute();
}

const monitorById = fixedQuery((db, v: { id: number }) => db.selectFrom("monitors").selectAll().where("id", "=", v.id));

export async function findMonitorRow(db: Db, monitorId: number): Promise<MonitorRow | undefined> {
  return firstRow(monitorById(db, { id: monitorId }));
}

/**
 * Writes many monitors' next_run_at at once (null = not scheduled); one statement per monitor, in
 * the caller's transaction. A time is never written onto a monitor paused meanwhile: paused
 * monitors show next_run_at null (docs/monitors.md "Maintenance and pause").
 */
export async function setNextRunTimes(db: Db, times: ReadonlyMap<number, number | null>): Promise<void> {
  for (const [id, at] of times) await (at === null ? unscheduleMonitor(db, { id }) : scheduleMonitor(db, { id, at }));
}

const scheduleMonitor = fixedQuery((db, v: { id: number; at: number }) => db.updateTable("monitors").set({ next_run_at: v.at }).where("id", "=", v.id).where("is_paused", "=", 0));
const unscheduleMonitor = fixedQuery((db, v: { id: number }) => db.updateTable("monitors").set({ next_run_at: null }).where("id", "=", v.id));
