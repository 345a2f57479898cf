import type { AppContext } from "../context.ts";
import type { FollowupEvent } from "../domain/alert-payload.ts";
import { alertChannelIds } from "../store/alerts.ts";
import type { Db } from "../store/database.ts";
import { enabledEscalationChannelIds } from "../store/escalation-channels.ts";
import { claimFollowup, dueFollowups, incidentsMissingFollowups, planFollowup, type Followup } from "../store/incident-followups.ts";
import { lockIncident, markEscalated } from "../store/incidents.ts";
import { insertMonitorEvent } from "../store/monitor-events.ts";
import { findMonitorRow } from "../store/schedule.ts";
import type { IncidentRow, MonitorRow } from "../store/tables.ts";
import { raiseFollowupAlert } from "./alerts.ts";
import { inMaintenance } from "./in-maintenance.ts";

/**
 * Reminders and escalation (README "Dependencies, reminders and escalation"): while an incident
 * stays open, its down alert is sent again every alert_repeat_minutes (monitor.still_down), and once
 * it has been open escalate_after_minutes, to the escalation channels too (monitor.escalated). Each
 * is a due row of incident_followups, so it survives restarts; a due row is claimed with a
 * conditional update on its due time and its alerts are keyed by that due time, so one due time
 * fires once, on one instance; an incident's rows go when it resolves.
 */

const MINUTE_MS = 60_000;
/** a due escalation of a paused monitor, or one in maintenance, is looked at again this much later */
const POSTPONE_MS = MINUTE_MS;

const EVENTS: Record<Followup["kind"], FollowupEvent> = { repeat: "monitor.still_down", escalate: "monitor.escalated" };

/**
 * Plans what the monitor's settings ask for an incident whose down alert has just gone out at `at`:
 * the first reminder a repeat interval later, the escalation escalate_after_minutes after the
 * incident started (at once, for a child that alerts late). Kept as it is when already planned.
 */
export async function planFollowups(db: Db, monitor: MonitorRow, incident: IncidentRow, at: number): Promise<void> {
  if (monitor.alert_repeat_minutes !== null) await planFollowup(db, incident.id, "repeat", at + monitor.alert_repeat_minutes * MINUTE_MS);
  if (monitor.escalate_after_minutes !== null && incident.escalated_at === null) {
    await planFollowup(db, incident.id, "escalate", Math.max(at, incident.started_at + monitor.escalate_after_minutes * MINUTE_MS));
  }
}

/**
 * Fires the follow-ups due at `now`, each in a write job of its own; returns how many were taken.
 * Safe beside another instance doing the same: a due time is taken by one caller only.
 */
export async function fireDueFollowups(ctx: AppContext, now: number, limit = 100): Promise<number> {
  let fired = 0;
  for (const due of await dueFollowups(ctx.db, now, limit)) if (await ctx.writes.run((trx) => fire(trx, ctx, due, now))) fired++;
  return fired;
}

/** Plans the follow-ups of open incidents whose monitor's settings changed while they were open. */
export async function planMissingFollowups(ctx: AppContext, limit = 100): Promise<number> {
  const incidents = await incidentsMissingFollowups(ctx.db, limit);
  for (const incident of incidents) {
    await ctx.writes.run(async (trx) => {
      const monitor = await findMonitorRow(trx, incident.monitor_id);
      if (monitor) await planFollowups(trx, monitor, incident, ctx.clock.now());
    });
  }
  return incidents.length;
}

/** One due follow-up, claimed and sent inside `trx`; false when it was not this caller's to send. */
async function fire(trx: Db, ctx: AppContext, due: Followup, now: number): Promise<boolean> {
  const incident = await lockIncident(trx, due.incident_id);
  const monitor = incident ? await findMonitorRow(trx, incident.monitor_id) : undefined;
  // resolved (its rows are deleted with it, but a read may come first) or held: nothing is due
  if (!incident || !monitor || incident.status !== "open" || incident.held_for_parent) return claimFollowup(trx, due, null).then(() => false);
  const quiet = monitor.is_paused === 1 || (await inMaintenance(trx, monitor, now));

  let channelIds: number[];
  if (due.kind === "repeat") {
    if (monitor.alert_repeat_minutes === null) return claimFollowup(trx, due, null).then(() => false);
    const step = monitor.alert_repeat_minutes * MINUTE_MS;
    // the next one on the same beat; after a long stop, a beat from now rather than a burst
    const next = due.due_at + step > now ? due.due_at + step : now + step;
    if (!(await claimFollowup(trx, due, next)) || quiet) return false;
    const escalation = incident.escalated_at !== null ? await enabledEscalationChannelIds(trx, monitor.account_id, monitor.id) : [];
    channelIds = [...new Set([...(await alertChannelIds(trx, monitor.account_id, monitor.id)), ...escalation])];
  } else {
    if (monitor.escalate_after_minutes === null) return claimFollowup(trx, due, null).then(() => false);
    if (quiet) return claimFollowup(trx, due, now + POSTPONE_MS).then(() => false);
    if (!(await claimFollowup(trx, due, null)) || !(await markEscalated(trx, incident.id, now))) return false;
    channelIds = await enabledEscalationChannelIds(trx, monitor.account_id, monitor.id);
  }

  const event = EVENTS[due.kind];
  const downMinutes = Math.floor((now - incident.started_at) / MINUTE_MS);
  const told = channelIds.length === 0 ? "no channel to tell" : `${due.kind === "repeat" ? "reminder sent to" : "escalated to"} ${channelIds.length} channel${channelIds.length === 1 ? "" : "s"}`;
  await insertMonitorEvent(trx, { monitorId: monitor.id, kind: due.kind === "repeat" ? "still_down" : "escalated", at: now, reason: `down for ${downMinutes} min; ${told}` });
  ctx.log.child("alerts").info(due.kind === "repeat" ? "reminder queued: the incident is still open" : "incident escalated", { monitor_id: monitor.id, incident_id: incident.id, event, channels: channelIds.length });
  if (channelIds.length === 0) return true;

  // keyed by the due time: whoever sends this due time, and however often, it is one alert per channel
  await raiseFollowupAlert(trx, ctx, { monitor, incident, event, channelIds, key: `incident:${incident.id}:${due.kind}:${due.due_at}`, at: now });
  return true;
}
