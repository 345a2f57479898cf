import type { MonitorType } from "../domain/monitor.ts";
import type { MonitorWriteResult } from "../domain/monitor-validation.ts";
import { intervalBelowMinimum, limitsOf, monitorLimitReached, type AccountLimitSettings } from "../domain/plan-limits.ts";
import { ApiError } from "../http/errors.ts";
import { countAccountMonitors } from "../store/accounts.ts";
import type { Db } from "../store/database.ts";

/**
 * The account's limits on its monitors (README "Security", Limits), judged by the monitor service
 * so the API, the dashboard, imports and `vigil apply` meet them alike. The account's row is read
 * at each write, so an operator's `vigil account update` holds from the next write on.
 */

/**
 * interval_sec under the account's minimum is a 422 on that attribute: on create, and on an update
 * that changes it (a monitor left as it was keeps an interval set before the minimum was raised).
 */
export function checkMinInterval(limits: AccountLimitSettings, v: MonitorWriteResult, type: MonitorType | null, before?: unknown): void {
  const interval = v.changes.interval_sec;
  if (type === "heartbeat" || typeof interval !== "number" || interval === before || v.details.interval_sec) return;
  if (interval < limitsOf(limits).minIntervalSec) (v.details.interval_sec ??= []).push(intervalBelowMinimum(limits));
}

/**
 * The 422 for a new monitor when the account holds its most already, or null. Run in the insert's
 * write job (which it must not fail: it answers rather than throws), so creates queued together
 * are counted one after the other.
 */
export async function monitorCountProblem(db: Db, accountId: number, limits: AccountLimitSettings): Promise<ApiError | null> {
  const max = limitsOf(limits).maxMonitors;
  if (max === null || (await countAccountMonitors(db, accountId)) < max) return null;
  const message = monitorLimitReached(limits, max);
  return new ApiError(422, "validation_error", message, { account: [message] });
}
