import type { Db } from "./database.ts";
import { fixedQuery } from "./fixed-query.ts";
import { inCodePointOrder } from "./text-match.ts";
import type { Selectable } from "kysely";
import type { MonitorRegionStatesTable } from "./tables.ts";

export type RegionStateRow = Selectable<MonitorRegionStatesTable>;

const regionStatesOf = fixedQuery((db, v: { id: number }) =>
  db.selectFrom("monitor_region_states").selectAll().where("monitor_id", "=", v.id).orderBy(inCodePointOrder(db, "region")),
);

/** Every region's view of one monitor (what the consensus rule reads). */
export async function listRegionStates(db: Db, monitorId: number): Promise<RegionStateRow[]> {
  return (await regionStatesOf(db, { id: monitorId })).rows;
}

const regionStateUpsert = fixedQuery((db, s: RegionStateRow) =>
  db
    .insertInto("monitor_region_states")
    .values({
      monitor_id: s.monitor_id,
      region: s.region,
      last_status: s.last_status,
      last_checked_at: s.last_checked_at,
      consecutive_down: s.consecutive_down,
      last_check_id: s.last_check_id,
      last_latency_ms: s.last_latency_ms,
    })
    .onConflict((oc) =>
      oc.columns(["monitor_id", "region"]).doUpdateSet({
        last_status: s.last_status,
        last_checked_at: s.last_checked_at,
        consecutive_down: s.consecutive_down,
        last_check_id: s.last_check_id,
        last_latency_ms: s.last_latency_ms,
      }),
    ),
);

export async function upsertRegionState(db: Db, s: RegionStateRow): Promise<void> {
  await regionStateUpsert(db, s);
}


/** Takes a region out of a monitor's quorum until it next reports a result that counts. */
export async function deleteRegionState(db: Db, monitorId: number, region: string): Promise<void> {
  await db.deleteFrom("monitor_region_states").where("monitor_id", "=", monitorId).where("region", "=", region).execute();
}
