import type { CheckResult } from "../domain/check-result.ts";
import type { Db } from "../store/database.ts";
import { addIncidentFailure, findOpenIncident } from "../store/incidents.ts";

/**
 * A failed check counts into the monitor's open incident, if one is open: one more failure, and
 * the incident's last error becomes this check's (docs/monitors.md "Incidents"). The one place for
 * it, whether the check came from a probe (engine/record-check.ts) or a heartbeat's reported
 * failure (heartbeat/apply-batch.ts).
 */
export async function countIntoOpenIncident(trx: Db, monitorId: number, check: CheckResult): Promise<void> {
  const open = await findOpenIncident(trx, monitorId);
  if (open) await addIncidentFailure(trx, open.id, { errorCode: check.error_code, errorMessage: check.error_message, httpCode: check.http_code, at: check.checked_at });
}
