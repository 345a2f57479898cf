/**
 * Group commit of ping batches. Pings and deadline evaluations are queued here; everything queued
 * while the previous batch was being written becomes the next batch, so batches grow with load, and
 * each ping's promise settles only once its batch is durable: a 200 means the ping survives a crash
 * of the process. A batch is one unit rather than one per ping, so a burst costs one promise chain,
 * not thousands.
 *
 * On SQLite, journalable.ts splits each batch. Plain pings on up monitors are appended to the ping
 * journal (store/ping-journal.ts) as one record, outside the main database's write queue, and
 * acknowledged once it is written; when to fold them is fold-scheduler.ts's business. The rest is
 * one job of the shared write queue (ctx.writes), applyBatch, committed together with whatever else
 * is being written. On PostgreSQL the whole batch is that job.
 */
import type { AppContext } from "../context.ts";
import { CHECK_STATUSES, type CheckStatus } from "../domain/check-result.ts";
import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure } from "../lib/storage-errors.ts";
import type { PingJournal } from "../store/ping-journal.ts";
import type { PingMonitorRow, PingStatements, SqlitePingStatements } from "../store/ping-statements.ts";
import { ACCEPTED, type HeartbeatOp, type PingOutcome, type PingRequest } from "../domain/heartbeat-ping.ts";
import { applyBatch, type BatchJournal, type BatchResult } from "./apply-batch.ts";
import { applyToCache, splitJournalable } from "./journalable.ts";

/** What a committed batch tells the timers and the event bus. */
export type Committed = Pick<BatchResult, "deadlines" | "stateChanges" | "transitions">;

const NO_ROWS: ReadonlyMap<number, PingMonitorRow> = new Map();

/**
 * Where a batch is written. On SQLite the ping journal takes the plain pings that the rows cached
 * here vouch for; on PostgreSQL there is no journal and no cache: every op goes through applyBatch
 * (README "Heartbeat monitors").
 */
export type PingPath = { journal: PingJournal; stmts: SqlitePingStatements } | { journal: null; stmts: PingStatements };

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
  /** told after each batch was written: pings may have been journaled */
  afterBatch(): void;
  /** after each commit or journal record, in the order they happened */
  onCommitted(r: Committed): void;
  /** evaluations of a batch that failed to commit, to be retried */
  onEvaluateFailed(ids: number[]): void;
  log: Logger;
}

export class PingBatches {
  /** batches not yet written, oldest first; the last one takes new work */
  private batches: Batch[] = [];
  /** monitor rows as the last committed batch that read them left them (see applyBatch) */
  private rows = new Map<number, PingMonitorRow>();
  private rowsEpoch = -1;
  private draining: Promise<void> | null = null;
  private scheduled = false;
  private closed = false;
  private readonly log: Logger;

  constructor(
    private readonly ctx: AppContext,
    private readonly path: PingPath,
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

  /** Forgets what is known of a monitor (it changed): its next ping reads the row again. */
  forget(monitorId: number): void {
    this.rows.delete(monitorId);
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
      // the places of the ops applyBatch writes (null: all of them)
      let rest: number[] | null = null;
      const path = this.path;
      if (path.journal !== null) {
        try {
          rest = this.journalPart(path.journal, path.stmts, ops, outcomes);
        } catch (err) {
          failed(err);
          continue;
        }
      }
      if (rest === null || rest.length > 0) {
        const restOps = rest === null ? ops : rest.map((i) => ops[i]!);
        try {
          this.written(await this.write(restOps), rest, outcomes);
        } catch (err) {
          // the journal part, if any, is durable: its pings are recorded though their answer is an error
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
            const i = rest === null ? k : rest[k]!;
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
      this.o.afterBatch();
      batch.outcomes = outcomes;
      this.count(outcomes);
      batch.resolve();
    }
  }

  /** One transaction of the write queue for these ops. */
  private write(ops: HeartbeatOp[]): Promise<BatchResult> {
    const path = this.path;
    const side: BatchJournal | null = path.journal === null ? null : { journal: path.journal, stmts: path.stmts, cacheEpoch: this.rowsEpoch };
    return this.ctx.writes.run((trx) => applyBatch(trx, this.ctx, path.stmts.forBatch(trx), ops, side), { gathered: true });
  }

  /** What a committed transaction wrote, for the ops at places `rest` of the batch (null: all of them). */
  private written(result: BatchResult, rest: readonly number[] | null, outcomes: (PingOutcome | null)[]): void {
    const journal = this.path.journal;
    if (journal !== null) {
      if (result.cacheStale) this.rows.clear();
      this.rowsEpoch = result.epoch;
      for (const [id, row] of result.rows) {
        if (row === null) this.rows.delete(id);
        else this.rows.set(id, row);
      }
      // before anything else runs in the write queue, so the next job sees what this one committed
      journal.folded(result.folded);
    }
    if (rest === null) for (let k = 0; k < outcomes.length; k++) outcomes[k] = result.outcomes[k]!;
    else rest.forEach((i, k) => (outcomes[i] = result.outcomes[k]!));
    this.countChecks(result.checks);
    this.committed(result);
  }

  /**
   * Appends the batch's journalable pings to the journal and answers them in `outcomes`; returns
   * the places of the rest. The cached rows are true while the epoch has not moved since they were
   * filled. Read outside a transaction: a change committing right after this read is ordered after
   * these pings, as if they had arrived a moment earlier.
   */
  private journalPart(journal: PingJournal, stmts: SqlitePingStatements, ops: readonly HeartbeatOp[], outcomes: (PingOutcome | null)[]): number[] {
    const cache = stmts.heartbeatEpoch() === this.rowsEpoch ? this.rows : NO_ROWS;
    const split = splitJournalable(ops, cache, () => journal.nextId());
    const part = split.journal;
    if (part.pings.length > 0) {
      journal.append(part.pings);
      for (const i of part.indexes) outcomes[i] = ACCEPTED;
      // each journaled ping becomes an up check when it is folded
      this.countChecks({ up: part.pings.length, down: 0, degraded: 0 });
      this.committed({ deadlines: applyToCache(part), stateChanges: [], transitions: [] });
    }
    return split.rest;
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
