import type { Db } from "./database.ts";
import { inCodePointOrder } from "./text-match.ts";
import type { Selectable } from "kysely";
import type { MonitorRegionStatesTable } from "./tables.ts";

export type RegionStateRow = Selectable<MonitorRegionStatesTable>;

/** Every region's view of one monitor (what the consensus rule reads). */
export async function listRegionStates(db: Db, monitorId: number): Promise<RegionStateRow[]> {
  return db.selectFrom("monitor_region_states").selectAll().where("monitor_id", "=", monitorId).orderBy(inCodePointOrder(db, "region")).execute();
}

export async function upsertRegionState(db: Db, s: RegionStateRow): Promise<void> {
  await db
    .insertInto("monitor_region_states")
    .values(s)
    .onConflict((oc) =>
      oc.columns(["monitor_id", "region"]).doUpdateSet({
        last_status: s.last_status,
        last_checked_at: s.last_checked_at,
        consecutive_down: s.consecutive_down,
        last_check_id: s.last_check_id,
        last_latency_ms: s.last_latency_ms,
      }),
    )
    .execute();
}


/** Takes a region out of a monitor's quorum until it next reports a result that counts. */
export async function deleteRegionState(db: Db, monitorId: number, region: string): Promise<void> {
  await db.deleteFrom("monitor_region_states").where("monitor_id", "=", monitorId).where("region", "=", region).execute();
}
