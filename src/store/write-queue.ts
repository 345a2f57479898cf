import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure, type StorageFailure } from "../lib/storage-errors.ts";
import type { Db } from "./database.ts";

/** A unit of work run inside a shared transaction. It must use only the `trx` it is given: the one
 * connection is held by the transaction, so touching `ctx.db` inside would wait on itself forever. */
export type WriteJob<T> = (trx: Db) => Promise<T>;

interface Pending {
  job: WriteJob<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export interface WriteQueueOptions {
  /** how long the first job of a batch waits for company, in ms (default 2) */
  windowMs?: number;
  /** most jobs in one transaction, so one batch never holds the database for long (default 500) */
  maxBatch?: number;
  log?: Logger;
}

/**
 * Group commit: jobs arriving within a few ms, and every job that arrives while a batch is being
 * written, share one transaction, so a burst of check results costs one commit instead of one per
 * result. Each caller's promise settles only after its batch committed (or failed).
 *
 * When a batch fails, its jobs are re-run one transaction each, so one bad job only fails itself.
 * Jobs are therefore written to be safe to re-run after a rollback (they keep no state of their own
 * between attempts) and must leave side effects (events, timers) to the caller, after the await.
 */
export class WriteQueue {
  private queue: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private immediate: ReturnType<typeof setImmediate> | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly windowMs: number;
  private readonly maxBatch: number;
  private readonly log: Logger | undefined;
  /** batches committed and jobs written, for the metrics */
  readonly counters = { batches: 0, jobs: 0, retriedBatches: 0 };
  /**
   * The last batch the store refused for want of storage (a full disk, an I/O error, a database out
   * of reach), and when. Readiness reads it: a small probe write can still fit where the writes of
   * the API and the checks no longer do.
   */
  lastStorageFailure: { kind: StorageFailure; at: number } | null = null;

  constructor(private readonly db: Db, opts: WriteQueueOptions = {}) {
    this.windowMs = opts.windowMs ?? 2;
    this.maxBatch = opts.maxBatch ?? 500;
    this.log = opts.log;
  }

  /**
   * Runs `job` in the next batch's transaction; resolves with its value after the commit.
   * `gathered`: the job already carries a batch its caller gathered (heartbeat/ping-batches.ts, a
   * fold pass's slice), so waiting the window for company only adds latency: the batch starts on the
   * next turn of the event loop. Under a fixed number of clients waiting on their answers, nothing
   * arrives during the window, and it was dead time per ping batch (BENCHMARKS.md, "What changed to
   * get here").
   */
  run<T>(job: WriteJob<T>, opts?: { gathered?: boolean }): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the write queue is closed"));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, resolve: resolve as (v: unknown) => void, reject });
      if (opts?.gathered) this.startSoon();
      else this.schedule();
    });
  }

  /** Waits until everything queued so far has been written. */
  async flush(): Promise<void> {
    for (let i = 0; i < 10_000; i++) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      if (!this.running) this.drain();
      if (!this.running) return;
      await this.running;
    }
  }

  /** Refuses new jobs and writes the queued ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  get length(): number {
    return this.queue.length;
  }

  private schedule(): void {
    // while a batch is being written, new jobs simply wait for it and form the next batch
    if (this.running || this.timer || this.immediate) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.drain();
    }, this.windowMs);
  }

  private startSoon(): void {
    if (this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.immediate) return;
    this.immediate = setImmediate(() => {
      this.immediate = null;
      this.drain();
    });
  }

  private drain(): void {
    if (this.running || this.queue.length === 0) return;
    this.running = (async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        await this.writeBatch(batch);
      }
    })().finally(() => {
      this.running = null;
      // a job queued after the loop's last look (its caller woke before this ran) still gets written
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    try {
      const values = await this.db.transaction().execute(async (trx) => {
        const out: unknown[] = [];
        for (const p of batch) out.push(await p.job(trx));
        return out;
      });
      this.counters.batches++;
      this.counters.jobs += batch.length;
      batch.forEach((p, i) => p.resolve(values[i]));
      return;
    } catch (err) {
      // A full disk or an I/O error fails every job alike: re-running them one by one would only
      // repeat the failure, so the whole batch is refused at once and the next batch tries again.
      const storage = storageFailure(err);
      if (storage) this.lastStorageFailure = { kind: storage, at: Date.now() };
      if (storage && this.log) logStorageFailure(this.log, storage, { jobs: batch.length });
      if (batch.length === 1 || storage) {
        for (const p of batch) p.reject(err);
        return;
      }
      this.counters.retriedBatches++;
      this.log?.warn("write batch failed, retrying its jobs one by one", { jobs: batch.length, error: String(err) });
    }
    for (const p of batch) {
      try {
        const v = await this.db.transaction().execute((trx) => p.job(trx));
        this.counters.batches++;
        this.counters.jobs++;
        p.resolve(v);
      } catch (err) {
        p.reject(err);
      }
    }
  }
}
