import type { PageWindow } from "../domain/page-window.ts";
import type { JournaledPings } from "./ping-journal.ts";
import type { MonitorEventRow } from "./tables.ts";

/** A monitor's timeline (pings, transitions, token rotations), newest first, its journaled pings included. */
export async function listMonitorEvents(pings: JournaledPings, monitorId: number, f: { kind?: string }, page: PageWindow): Promise<{ rows: MonitorEventRow[]; total: number }> {
  const db = await pings.settled([monitorId]);
  let query = db.selectFrom("monitor_events").where("monitor_id", "=", monitorId);
  if (f.kind) query = query.where("kind", "=", f.kind);
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const rows = await query.selectAll().orderBy("at", "desc").orderBy("id", "desc").limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}
