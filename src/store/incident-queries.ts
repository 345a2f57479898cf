import type { Db } from "./database.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { IncidentRow } from "./tables.ts";

export interface IncidentFilter {
  monitorId?: number;
  /** true: only resolved; false: only open */
  resolved?: boolean;
  /** started_at bounds, epoch ms, inclusive */
  from?: number;
  to?: number;
}

/**
 * An account's incidents, started_at descending then id descending (docs/api-rules.md "Paging and
 * sorting").
 */
export async function listIncidents(db: Db, accountId: number, f: IncidentFilter, page: PageWindow): Promise<{ rows: IncidentRow[]; total: number }> {
  let query = db.selectFrom("incidents").where("account_id", "=", accountId);
  if (f.monitorId !== undefined) query = query.where("monitor_id", "=", f.monitorId);
  if (f.resolved !== undefined) query = query.where("status", "=", f.resolved ? "resolved" : "open");
  if (f.from !== undefined) query = query.where("started_at", ">=", f.from);
  if (f.to !== undefined) query = query.where("started_at", "<=", f.to);
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const rows = await query.selectAll().orderBy("started_at", "desc").orderBy("id", "desc").limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}

export async function findIncident(db: Db, accountId: number, id: number): Promise<IncidentRow | undefined> {
  return db.selectFrom("incidents").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

/**
 * Open incidents across the instance (/metrics): read through the partial index `incidents_open`,
 * so the cost follows the open incidents, not the whole history.
 */
export async function countOpenIncidents(db: Db): Promise<number> {
  const { n } = await openIncidentCountQuery(db).executeTakeFirstOrThrow();
  return Number(n);
}

/** The query countOpenIncidents runs (its plan is checked in test/store/open-incidents.test.ts). */
export function openIncidentCountQuery(db: Db) {
  return db
    .selectFrom("incidents")
    .where("status", "=", "open")
    .select((eb) => eb.fn.countAll<number>().as("n"));
}
