import type { Db } from "./database.ts";
import { engineOf } from "./engine-of.ts";
import { firstRow, fixedQuery } from "./fixed-query.ts";
import type { IncidentRow } from "./tables.ts";

const openIncidentOf = fixedQuery((db, v: { id: number }) => db.selectFrom("incidents").selectAll().where("monitor_id", "=", v.id).where("status", "=", "open"));

export async function findOpenIncident(db: Db, monitorId: number): Promise<IncidentRow | undefined> {
  return firstRow(openIncidentOf(db, { id: monitorId }));
}

export async function insertIncident(
  db: Db,
  i: { accountId: number; monitorId: number; startedAt: number; rootCheckId: number | null; errorCode: string | null; errorMessage: string | null; httpCode: number | null; failureCount: number },
): Promise<IncidentRow> {
  return db
    .insertInto("incidents")
    .values({
      account_id: i.accountId,
      monitor_id: i.monitorId,
      status: "open",
      started_at: i.startedAt,
      failure_count: i.failureCount,
      last_error_code: i.errorCode,
      last_error_message: i.errorMessage,
      last_http_code: i.httpCode,
      root_check_id: i.rootCheckId,
      created_at: i.startedAt,
      updated_at: i.startedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Counts one more failed check into an open incident and keeps its last error current. */
export async function addIncidentFailure(
  db: Db,
  incidentId: number,
  f: { errorCode: string | null; errorMessage: string | null; httpCode: number | null; at: number },
): Promise<void> {
  await incidentFailure(db, { id: incidentId, ...f });
}

const incidentFailure = fixedQuery((db, v: { id: number; errorCode: string | null; errorMessage: string | null; httpCode: number | null; at: number }) =>
  db
    .updateTable("incidents")
    .set((eb) => ({
      failure_count: eb("failure_count", "+", 1),
      last_error_code: v.errorCode,
      last_error_message: v.errorMessage,
      last_http_code: v.httpCode,
      updated_at: v.at,
    }))
    .where("id", "=", v.id),
);

/** duration_ms is resolved_at - started_at rounded to whole seconds (docs/monitors.md "Incidents"). */
export async function resolveIncidentRow(db: Db, incident: IncidentRow, at: number, resolvedCheckId: number | null): Promise<IncidentRow> {
  const duration = Math.round((at - incident.started_at) / 1000) * 1000;
  return db
    .updateTable("incidents")
    .set({ status: "resolved", resolved_at: at, duration_ms: duration, resolved_check_id: resolvedCheckId, updated_at: at })
    .where("id", "=", incident.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The incident opened while a monitor it depends on was down (engine/dependencies.ts): it names
 * that monitor's incident, and its alerts wait until every parent is up again.
 */
export async function holdForParent(db: Db, incidentId: number, parentIncidentId: number): Promise<IncidentRow> {
  return db.updateTable("incidents").set({ parent_incident_id: parentIncidentId, held_for_parent: 1 }).where("id", "=", incidentId).returningAll().executeTakeFirstOrThrow();
}

/**
 * Lets a held incident alert, if it still is open and held: the conditional update makes the one
 * that releases it (the parent's recovery, or the engine's sweep) the only one that alerts.
 */
export async function releaseHeldIncident(db: Db, incidentId: number): Promise<IncidentRow | undefined> {
  return db.updateTable("incidents").set({ held_for_parent: 0 }).where("id", "=", incidentId).where("held_for_parent", "=", 1).where("status", "=", "open").returningAll().executeTakeFirst();
}

/** Marks an open incident escalated (its recovery then goes to the escalation channels too). */
export async function markEscalated(db: Db, incidentId: number, at: number): Promise<IncidentRow | undefined> {
  return db.updateTable("incidents").set({ escalated_at: at }).where("id", "=", incidentId).where("status", "=", "open").where("held_for_parent", "=", 0).returningAll().executeTakeFirst();
}

/**
 * An incident read to act on it within the transaction (a reminder, an escalation), held until the
 * commit on PostgreSQL, so it is locked before anything else of it, in the order a resolution locks
 * it; SQLite has one writer at a time already.
 */
export async function lockIncident(db: Db, incidentId: number): Promise<IncidentRow | undefined> {
  const q = db.selectFrom("incidents").selectAll().where("id", "=", incidentId);
  return (engineOf(db) === "postgres" ? q.forUpdate() : q).executeTakeFirst();
}
