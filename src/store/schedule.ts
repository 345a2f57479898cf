import type { Db } from "./database.ts";
import type { MonitorRow } from "./tables.ts";

/**
 * Monitors the scheduler runs: not paused and pulled (heartbeat monitors are pushed). The region
 * filter (`regions` JSON) is applied by the caller, as JSON is not queried portably.
 */
export async function listSchedulableMonitors(db: Db): Promise<MonitorRow[]> {
  return db.selectFrom("monitors").selectAll().where("is_paused", "=", 0).where("monitor_type", "!=", "heartbeat").orderBy("id").execute();
}

export async function findMonitorRow(db: Db, monitorId: number): Promise<MonitorRow | undefined> {
  return db.selectFrom("monitors").selectAll().where("id", "=", monitorId).executeTakeFirst();
}

/**
 * Writes many monitors' next_run_at at once (null = not scheduled); one statement per monitor, in
 * the caller's transaction. A time is never written onto a monitor paused meanwhile: paused
 * monitors show next_run_at null (docs/monitors.md "Maintenance and pause").
 */
export async function setNextRunTimes(db: Db, times: ReadonlyMap<number, number | null>): Promise<void> {
  for (const [id, at] of times) {
    let q = db.updateTable("monitors").set({ next_run_at: at }).where("id", "=", id);
    if (at !== null) q = q.where("is_paused", "=", 0);
    await q.execute();
  }
}
