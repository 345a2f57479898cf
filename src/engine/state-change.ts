import type { AppContext } from "../context.ts";
import type { AlertEvent } from "../domain/alert-payload.ts";
import type { MonitorState } from "../domain/monitor.ts";
import type { Db } from "../store/database.ts";
import { findOpenIncident, insertIncident, resolveIncidentRow } from "../store/incidents.ts";
import { insertMonitorEvent } from "../store/monitor-events.ts";
import { setMonitorState } from "../store/monitors.ts";
import { noteMonitorChange } from "../store/status-subscriptions.ts";
import type { IncidentRow, MonitorRow } from "../store/tables.ts";
import { raiseAlert } from "./alerts.ts";
import { inMaintenance } from "./in-maintenance.ts";
import { followIncident } from "./incident-follow.ts";

export interface StateChange {
  monitor: MonitorRow;
  to: MonitorState;
  at: number;
  /** the check row that caused the change (root_check_id / resolved_check_id) */
  checkId: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  httpCode: number | null;
  /** failed checks already counted when an incident opens (all regions, since the last success) */
  failureCount?: number;
  /** whether entering or leaving `degraded` alerts (heartbeat_notify_on_late); default false */
  alertOnDegraded?: boolean;
}

export interface StateChangeOutcome {
  changed: boolean;
  from: MonitorState;
  opened: IncidentRow | null;
  resolved: IncidentRow | null;
}

/**
 * The one way a monitor's aggregate state changes (a "flip", as Healthchecks calls it): the
 * timeline event, the monitor row, the incident and the alert are written together. Call inside a
 * transaction; emit `monitor.state` after it commits.
 *
 * Rules (docs/monitors.md "Incidents", "Maintenance and pause"): an incident opens when the monitor
 * turns down and resolves when it leaves down; maintenance (the switch, or an active maintenance
 * window: docs/maintenance-windows.md) opens no incident and sends no alert; a paused monitor does
 * not change state at all. An incident opened while a monitor it depends on is down sends no alert,
 * nor does its recovery (README "Dependencies, reminders and escalation").
 */
export async function applyStateChange(db: Db, ctx: AppContext, c: StateChange): Promise<StateChangeOutcome> {
  const from = c.monitor.last_status as MonitorState;
  const none: StateChangeOutcome = { changed: false, from, opened: null, resolved: null };
  if (from === c.to || c.monitor.is_paused) return none;

  // A conditional update makes a concurrent flip of the same monitor lose cleanly instead of
  // writing a second transition from a state that no longer holds.
  if (!(await setMonitorState(db, c.monitor.id, from, c.to, c.at))) return none;
  await insertMonitorEvent(db, { monitorId: c.monitor.id, kind: "transition", at: c.at, fromState: from, toState: c.to, reason: c.errorMessage });

  // decided with the row held (the update above), at the time of the decision: a window that ends
  // meanwhile either sees this change committed or is seen by it (engine/maintenance-end.ts)
  const maintenance = await inMaintenance(db, c.monitor, ctx.clock.now());
  let opened: IncidentRow | null = null;
  let resolved: IncidentRow | null = null;
  if (c.to === "down" && !maintenance) {
    if (!(await findOpenIncident(db, c.monitor.id))) {
      opened = await insertIncident(db, {
        accountId: c.monitor.account_id,
        monitorId: c.monitor.id,
        startedAt: c.at,
        rootCheckId: c.checkId,
        errorCode: c.errorCode,
        errorMessage: c.errorMessage,
        httpCode: c.httpCode,
        failureCount: c.failureCount ?? 1,
      });
    }
  } else if (from === "down") {
    const open = await findOpenIncident(db, c.monitor.id);
    if (open) resolved = await resolveIncidentRow(db, open, c.at, c.checkId);
  }

  // status page subscribers hear of an incident opening or resolving on a page's monitor, whoever
  // else is alerted: noted in this transaction, mailed with the page's other changes once they
  // have gathered for --status-mail-period (README "Email subscriptions")
  if (ctx.config.smtpUrl !== null && (opened || resolved)) {
    await noteMonitorChange(db, { monitorId: c.monitor.id, down: opened !== null, at: c.at });
  }

  // dependencies, reminders and escalation (engine/incident-follow.ts): may hold the alert back
  const follow = await followIncident(db, ctx, c.monitor, opened, resolved, c.at);
  if (!maintenance && !follow.silent) {
    const event = alertEventFor(from, c.to, c.alertOnDegraded ?? false);
    if (event) {
      await raiseAlert(db, ctx, {
        monitor: c.monitor,
        event,
        state: c.to,
        previousState: from,
        at: c.at,
        incident: opened ?? resolved,
        errorCode: c.errorCode,
        errorMessage: c.errorMessage,
        alsoChannelIds: follow.alsoChannelIds,
      });
    }
  }
  return { changed: true, from, opened, resolved };
}

/**
 * Which transitions alert (docs/notifications.md "Which changes alert"): down always; leaving down
 * always, since the incident resolves then (to up, or to degraded: a recovery nobody heard of would
 * leave the down alert standing); entering degraded otherwise, and recovering from it, only when
 * degraded alerts are on. `unknown` → up is no alert.
 */
export function alertEventFor(from: MonitorState, to: MonitorState, alertOnDegraded: boolean): AlertEvent | null {
  if (to === "down") return "monitor.down";
  if (to === "degraded") return from === "down" || alertOnDegraded ? "monitor.degraded" : null;
  if (to === "up") {
    if (from === "down") return "monitor.up";
    if (from === "degraded" && alertOnDegraded) return "monitor.up";
  }
  return null;
}
