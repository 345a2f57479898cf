import type { AppContext } from "../context.ts";
import type { CheckResult } from "../domain/check-result.ts";
import { expiryKind, expiryReason, expiryStage, expiryWarnDays, nextExpiryMark } from "../domain/expiry-stage.ts";
import type { Db } from "../store/database.ts";
import { insertMonitorEvent } from "../store/monitor-events.ts";
import { claimExpiryStage } from "../store/monitors.ts";
import type { MonitorRow } from "../store/tables.ts";
import { raiseExpiryAlert } from "./alerts.ts";
import { inMaintenance } from "./in-maintenance.ts";

/**
 * A check that saw an expiry date (a certificate's notAfter, a domain's registration expiry: any
 * check with `ssl_not_after`, whatever its type) alerts `monitor.expiring` when the date has reached
 * a stage not alerted yet (docs/notifications.md "Expiry alerts"): the stage is claimed on the
 * monitor row with a conditional update, and the timeline event and the outbox rows are written in
 * the same transaction, so each stage is queued once whichever region or instance saw it first,
 * and survives a restart. Maintenance sends none and claims nothing, so the first check after the
 * window alerts; a paused monitor records no check at all.
 */
export async function alertExpiryIfDue(db: Db, ctx: AppContext, monitor: MonitorRow, result: CheckResult, state: string): Promise<void> {
  const notAfter = result.ssl_not_after;
  const at = result.checked_at;
  if (notAfter === null || (await inMaintenance(db, monitor, at))) return;
  const last = { notAfter: monitor.expiry_alerted_not_after, stage: monitor.expiry_alert_stage };
  const next = nextExpiryMark(last, { notAfter, stage: expiryStage(notAfter, at, expiryWarnDays(monitor)) });
  if (!next || !(await claimExpiryStage(db, monitor.id, last, next))) return;
  const kind = expiryKind(monitor.monitor_type);
  const eventId = await insertMonitorEvent(db, { monitorId: monitor.id, kind: "expiring", at, reason: expiryReason(kind, notAfter, at), expiresAt: notAfter });
  await raiseExpiryAlert(db, ctx, { monitor, state, at, eventId, kind, notAfter });
}
