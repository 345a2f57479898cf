/**
 * What one batch of heartbeat work writes, inside the intake's transaction: pings (ping, start,
 * fail) and deadline evaluations, in arrival order, against the monitor rows as the transaction
 * sees them. Every state change goes through applyStateChange, so a ping and a timer racing for the
 * same monitor cannot both flip it.
 */
import type { AppContext, AppEvents } from "../context.ts";
import { emptyResult, failed, type CheckResult, type CheckStatus } from "../domain/check-result.ts";
import { dueHeartbeatState, heartbeatPlanOf, nextHeartbeatTransition, pingExpectedBy } from "../domain/heartbeat-rules.ts";
import type { MonitorState } from "../domain/monitor.ts";
import { countIntoOpenIncident } from "../engine/incident-failure.ts";
import { applyStateChange } from "../engine/state-change.ts";
import { toIso } from "../lib/dates.ts";
import { insertCheck } from "../store/checks.ts";
import type { Db } from "../store/database.ts";
import type { NewMonitorEvent } from "../store/monitor-events.ts";
import type { BatchStatements, HeartbeatRowState, PingMonitorRow } from "../store/ping-statements.ts";
import { ACCEPTED, laterPing, opMonitorId, runDuration, type HeartbeatOp, type PingOutcome } from "../domain/heartbeat-ping.ts";
import { evaluatePingPayload } from "../domain/payload-policy.ts";
import { cutAt, FAIL_BODY_KEEP, failBody, PING_BODY_KEEP } from "../domain/ping-body.ts";

export interface Transition {
  monitorId: number;
  from: string;
  to: string;
  at: number;
  /** how long after its deadline a timer-driven transition was applied */
  lateMs: number | null;
}

export interface BatchResult {
  /** one per op, in order; null for evaluations */
  outcomes: (PingOutcome | null)[];
  /** the monitors whose deadline the timers must now hold (null: none) */
  deadlines: Map<number, number | null>;
  stateChanges: AppEvents["monitor.state"][];
  transitions: Transition[];
  /** check rows this batch wrote, by status (vigil_checks_total, counted once committed) */
  checks: Record<CheckStatus, number>;
}

/**
 * `trx` is the write queue's transaction; `stmts` are the ping store's statements on it (see
 * store/ping-statements.ts), used for the per-ping work, while the rare state changes go through
 * applyStateChange on `trx`.
 */
