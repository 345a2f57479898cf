/**
 * Group commit of ping batches. Pings and deadline evaluations are queued here; everything queued
 * while the previous batch was being written becomes the next batch, so batches grow with load, and
 * each ping's promise settles only once its batch is durable: a 200 means the ping survives a crash
 * of the process. A batch is one unit rather than one per ping, so a burst costs one promise chain,
 * not thousands.
 *
 * Each batch goes to the ping store (store/ping-store.ts): what it takes on its own is acknowledged
 * at once (on SQLite, the plain pings on up monitors it appends to the ping journal), and the rest
 * is one job of the shared write queue, applyBatch, committed together with whatever else is being
 * written (on PostgreSQL, the whole batch).
 */
import type { AppContext } from "../context.ts";
import { CHECK_STATUSES, type CheckStatus } from "../domain/check-result.ts";
import { ACCEPTED, type HeartbeatOp, type PingOutcome, type PingRequest } from "../domain/heartbeat-ping.ts";
import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure } from "../lib/storage-errors.ts";
import type { PingStore } from "../store/ping-store.ts";
import { applyBatch } from "./apply-batch.ts";
import type { BatchResult } from "./batch-state.ts";

/** What a committed batch tells the timers and the event bus. */
export type Committed = Pick<BatchResult, "stateChanges" | "transitions"> & { deadlines: ReadonlyMap<number, number | null> };

/** A bound on one transaction's size keeps the writer from holding the database for long. */
export const MAX_BATCH = 1000;

/**
 * Ops gathered for one transaction. Its pings share one promise, settled at the commit: a promise
 * per ping was measurable at the rates the heartbeat bench drives, and a commit settles them all
 * alike anyway.
 */
class Batch {
  readonly ops: HeartbeatOp[] = [];
  outcomes: readonly (PingOutcome | null)[] = [];
  /** the ops, by place, that failed alone (the batch failed, then each op was tried on its own) */
  errors: Map<number, unknown> | null = null;
  readonly done: Promise<void>;
  resolve!: () => void;
  reject!: (err: unknown) => void;
  constructor() {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // a batch of evaluations only has no one waiting on it; its failure is handled in drain
    this.done.catch(() => {});
  }
}

export interface PingBatchesOptions {
  /** after each commit, and each time the ping store took pings on its own, in the order they happened */
  onCommitted(r: Committed): void;
  /** evaluations of a batch that failed to commit, to be retried */
  onEvaluateFailed(ids: number[]): void;
  log: Logger;
}

export class PingBatches {
  /** batches not yet written, oldest first; the last one takes new work */
  private batches: Batch[] = [];
  private draining: Promise<void> | null = null;
  private scheduled = false;
  private closed = false;
  private readonly log: Logger;

  constructor(
    private readonly ctx: AppContext,
    private readonly pings: PingStore,
    private readonly o: PingBatchesOptions,
  ) {
    this.log = o.log;
  }

  /** Queues a ping; resolves once it is durable. The ping's time is taken here, in queue order. */
  submit(ping: PingRequest): Promise<PingOutcome> {
    if (this.closed) return Promise.reject(new Error("heartbeat intake is shutting down"));
    const batch = this.openBatch();
    const i = batch.ops.push({ type: "ping", at: this.ctx.clock.now(), ping }) - 1;
    this.kick();
    return batch.done.then(() => {
      const err = batch.errors?.get(i);
      if (err !== undefined) throw err;
      return batch.outcomes[i]!;
    });
  }

  /** Queues deadline evaluations (a timer fired, or a monitor changed). */
  evaluate(ids: number[]): void {
    if (this.closed) return;
    for (const monitorId of ids) this.openBatch().ops.push({ type: "evaluate", monitorId });
    this.kick();
  }

  /** ops queued and not yet written */
  get pending(): number {
    let n = 0;
    for (const b of this.batches) n += b.ops.length;
    return n;
  }

