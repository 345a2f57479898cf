import type { Db } from "./database.ts";
import type { PageWindow } from "./monitors.ts";
import type { MonitorEventRow } from "./tables.ts";

/** A monitor's timeline (pings, transitions, token rotations), newest first. */
export async function listMonitorEvents(db: Db, monitorId: number, f: { kind?: string }, page: PageWindow): Promise<{ rows: MonitorEventRow[]; total: number }> {
  let query = db.selectFrom("monitor_events").where("monitor_id", "=", monitorId);
  if (f.kind) query = query.where("kind", "=", f.kind);
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const rows = await query.selectAll().orderBy("at", "desc").orderBy("id", "desc").limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}