export async function applyBatch(trx: Db, ctx: AppContext, stmts: BatchStatements, ops: readonly HeartbeatOp[]): Promise<BatchResult> {
  // Rows are read inside the transaction, so they are the truth even if a change was committed a
  // moment ago and its monitor.changed has not been heard yet. (On SQLite, plain pings on up
  // monitors, nearly every request, do not come here: the ping store's journal takes them.)
  const read = stmts.pingMonitors(ops.map(opMonitorId));
  const rows = read instanceof Promise ? await read : read;
  const result: BatchResult = { outcomes: [], deadlines: new Map(), stateChanges: [], transitions: [], checks: { up: 0, down: 0, degraded: 0 } };
  const dirty = new Set<PingMonitorRow>();
  const touched = new Set<PingMonitorRow>();
  const record = (e: NewMonitorEvent) => stmts.events.add(e);
  const addCheck = (id: number, r: CheckResult) => {
    result.checks[r.status]++;
    stmts.checks.add(id, r);
  };
  const setFields = (r: PingMonitorRow, p: Partial<Omit<HeartbeatRowState, "id">>) => {
    Object.assign(r, p);
    dirty.add(r);
  };
  /** a state change and the check that caused it, written after every row the batch added before them */
  const flip = async (r: PingMonitorRow, to: MonitorState, check: CheckResult, errorCode: string | null, message: string | null, lateMs: number | null) => {
    result.checks[check.status]++;
    await stmts.flush();
    const checkId = await insertCheck(trx, r.id, ctx.config.region, check);
    // the whole row (alerts name the monitor), with what this batch changed in memory on top
    const full = await stmts.monitor(r.id);
    if (!full) return;
    const at = check.checked_at;
    const out = await applyStateChange(trx, ctx, {
      monitor: { ...full, ...r }, to, at, checkId, errorCode, errorMessage: message, httpCode: null,
      alertOnDegraded: r.heartbeat_notify_on_late === 1,
    });
    if (!out.changed) return;
    r.last_status = to;
    r.state_changed_at = at;
    result.stateChanges.push({ monitorId: r.id, accountId: r.account_id, from: out.from, to, at });
    result.transitions.push({ monitorId: r.id, from: out.from, to, at, lateMs });
  };

  for (const op of ops) {
    if (op.type === "evaluate") {
      result.outcomes.push(null);
      const r = rows.get(op.monitorId);
      if (!r || r.monitor_type !== "heartbeat") {
        result.deadlines.set(op.monitorId, null);
        continue;
      }
      touched.add(r);
      if (r.is_paused) continue;
      const now = ctx.clock.now();
      const plan = heartbeatPlanOf(r);
      const last = r.heartbeat_last_ping_at;
      const to = dueHeartbeatState(r.last_status, last, plan, now);
      if (!to || last === null) continue;
      const expected = pingExpectedBy(last, plan)!;
      const downAt = expected + plan.graceSec * 1000;
      const silence = `no ping for ${seconds(now - last)} (expected by ${toIso(expected)})`;
      let check: CheckResult;
      let message: string;
      if (to === "degraded") {
        message = `${silence}; down at ${toIso(downAt)} unless a valid ping arrives`;
        check = { ...emptyResult(now), status: "degraded", degraded_reason: message };
      } else {
        message = `${silence}: ${seconds(now - expected)} late${plan.graceSec > 0 ? `, grace of ${plan.graceSec} s over` : ""}`;
        check = failed(now, "heartbeat_missed", message);
      }
      setFields(r, { last_checked_at: now });
      await flip(r, to, check, to === "down" ? "heartbeat_missed" : null, message, now - (to === "down" ? downAt : expected));
      continue;
    }

    const { ping, at } = op;
    const r = rows.get(ping.monitorId);
    if (!r || r.monitor_type !== "heartbeat" || r.heartbeat_token !== ping.token) {
      result.outcomes.push({ result: "not_found" });
      continue;
    }
    touched.add(r);
    const base = { monitorId: r.id, kind: ping.kind, at, sourceIp: ping.sourceIp, bodyBytes: cutAt(ping, PING_BODY_KEEP) } as const;
    if (r.is_paused) {
      // a paused monitor's pings are ignored but recorded (docs/heartbeats.md "Answers")
      record({ ...base, result: "ignored", reason: "monitor is paused" });
      result.outcomes.push({ result: "ignored" });
      continue;
    }
    if (ping.kind === "start") {
      record({ ...base, result: "accepted" });
      setFields(r, { heartbeat_last_start_at: at });
      result.outcomes.push({ result: "accepted" });
      continue;
    }
    const durationMs = runDuration(r.heartbeat_last_start_at, at);
    if (ping.kind === "fail") {
      const reason = ping.failReason ?? "the job reported a failure";
      record({ ...base, result: "accepted", reason, durationMs, body: failBody(ping.body), bodyBytes: cutAt(ping, FAIL_BODY_KEEP) });
      const check = failed(at, "heartbeat_failed", reason, { latency_ms: durationMs });
      setFields(r, { last_checked_at: at, heartbeat_last_start_at: null });
      if (r.last_status !== "down") {
        await flip(r, "down", check, "heartbeat_failed", reason, null);
      } else {
        addCheck(r.id, check);
        if (!r.is_in_maintenance) await countIntoOpenIncident(trx, r.id, check);
      }
      result.outcomes.push({ result: "accepted" });
      continue;
    }
    const verdict = evaluatePingPayload(r.heartbeat_payload_policy, r.heartbeat_payload_status_key, ping.body, ping.exitCode);
    if (!verdict.valid) {
      record({ ...base, result: "rejected", reason: verdict.reason });
      result.outcomes.push({ result: "rejected", reason: verdict.reason });
      continue;
    }
    // without intermediate objects: the first ping of a monitor in a while, or after a change
    if (base.bodyBytes === null) stmts.events.addPing(r.id, at, ping.sourceIp, durationMs);
    else record({ ...base, result: "accepted", durationMs });
    r.heartbeat_last_ping_at = laterPing(r.heartbeat_last_ping_at, at);
    r.last_checked_at = at;
    r.heartbeat_last_start_at = null;
    dirty.add(r);
    if (r.last_status !== "up") await flip(r, "up", { ...emptyResult(at), latency_ms: durationMs }, null, null, null);
    else {
      stmts.checks.addPing(r.id, at, durationMs);
      result.checks.up++;
    }
    result.outcomes.push(ACCEPTED);
  }
  for (const r of touched) {
    const next = r.is_paused ? null : nextHeartbeatTransition(r.last_status, r.heartbeat_last_ping_at, heartbeatPlanOf(r));
    const at = next?.at ?? null;
    if (at !== r.heartbeat_deadline_at) setFields(r, { heartbeat_deadline_at: at });
    result.deadlines.set(r.id, at);
  }
  // the rows were read in this transaction, so writing back their unchanged columns is harmless
  for (const r of dirty) stmts.updateBookkeeping(r);
  const flushed = stmts.flush();
  if (flushed) await flushed;
  return result;
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
}
