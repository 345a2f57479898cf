import type { Db } from "./database.ts";
import type { PageWindow } from "./monitors.ts";
import type { CheckRow } from "./tables.ts";

export interface CheckFilter {
  status?: string;
  /** epoch ms, inclusive */
  from?: number;
  /** epoch ms, inclusive */
  to?: number;
  region?: string;
}

/** A monitor's checks, newest first (decisions.md "Resources": checks by checked_at descending). */
export async function listChecks(db: Db, monitorId: number, f: CheckFilter, page: PageWindow): Promise<{ rows: CheckRow[]; total: number }> {
  let query = db.selectFrom("checks").where("monitor_id", "=", monitorId);
  if (f.status) query = query.where("status", "=", f.status);
  if (f.from !== undefined) query = query.where("checked_at", ">=", f.from);
  if (f.to !== undefined) query = query.where("checked_at", "<=", f.to);
  if (f.region) query = query.where("region", "=", f.region);
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  // id breaks ties between checks of the same millisecond so paging never repeats or skips one
  const rows = await query.selectAll().orderBy("checked_at", "desc").orderBy("id", "desc").limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}
