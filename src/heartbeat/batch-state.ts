/**
 * What the ops of one batch share while apply-batch.ts applies them: the transaction and the ping
 * store's statements on it, the monitor rows as the batch has left them so far, and what the batch
 * reports once it has committed. The ops change rows in memory; the rows' bookkeeping columns are
 * written once, at the end, and a state change goes through applyStateChange with its check.
 */
import type { AppContext, AppEvents } from "../context.ts";
import type { CheckResult, CheckStatus } from "../domain/check-result.ts";
import { heartbeatPlanOf, nextHeartbeatTransition } from "../domain/heartbeat-rules.ts";
import type { PingOutcome } from "../domain/heartbeat-ping.ts";
import { applyStateChange } from "../engine/state-change.ts";
import { insertCheck } from "../store/checks.ts";
import type { Db } from "../store/database.ts";
import type { NewMonitorEvent } from "../store/monitor-events.ts";
import type { BatchStatements, HeartbeatRowState, PingMonitorRow } from "../store/ping-statements.ts";

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

export class BatchState {
  readonly result: BatchResult = { outcomes: [], deadlines: new Map(), stateChanges: [], transitions: [], checks: { up: 0, down: 0, degraded: 0 } };
  /** rows whose bookkeeping columns this batch changed */
  private readonly dirty = new Set<PingMonitorRow>();
  /** rows an op was applied to: their deadlines go to the timers */
  private readonly touched = new Set<PingMonitorRow>();

  constructor(
    readonly trx: Db,
    readonly ctx: AppContext,
    readonly stmts: BatchStatements,
    /** read in this transaction (null: no such monitor) */
    private readonly rows: ReadonlyMap<number, PingMonitorRow | null>,
  ) {}

  /** The heartbeat monitor with this id, as the batch has left it; undefined if there is none (deleted, or another type). */
  heartbeat(monitorId: number): PingMonitorRow | undefined {
    const r = this.rows.get(monitorId);
    return r && r.monitor_type === "heartbeat" ? r : undefined;
  }

  /** An op is applied to this monitor: its deadline is worked out again at the end. */
  touch(r: PingMonitorRow): void {
    this.touched.add(r);
  }

  /** The next op's answer (null for an evaluation). */
  answer(outcome: PingOutcome | null): void {
    this.result.outcomes.push(outcome);
  }

  record(e: NewMonitorEvent): void {
    this.stmts.events.add(e);
  }

  addCheck(monitorId: number, check: CheckResult): void {
    this.result.checks[check.status]++;
    this.stmts.checks.add(monitorId, check);
  }

  /** an accepted ping's up check, without a result object (the ping path's every request) */
  addPingCheck(monitorId: number, at: number, durationMs: number | null): void {
    this.result.checks.up++;
    this.stmts.checks.addPing(monitorId, at, durationMs);
  }

  /** Changes a row's bookkeeping columns, written back at the end. */
  set(r: PingMonitorRow, fields: Partial<Omit<HeartbeatRowState, "id">>): void {
    Object.assign(r, fields);
    this.dirty.add(r);
  }

  /** The op assigned a row's bookkeeping columns itself (no object per ping): they are written back at the end. */
  changed(r: PingMonitorRow): void {
    this.dirty.add(r);
  }

  /**
   * The monitor turns to its check's status: the check and the state change, with the check's
   * error, written after every row the batch added before them. `lateMs`: how late a timer applied it.
   */
  async changeState(r: PingMonitorRow, check: CheckResult, lateMs: number | null): Promise<void> {
    this.result.checks[check.status]++;
    await this.stmts.flush();
    const checkId = await insertCheck(this.trx, r.id, this.ctx.config.region, check);
    // the whole row (alerts name the monitor), with what this batch changed in memory on top
    const full = await this.stmts.monitor(r.id);
    if (!full) return;
    const to = check.status;
    const at = check.checked_at;
    const out = await applyStateChange(this.trx, this.ctx, {
      monitor: { ...full, ...r }, to, at, checkId, errorCode: check.error_code, errorMessage: check.error_message ?? check.degraded_reason, httpCode: null,
      alertOnDegraded: r.heartbeat_notify_on_late === 1,
    });
    if (!out.changed) return;
    r.last_status = to;
    r.state_changed_at = at;
    this.result.stateChanges.push({ monitorId: r.id, accountId: r.account_id, from: out.from, to, at });
    this.result.transitions.push({ monitorId: r.id, from: out.from, to, at, lateMs });
  }

  /** Every touched monitor's next deadline, the rows' bookkeeping written back, and everything added flushed. */
  async finish(): Promise<BatchResult> {
    for (const r of this.touched) {
      const next = r.is_paused ? null : nextHeartbeatTransition(r.last_status, r.heartbeat_last_ping_at, heartbeatPlanOf(r));
      const at = next?.at ?? null;
      if (at !== r.heartbeat_deadline_at) this.set(r, { heartbeat_deadline_at: at });
      this.result.deadlines.set(r.id, at);
    }
    // the rows were read in this transaction, so writing back their unchanged columns is harmless
    for (const r of this.dirty) this.stmts.updateBookkeeping(r);
    const flushed = this.stmts.flush();
    if (flushed) await flushed;
    return this.result;
  }
}
