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
import type { PingStatements } from "../store/ping-statements.ts";
import { applyBatch, type BatchResult, type HeartbeatOp, type PingOutcome, type PingRequest } from "./apply-batch.ts";

/** A bound on one transaction's size keeps the writer from holding the database for long. */
export const MAX_BATCH = 1000;

interface Queued {
  op: HeartbeatOp;
  settle?: { resolve(o: PingOutcome): void; reject(e: unknown): void };
}

export class PingWriter {
  private queue: Queued[] = [];
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
    return new Promise((resolve, reject) => {
      this.queue.push({ op: { type: "ping", at: this.ctx.clock.now(), ping }, settle: { resolve, reject } });
      this.kick();
    });
  }

  /** Queues deadline evaluations (a timer fired, or a monitor changed). */
  evaluate(ids: number[]): void {
    if (this.closed) return;
    for (const monitorId of ids) this.queue.push({ op: { type: "evaluate", monitorId } });
    this.kick();
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Stops taking work and waits for what is queued to commit. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining || this.queue.length > 0) {
      if (!this.draining) this.kick(true);
      await this.draining;
    }
  }

  private kick(now = false): void {
    if (this.draining || (this.scheduled && !now)) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      if (this.draining) return;
      this.draining = this.drain().finally(() => {
        this.draining = null;
        if (this.queue.length > 0) this.kick();
      });
    };
    // setImmediate lets the requests already read in this turn of the event loop join the batch.
    if (now) run();
    else setImmediate(run);
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      let result: BatchResult;
      try {
        const ops = batch.map((q) => q.op);
        result = await this.ctx.writes.run((trx) => applyBatch(trx, this.ctx, this.stmts, ops), { gathered: true });
      } catch (err) {
        const storage = storageFailure(err);
        // a full disk fails every batch: logged once a minute, not once per batch
        if (storage) logStorageFailure(this.log, storage, { ops: batch.length });
        else this.log.error("heartbeat batch failed; nothing of it was written", { ops: batch.length, error: err instanceof Error ? err.message : String(err) });
        for (const q of batch) q.settle?.reject(err);
        const ids = batch.flatMap((q) => (q.op.type === "evaluate" ? [q.op.monitorId] : []));
        if (ids.length) this.onEvaluateFailed(ids);
        continue;
      }
      batch.forEach((q, i) => q.settle?.resolve(result.outcomes[i]!));
      try {
        this.onCommitted(result);
      } catch (err) {
        this.log.error("heartbeat post-commit step failed", { error: String(err) });
      }
    }
  }
}
