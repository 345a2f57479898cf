import type { AppContext } from "../context.ts";
import type { Db } from "../store/database.ts";
import { enabledEscalationChannelIds } from "../store/escalation-channels.ts";
import { cancelFollowups } from "../store/incident-followups.ts";
import type { IncidentRow, MonitorRow } from "../store/tables.ts";
import { holdUnderDownParent, releaseChildren } from "./dependencies.ts";
import { planFollowups } from "./followups.ts";

/** What the state change's alert becomes: none at all (`silent`), or also sent to `alsoChannelIds`. */
export interface IncidentFollow {
  silent: boolean;
  alsoChannelIds: number[];
}

const AS_USUAL: IncidentFollow = Object.freeze({ silent: false, alsoChannelIds: [] });

/**
 * What an incident that a state change opened or resolved means beyond itself (README
 * "Dependencies, reminders and escalation"), inside the change's transaction and before its alert is
 * queued: an opening under a parent that is down is held (no alert), others plan their reminders and
 * escalation; a resolution cancels what was still due, lets the children it held alert, sends no
 * recovery for an incident that never alerted, and sends it to the escalation channels too when the
 * incident had escalated.
 */
export async function followIncident(db: Db, ctx: AppContext, monitor: MonitorRow, opened: IncidentRow | null, resolved: IncidentRow | null, at: number): Promise<IncidentFollow> {
  if (opened) {
    const incident = await holdUnderDownParent(db, ctx, opened);
    if (incident.held_for_parent) return { silent: true, alsoChannelIds: [] };
    await planFollowups(db, monitor, incident, at);
  }
  if (resolved) {
    // first, so a reminder claimed at this moment is queued before this recovery, never after it
    await cancelFollowups(db, resolved.id);
    await releaseChildren(db, ctx, monitor.id, at);
    if (resolved.held_for_parent) return { silent: true, alsoChannelIds: [] };
    if (resolved.escalated_at !== null) return { silent: false, alsoChannelIds: await enabledEscalationChannelIds(db, monitor.account_id, monitor.id) };
  }
  return AS_USUAL;
}
