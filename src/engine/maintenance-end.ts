import type { AppContext } from "../context.ts";
import type { Db } from "../store/database.ts";
import { findOpenIncident, insertIncident } from "../store/incidents.ts";
import { holdMonitorRow, latestDownCheck, stateBeforeDown } from "../store/maintenance-windows.ts";
import { listRegionStates } from "../store/region-states.ts";
import { findMonitorRow } from "../store/schedule.ts";
import type { MonitorRow } from "../store/tables.ts";
import { raiseAlert } from "./alerts.ts";
import { inMaintenance } from "./in-maintenance.ts";
import { followIncident } from "./incident-follow.ts";

/**
 * Monitors that left a maintenance window's maintenance (the window ended, was disabled, deleted,
 * moved, or let them go) and are still down open their incident now and alert, as if they had just
 * turned down (docs/maintenance-windows.md "When a window ends"). Nothing happens to a monitor that
 * is up, paused, still in maintenance (its switch, or another window), or already has an open
 * incident, so acting twice on one end opens one incident. Returns the incidents opened.
 */
export async function openIncidentsLeftByMaintenance(ctx: AppContext, monitorIds: readonly number[]): Promise<number[]> {
  const opened: number[] = [];
  // one job each: a monitor's row is held from its check to its incident, and one that fails
  // (deleted meanwhile) does not hold the others back
  for (const id of new Set(monitorIds)) {
    const incident = await ctx.writes.run((trx) => openIfStillDown(trx, ctx, id));
    if (incident !== null) opened.push(incident);
  }
  if (opened.length) ctx.log.child("maintenance-windows").info("maintenance ended with monitors down: incidents opened", { incidents: opened });
  return opened;
}

async function openIfStillDown(trx: Db, ctx: AppContext, monitorId: number): Promise<number | null> {
  await holdMonitorRow(trx, monitorId);
  const monitor = await findMonitorRow(trx, monitorId);
  if (!monitor || monitor.last_status !== "down" || monitor.is_paused) return null;
  const at = ctx.clock.now();
  if (await inMaintenance(trx, monitor, at)) return null;
  if (await findOpenIncident(trx, monitorId)) return null;
  const check = await latestDownCheck(trx, monitorId);
  // failed checks of the regions still counting down, as when an incident opens on a check
  const failures = (await listRegionStates(trx, monitorId)).filter((r) => r.last_status === "down").reduce((n, r) => n + r.consecutive_down, 0);
  const errorCode = check?.error_code ?? null;
  const errorMessage = check?.error_message ?? null;
  const incident = await insertIncident(trx, {
    accountId: monitor.account_id,
    monitorId,
    startedAt: at,
    rootCheckId: check?.id ?? null,
    errorCode,
    errorMessage,
    httpCode: check?.http_code ?? null,
    failureCount: Math.max(1, failures),
  });
  // under a parent that is down, the incident names the parent's and alerts nobody, as any other
  // opening does; otherwise its reminders and escalation are planned (engine/incident-follow.ts)
  const follow = await followIncident(trx, ctx, monitor, incident, null, at);
  if (follow.silent) return incident.id;
  await raiseAlert(trx, ctx, {
    monitor,
    event: "monitor.down",
    state: "down",
    previousState: (await stateBeforeDown(trx, monitorId)) ?? "down",
    at,
    incident,
    errorCode,
    errorMessage,
  });
  return incident.id;
}
