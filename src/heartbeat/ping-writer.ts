/**
 * Group commit for the ping path. Pings and deadline evaluations are queued here; everything queued
 * so far becomes one job of the shared write queue (ctx.writes), so it commits in one transaction
 * together with whatever else is being written, and each ping's promise settles only after that
 * commit: a 200 means the ping is in the WAL (synchronous=NORMAL: it survives a process crash).
 *
 * While one batch is being written, new pings pile up and become the next batch, so batches grow
 * with load. A batch is one job rather than one job per ping, so a burst costs one promise chain
 * through the write queue, not thousands.
 */
import type { AppContext } from "../context.ts";
import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure } from "../lib/storage-errors.ts";
import type { PingMonitorRow, PingStatements } from "../store/ping-statements.ts";
import { applyBatch, type BatchResult, type HeartbeatOp, type PingOutcome, type PingRequest } from "./apply-batch.ts";

/** A bound on one transaction's size keeps the writer from holding the database for long. */
export const MAX_BATCH = 1000;

/**
 * Ops gathered for one transaction. Its pings share one promise, settled at the commit: a promise,
 * executor and settle pair per ping were measurable at 30k pings/s, and a commit settles them all
 * alike anyway.
 */
class Batch {
  readonly ops: HeartbeatOp[] = [];
  outcomes: readonly (PingOutcome | null)[] = [];
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

export class PingWriter {
  /** batches not yet written, oldest first; the last one takes new work */
  private batches: Batch[] = [];
  /** monitor rows as the last committed batch that read them left them (see applyBatch) */
  private rows = new Map<number, PingMonitorRow>();
  private draining: Promise<void> | null = null;
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly stmts: PingStatements,
    private readonly log: Logger,
    private readonly onCommitted: (r: BatchResult) => void,
    /** evaluations of a batch that failed to commit, to be retried */
    private readonly onEvaluateFailed: (ids: number[]) => void,
  ) {}

  /** Queues a ping; resolves once it is committed. The ping's time is taken here, in queue order. */
  submit(ping: PingRequest): Promise<PingOutcome> {
    if (this.closed) return Promise.reject(new Error("heartbeat intake is shutting down"));
    const batch = this.openBatch();
    const i = batch.ops.push({ type: "ping", at: this.ctx.clock.now(), ping }) - 1;
    this.kick();
    return batch.done.then(() => batch.outcomes[i]!);
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

  get pending(): number {
    let n = 0;
    for (const b of this.batches) n += b.ops.length;
    return n;
  }

  /** Stops taking work and waits for what is queued to commit. */
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
      // The batch stays open (pings keep joining it) until its transaction starts: the requests read
      // while the write queue schedules the job are written with it, not one commit later.
      const batch = this.batches[0]!;
      const ops = batch.ops;
      let taken = false;
      const take = () => {
        if (!taken) this.batches.shift();
        taken = true;
      };
      let result: BatchResult;
      try {
        result = await this.ctx.writes.run((trx) => (take(), applyBatch(trx, this.ctx, this.stmts, ops, this.rows)), { gathered: true });
      } catch (err) {
        take();
        const storage = storageFailure(err);
        // a full disk fails every batch: logged once a minute, not once per batch
        if (storage) logStorageFailure(this.log, storage, { ops: ops.length });
        else this.log.error("heartbeat batch failed; nothing of it was written", { ops: ops.length, error: err instanceof Error ? err.message : String(err) });
        batch.reject(err);
        const ids = ops.flatMap((op) => (op.type === "evaluate" ? [op.monitorId] : []));
        if (ids.length) this.onEvaluateFailed(ids);
        continue;
      }
      for (const [id, row] of result.rows) {
        if (row === null) this.rows.delete(id);
        else this.rows.set(id, row);
      }
      batch.outcomes = result.outcomes;
      this.count(result.outcomes);
      batch.resolve();
      try {
        this.onCommitted(result);
      } catch (err) {
        this.log.error("heartbeat post-commit step failed", { error: String(err) });
      }
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
