import type { AppContext } from "../context.ts";
import { latestTransition } from "../store/alerts.ts";
import type { Db } from "../store/database.ts";
import { holdForParent, releaseHeldIncident } from "../store/incidents.ts";
import { downParentIncidentId, heldChildIncidents, strandedHeldIncidents } from "../store/monitor-dependencies.ts";
import { findMonitorRow } from "../store/schedule.ts";
import type { IncidentRow } from "../store/tables.ts";
import { raiseAlert } from "./alerts.ts";
import { planFollowups } from "./followups.ts";
import { inMaintenance } from "./in-maintenance.ts";

/**
 * Dependencies (README "Dependencies, reminders and escalation"): an incident that opens while a
 * monitor it depends on is down (has an open incident) names that incident and alerts nobody, nor
 * does its recovery; if it is still open once every parent is up again, it alerts then, with
 * monitor.down, and its reminders and escalation start. Everything here runs inside the
 * transaction of the state change that caused it (engine/state-change.ts), on any instance, for
 * checked and heartbeat monitors alike; the follow-up service sweeps up what two concurrent
 * transactions could not see of each other.
 */

/** Holds a just-opened incident for a parent that is down; returns it as it now is. */
export async function holdUnderDownParent(db: Db, ctx: AppContext, incident: IncidentRow): Promise<IncidentRow> {
  const parentIncident = await downParentIncidentId(db, incident.monitor_id);
  if (parentIncident === null) return incident;
  ctx.log.child("alerts").info("alert held: a monitor it depends on is down", { monitor_id: incident.monitor_id, incident_id: incident.id, parent_incident_id: parentIncident });
  return holdForParent(db, incident.id, parentIncident);
}

/** A monitor's incident resolved: its children still down whose parents are all up now alert. */
export async function releaseChildren(db: Db, ctx: AppContext, parentId: number, at: number): Promise<void> {
  for (const child of await heldChildIncidents(db, parentId)) {
    if ((await downParentIncidentId(db, child.monitor_id)) !== null) continue; // another parent is still down
    await releaseHeld(db, ctx, child, at);
  }
}

/**
 * Releases held incidents no parent holds any more (a parent's recovery committed beside the
 * child's opening, neither seeing the other; a parent deleted or unlinked). Returns how many alerted.
 */
export async function releaseStrandedHolds(ctx: AppContext, limit = 100): Promise<number> {
  let released = 0;
  for (const incident of await strandedHeldIncidents(ctx.db, limit)) {
    // one job each, judged again inside it: a parent may have gone down since the read
    const done = await ctx.writes.run(async (trx) => {
      if ((await downParentIncidentId(trx, incident.monitor_id)) !== null) return false;
      return releaseHeld(trx, ctx, incident, ctx.clock.now());
    });
    if (done) released++;
  }
  return released;
}

/** The held down alert goes out now; only the caller whose conditional update releases it sends it. */
async function releaseHeld(db: Db, ctx: AppContext, held: IncidentRow, at: number): Promise<boolean> {
  const incident = await releaseHeldIncident(db, held.id);
  if (!incident) return false;
  const monitor = await findMonitorRow(db, incident.monitor_id);
  if (!monitor) return false;
  ctx.log.child("alerts").info("held alert released: every monitor it depends on is up", { monitor_id: monitor.id, incident_id: incident.id });
  // paused or in maintenance meanwhile: no alert, as for any change of such a monitor
  if (monitor.is_paused || (await inMaintenance(db, monitor, at))) return true;
  const transition = await latestTransition(db, monitor.id);
  await raiseAlert(db, ctx, {
    monitor,
    event: "monitor.down",
    state: "down",
    previousState: transition?.from_state ?? "unknown",
    at,
    incident,
    errorCode: incident.last_error_code,
    errorMessage: incident.last_error_message,
  });
  await planFollowups(db, monitor, incident, at);
  return true;
}
