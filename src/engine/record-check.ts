import type { AppContext } from "../context.ts";
import { withoutNul, type CheckResult } from "../domain/check-result.ts";
import { aggregateState, countsTowardQuorum, quorumRegions, type RegionView } from "../domain/consensus.ts";
import type { MonitorState } from "../domain/monitor.ts";
import { insertCheck, resultAlreadyStored } from "../store/checks.ts";
import { PACK_GRACE_MS } from "./retention.ts";
import type { Db } from "../store/database.ts";
import { deleteRegionState, listRegionStates, upsertRegionState, type RegionStateRow } from "../store/region-states.ts";
import { markMonitorChecked } from "../store/monitors.ts";
import { findMonitorRow } from "../store/schedule.ts";
import type { MonitorRow } from "../store/tables.ts";
import { monitorRegions } from "./probe-monitor.ts";
import { alertExpiryIfDue } from "./expiry-alerts.ts";
import { countIntoOpenIncident } from "./incident-failure.ts";
import { applyStateChange } from "./state-change.ts";
import { traceToStore } from "./trace-budget.ts";

export type DropReason = "deleted" | "paused" | "heartbeat" | "duplicate" | "region_excluded";

export type RecordOutcome =
  | {
      recorded: true;
      checkId: number;
      accountId: number;
      monitorType: string;
      from: MonitorState;
      to: MonitorState;
      changed: boolean;
      incidentOpened: number | null;
      incidentResolved: number | null;
      /** the synthetic trace was cut to a bound before it was stored */
      traceCut: boolean;
    }
  | { recorded: false; reason: DropReason };

/**
 * The one write path for check results, from the local scheduler and from probe peers alike. In one
 * transaction (shared with other results arriving at the same moment, see WriteQueue): the check
 * row (its synthetic trace within the bounds of traceToStore), the region's state, the monitor's
 * last_checked_at (and certificate expiry and issuer), the open incident's failure count, when the
 * consensus rule says so the state change with its incident and alert (applyStateChange), and an
 * expiry alert when one is due (alertExpiryIfDue).
 * `monitor.state` is announced after the commit.
 *
 * Results for deleted, paused and heartbeat monitors are dropped, as are repeats of a `resultUid`
 * (a peer re-delivering after a lost acknowledgement). `fromPeer` marks a probe peer's result, which
 * the quorum may leave out (countsTowardQuorum).
 */
export async function recordCheckResult(ctx: AppContext, monitorId: number, region: string, checked: CheckResult, resultUid?: string, fromPeer = false): Promise<RecordOutcome> {
  const result = withoutNul(checked);
  // keyed by monitor: its results stay in order, other monitors' go side by side on PostgreSQL
  const outcome = await ctx.writes.run((trx) => recordInTransaction(trx, ctx, monitorId, region, result, resultUid ?? null, fromPeer), { key: monitorId });
  if (outcome.recorded) ctx.metrics.checks.inc({ status: result.status, type: outcome.monitorType, region });
  if (outcome.recorded && outcome.changed) {
    ctx.events.emit("monitor.state", { monitorId, accountId: outcome.accountId, from: outcome.from, to: outcome.to, at: result.checked_at });
  }
  return outcome;
}

