import type { Db } from "./database.ts";
import type { IncidentRow } from "./tables.ts";

export async function findOpenIncident(db: Db, monitorId: number): Promise<IncidentRow | undefined> {
  return db.selectFrom("incidents").selectAll().where("monitor_id", "=", monitorId).where("status", "=", "open").executeTakeFirst();
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
  await db
    .updateTable("incidents")
    .set((eb) => ({
      failure_count: eb("failure_count", "+", 1),
      last_error_code: f.errorCode,
      last_error_message: f.errorMessage,
      last_http_code: f.httpCode,
      updated_at: f.at,
    }))
    .where("id", "=", incidentId)
    .execute();
}

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