  /** Stops taking work and waits for what is queued to be written. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining || this.batches.length > 0) {
      if (!this.draining) this.kick(true);
      await this.draining;
    }
  }

  private openBatch(): Batch {
    const last = this.batches[this.batches.length - 1];
    if (last !== undefined && last.ops.length < MAX_BATCH) return last;
    const b = new Batch();
    this.batches.push(b);
    return b;
  }

  private kick(now = false): void {
    if (this.draining || (this.scheduled && !now)) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      if (this.draining) return;
      this.draining = this.drain().finally(() => {
        this.draining = null;
        if (this.batches.length > 0) this.kick();
      });
    };
    // setImmediate lets the requests already read in this turn of the event loop join the batch.
    if (now) run();
    else setImmediate(run);
  }

  private async drain(): Promise<void> {
    while (this.batches.length > 0) {
      const batch = this.batches.shift()!;
      const ops = batch.ops;
      const outcomes: (PingOutcome | null)[] = new Array(ops.length).fill(null);
      const failed = (err: unknown) => {
        const storage = storageFailure(err);
        // a full disk fails every batch: logged once a minute, not once per batch
        if (storage) logStorageFailure(this.log, storage, { ops: ops.length });
        else this.log.error("heartbeat batch failed; nothing of it was written", { ops: ops.length, error: err instanceof Error ? err.message : String(err) });
        batch.reject(err);
        const ids = ops.flatMap((op) => (op.type === "evaluate" ? [op.monitorId] : []));
        if (ids.length) this.o.onEvaluateFailed(ids);
      };
      // the places of the ops applyBatch writes
      let rest: readonly number[];
      try {
        rest = this.take(ops, outcomes);
      } catch (err) {
        failed(err);
        continue;
      }
      if (rest.length > 0) {
        const restOps = rest.length === ops.length ? ops : rest.map((i) => ops[i]!);
        try {
          this.written(await this.write(restOps), rest, outcomes);
        } catch (err) {
          // what the store took is durable: its pings are recorded though their answer is an error
          if (restOps.length === 1 || storageFailure(err)) {
            failed(err);
            continue;
          }
          // A value the database refuses (PostgreSQL takes no NUL in text) fails the transaction
          // of every op batched with it: each op again in a transaction of its own, so a bad one
          // fails only itself, as the write queue does with its jobs.
          let failures = 0;
          let first: unknown = null;
          for (let k = 0; k < restOps.length; k++) {
            const i = rest[k]!;
            const op = restOps[k]!;
            try {
              this.written(await this.write([op]), [i], outcomes);
            } catch (opErr) {
              (batch.errors ??= new Map()).set(i, opErr);
              if (failures++ === 0) first = opErr;
              if (op.type === "evaluate") this.o.onEvaluateFailed([op.monitorId]);
            }
          }
          this.log.error("heartbeat batch failed; its ops were written one by one", {
            ops: restOps.length, failed_alone: failures, error: err instanceof Error ? err.message : String(err),
            ...(failures > 0 ? { first_failure: first instanceof Error ? first.message : String(first) } : {}),
          });
        }
      }
      this.pings.afterBatch();
      batch.outcomes = outcomes;
      this.count(outcomes);
      batch.resolve();
    }
  }

  /** One transaction of the write queue for these ops. */
  private write(ops: readonly HeartbeatOp[]): Promise<BatchResult> {
    return this.pings.write(ops, (trx, stmts) => applyBatch(trx, this.ctx, stmts, ops));
  }

  /** What a committed transaction wrote, for the ops at places `rest` of the batch. */
  private written(result: BatchResult, rest: readonly number[], outcomes: (PingOutcome | null)[]): void {
    for (let k = 0; k < rest.length; k++) outcomes[rest[k]!] = result.outcomes[k]!;
    this.countChecks(result.checks);
    this.committed(result);
  }

  /**
   * Gives the batch to the ping store, which takes what it can make durable on its own; answers
   * those pings in `outcomes` and returns the places of the rest.
   */
  private take(ops: readonly HeartbeatOp[], outcomes: (PingOutcome | null)[]): readonly number[] {
    const taken = this.pings.take(ops);
    if (taken.accepted.length > 0) {
      for (const i of taken.accepted) outcomes[i] = ACCEPTED;
      // each ping taken becomes an up check in its rows
      this.countChecks({ up: taken.accepted.length, down: 0, degraded: 0 });
      this.committed({ deadlines: taken.deadlines, stateChanges: [], transitions: [] });
    }
    return taken.rest;
  }

  private committed(r: Committed): void {
    try {
      this.o.onCommitted(r);
    } catch (err) {
      this.log.error("heartbeat post-commit step failed", { error: String(err) });
    }
  }

  /** vigil_checks_total for heartbeat monitors, once per status and batch */
  private countChecks(checks: Record<CheckStatus, number>): void {
    for (const status of CHECK_STATUSES) {
      if (checks[status] > 0) this.ctx.metrics.checks.inc({ status, type: "heartbeat", region: this.ctx.config.region }, checks[status]);
    }
  }

  /** the pings metric, once per result and batch rather than once per ping */
  private count(outcomes: readonly (PingOutcome | null)[]): void {
    let accepted = 0, ignored = 0, rejected = 0;
    for (const o of outcomes) {
      if (o === null) continue;
      if (o.result === "accepted") accepted++;
      else if (o.result === "ignored") ignored++;
      else if (o.result === "rejected") rejected++;
    }
    if (accepted) this.ctx.metrics.pings.inc({ result: "accepted" }, accepted);
    if (ignored) this.ctx.metrics.pings.inc({ result: "ignored" }, ignored);
    if (rejected) this.ctx.metrics.pings.inc({ result: "rejected" }, rejected);
  }
}