async function recordInTransaction(trx: Db, ctx: AppContext, monitorId: number, region: string, result: CheckResult, resultUid: string | null, fromPeer: boolean): Promise<RecordOutcome> {
  const monitor = await findMonitorRow(trx, monitorId);
  if (!monitor) return { recorded: false, reason: "deleted" };
  if (monitor.monitor_type === "heartbeat") return { recorded: false, reason: "heartbeat" };
  if (monitor.is_paused) return { recorded: false, reason: "paused" };
  const allowed = monitorRegions(monitor);
  if (allowed && !allowed.includes(region)) return { recorded: false, reason: "region_excluded" };
  // blocks hold only checks of hours that ended at least PACK_GRACE_MS before maintenance ran: a
  // result younger than that cannot be among them (the common case: one index probe, not two)
  const mayBePacked = result.checked_at < ctx.clock.now() - PACK_GRACE_MS;
  if (resultUid !== null && (await resultAlreadyStored(trx, monitorId, region, resultUid, result.checked_at, mayBePacked))) return { recorded: false, reason: "duplicate" };

  const trace = traceToStore(ctx, monitor.account_id, result.synthetic_trace_json);
  const checkId = await insertCheck(trx, monitorId, region, trace.cut ? { ...result, synthetic_trace_json: trace.trace } : result, resultUid);

  // the region's view moves only forward in time: a late, older result is kept as history only;
  // a newer one that does not count takes the region out of the quorum
  const counts = countsTowardQuorum(monitor, result.error_code, fromPeer);
  // every region's view in one read; after this result's write the list is updated here rather than
  // read again (on PostgreSQL each statement is a round trip, and a result is written with several)
  let states = await listRegionStates(trx, monitorId);
  const prev = stillValid(monitor, states.find((r) => r.region === region));
  const newest = !prev || prev.last_checked_at <= result.checked_at;
  if (newest && !counts) {
    if (prev) {
      await deleteRegionState(trx, monitorId, region);
      states = states.filter((r) => r.region !== region);
    }
  } else if (newest) {
    const row: RegionStateRow = {
      monitor_id: monitorId,
      region,
      last_status: result.status,
      last_checked_at: result.checked_at,
      consecutive_down: result.status === "down" ? (prev?.last_status === "down" ? prev.consecutive_down : 0) + 1 : 0,
      last_check_id: checkId,
      last_latency_ms: result.latency_ms,
    };
    await upsertRegionState(trx, row);
    states = [...states.filter((r) => r.region !== region), row];
  }

  const lastCheckedAt = Math.max(monitor.last_checked_at ?? 0, result.checked_at);
  await markMonitorChecked(trx, monitorId, monitor.monitor_type, lastCheckedAt, { notAfter: result.ssl_not_after, issuer: result.ssl_issuer });

  // while an incident is open every failed check, from any region, counts into it
  if (counts && result.status === "down") await countIntoOpenIncident(trx, monitorId, result);

  const regions = states
    .map((r) => stillValid(monitor, r))
    .filter((r): r is RegionStateRow => !!r && (!allowed || allowed.includes(r.region)))
    .map(toView);
  const from = monitor.last_status as MonitorState;
  const now = ctx.clock.now();
  const to = aggregateState({ current: from, intervalSec: monitor.interval_sec, now, confirmations: ctx.config.confirmations, regions });
  const base = { recorded: true as const, checkId, from, to, accountId: monitor.account_id, monitorType: monitor.monitor_type, traceCut: trace.cut };
  if (to === from) {
    await alertExpiryIfDue(trx, ctx, monitor, result, to);
    return { ...base, changed: false, incidentOpened: null, incidentResolved: null };
  }

  const change = await applyStateChange(trx, ctx, {
    monitor: { ...monitor, last_checked_at: lastCheckedAt },
    to,
    at: result.checked_at,
    checkId,
    errorCode: result.error_code,
    // a check that succeeded carries no error; its message is at most a note (latency not judged
    // while saturated) that an alert would otherwise show as the error of the change
    errorMessage: result.status === "up" ? null : result.error_message,
    httpCode: result.http_code,
    // failed checks since each reporting region's last success, this one included (a region
    // silent for 3 intervals is out of the quorum, and its old failures are not this incident's)
    failureCount: Math.max(1, quorumRegions(regions, monitor.interval_sec, now).reduce((n, r) => n + r.consecutive_down, 0)),
  });
  // after the state change, so a receiver hears of the change (down, say) before the expiry
  await alertExpiryIfDue(trx, ctx, monitor, result, change.changed ? to : from);
  return { ...base, changed: change.changed, incidentOpened: change.opened?.id ?? null, incidentResolved: change.resolved?.id ?? null };
}

/**
 * A monitor reset to `unknown` (resumed after a pause) starts over: region views older than the
 * reset no longer count, so downs from before the pause do not confirm a down after it.
 */
function stillValid(monitor: MonitorRow, r: RegionStateRow | undefined): RegionStateRow | undefined {
  if (!r) return undefined;
  if (monitor.last_status === "unknown" && monitor.state_changed_at !== null && r.last_checked_at < monitor.state_changed_at) return undefined;
  return r;
}

function toView(r: RegionStateRow): RegionView {
  return { region: r.region, last_status: r.last_status as RegionView["last_status"], last_checked_at: r.last_checked_at, consecutive_down: r.consecutive_down };
}
