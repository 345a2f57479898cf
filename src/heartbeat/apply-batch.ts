/**
 * What one batch of heartbeat work writes, inside the intake's transaction: pings (ping, start,
 * fail) and deadline evaluations, in arrival order, against the monitor rows as the transaction
 * sees them, one function per kind of op over the batch's state (batch-state.ts). Every state
 * change goes through applyStateChange, so a ping and a timer racing for the same monitor cannot
 * both flip it.
 */
import type { AppContext } from "../context.ts";
import { emptyResult, failed, type CheckResult } from "../domain/check-result.ts";
import { ACCEPTED, laterPing, opMonitorId, runDuration, type HeartbeatOp, type PingKind, type PingOutcome, type PingRequest } from "../domain/heartbeat-ping.ts";
import { dueHeartbeatState, heartbeatPlanOf, pingExpectedBy } from "../domain/heartbeat-rules.ts";
import { evaluatePingPayload } from "../domain/payload-policy.ts";
import { cutAt, FAIL_BODY_KEEP, failBody, PING_BODY_KEEP } from "../domain/ping-body.ts";
import { countIntoOpenIncident } from "../engine/incident-failure.ts";
import { toIso } from "../lib/dates.ts";
import type { Db } from "../store/database.ts";
import type { BatchStatements, PingMonitorRow } from "../store/ping-statements.ts";
import { BatchState, type BatchResult } from "./batch-state.ts";

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
  const batch = new BatchState(trx, ctx, stmts, read instanceof Promise ? await read : read);
  for (const op of ops) {
    // an op awaits only when it writes a state change or an incident: no promise per plain ping
    const writing = op.type === "evaluate" ? evaluateDeadline(batch, op.monitorId) : applyPing(batch, op.at, op.ping);
    if (writing !== undefined) await writing;
  }
  return batch.finish();
}

type PingOp = (b: BatchState, r: PingMonitorRow, at: number, ping: PingRequest) => Promise<void> | undefined;

const NOT_FOUND: PingOutcome = Object.freeze({ result: "not_found" });
const IGNORED: PingOutcome = Object.freeze({ result: "ignored" });

/** A ping for a monitor it reaches (its token still the monitor's), by kind; a paused monitor's is only recorded. */
function applyPing(b: BatchState, at: number, ping: PingRequest): Promise<void> | undefined {
  const r = b.heartbeat(ping.monitorId);
  if (!r || r.heartbeat_token !== ping.token) {
    b.answer(NOT_FOUND);
    return undefined;
  }
  b.touch(r);
  if (r.is_paused) {
    // a paused monitor's pings are ignored but recorded (docs/heartbeats.md "Answers")
    b.record({ monitorId: r.id, kind: ping.kind, at, sourceIp: ping.sourceIp, bodyBytes: cutAt(ping, PING_BODY_KEEP), result: "ignored", reason: "monitor is paused" });
    b.answer(IGNORED);
    return undefined;
  }
  return BY_KIND[ping.kind](b, r, at, ping);
}

/** /start: the run's start, which the next ping measures its duration from. */
const applyStart: PingOp = (b, r, at, ping) => {
  b.record({ monitorId: r.id, kind: "start", at, sourceIp: ping.sourceIp, bodyBytes: cutAt(ping, PING_BODY_KEEP), result: "accepted" });
  b.set(r, { heartbeat_last_start_at: at });
  b.answer(ACCEPTED);
  return undefined;
};

/** /fail and a non-zero exit code: down at once, or one more failure of the open incident. */
const applyFail: PingOp = (b, r, at, ping) => {
  const reason = ping.failReason ?? "the job reported a failure";
  const durationMs = runDuration(r.heartbeat_last_start_at, at);
  b.record({ monitorId: r.id, kind: "fail", at, sourceIp: ping.sourceIp, result: "accepted", reason, durationMs, body: failBody(ping.body), bodyBytes: cutAt(ping, FAIL_BODY_KEEP) });
  const check = failed(at, "heartbeat_failed", reason, { latency_ms: durationMs });
  b.set(r, { last_checked_at: at, heartbeat_last_start_at: null });
  b.answer(ACCEPTED);
  if (r.last_status !== "down") return b.changeState(r, check, null);
  b.addCheck(r.id, check);
  return r.is_in_maintenance ? undefined : countIntoOpenIncident(b.trx, r.id, check);
};

/** A plain ping (/0 included): judged by the payload policy, then up. */
const applyPlainPing: PingOp = (b, r, at, ping) => {
  const verdict = evaluatePingPayload(r.heartbeat_payload_policy, r.heartbeat_payload_status_key, ping.body, ping.exitCode);
  const bodyBytes = cutAt(ping, PING_BODY_KEEP);
  if (!verdict.valid) {
    b.record({ monitorId: r.id, kind: "ping", at, sourceIp: ping.sourceIp, bodyBytes, result: "rejected", reason: verdict.reason });
    b.answer({ result: "rejected", reason: verdict.reason });
    return undefined;
  }
  const durationMs = runDuration(r.heartbeat_last_start_at, at);
  // without intermediate objects: the first ping of a monitor in a while, or after a change
  if (bodyBytes === null) b.stmts.events.addPing(r.id, at, ping.sourceIp, durationMs);
  else b.record({ monitorId: r.id, kind: "ping", at, sourceIp: ping.sourceIp, bodyBytes, result: "accepted", durationMs });
  r.heartbeat_last_ping_at = laterPing(r.heartbeat_last_ping_at, at);
  r.last_checked_at = at;
  r.heartbeat_last_start_at = null;
  b.changed(r);
  b.answer(ACCEPTED);
  if (r.last_status !== "up") return b.changeState(r, { ...emptyResult(at), latency_ms: durationMs }, null);
  b.addPingCheck(r.id, at, durationMs);
  return undefined;
};

const BY_KIND: Record<PingKind, PingOp> = { ping: applyPlainPing, start: applyStart, fail: applyFail };

/** A deadline's evaluation (a timer fired, a monitor changed): degraded or down when its ping is overdue. */
function evaluateDeadline(b: BatchState, monitorId: number): Promise<void> | undefined {
  b.answer(null);
  const r = b.heartbeat(monitorId);
  if (!r) {
    b.result.deadlines.set(monitorId, null);
    return undefined;
  }
  b.touch(r);
  if (r.is_paused) return undefined;
  const now = b.ctx.clock.now();
  const plan = heartbeatPlanOf(r);
  const last = r.heartbeat_last_ping_at;
  const to = dueHeartbeatState(r.last_status, last, plan, now);
  if (!to || last === null) return undefined;
  const expected = pingExpectedBy(last, plan)!;
  const downAt = expected + plan.graceSec * 1000;
  const silence = `no ping for ${seconds(now - last)} (expected by ${toIso(expected)})`;
  let check: CheckResult;
  if (to === "degraded") {
    check = { ...emptyResult(now), status: "degraded", degraded_reason: `${silence}; down at ${toIso(downAt)} unless a valid ping arrives` };
  } else {
    check = failed(now, "heartbeat_missed", `${silence}: ${seconds(now - expected)} late${plan.graceSec > 0 ? `, grace of ${plan.graceSec} s over` : ""}`);
  }
  b.set(r, { last_checked_at: now });
  return b.changeState(r, check, now - (to === "down" ? downAt : expected));
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
}
