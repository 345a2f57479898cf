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
  /**
   * Lanes: transactions in flight side by side, each on a connection of its own (default 1). Jobs run
   * with a `key` go to the lane the key picks, so jobs with the same key keep their order; jobs
   * without one all go to the first lane, in order.
   */
  lanes?: number;
  /**
   * How long, in ms, one transaction runs jobs before it commits and lets the event loop turn; the
   * jobs after it form the next batch. For SQLite, whose statements run on the calling thread: a
   * batch that gathered hundreds of jobs (after waiting for another connection's write lock) would
   * otherwise hold that thread for tens of ms. Default: no bound (PostgreSQL's statements wait on
   * the network, and each extra commit there waits for a WAL flush).
   */
  batchBudgetMs?: number;
}

/** The SQLite write queue's batch budget (WriteQueueOptions.batchBudgetMs). */
export const SQLITE_BATCH_BUDGET_MS = 4;

/**
 * Lanes for check results on PostgreSQL. A result is several statements, one round trip each,
 * and one transaction at a time left both the server's core and PostgreSQL's mostly idle while
 * checks queued behind it (BENCHMARKS.md, "Check-result lanes on PostgreSQL"). SQLite has one
 * writer and answers without a round trip: it keeps one lane.
 */
export const POSTGRES_WRITE_LANES = 4;

/**
 * Group commit: jobs arriving within a few ms, and every job that arrives while a batch is being
 * written, share one transaction, so a burst of check results costs one commit instead of one per
 * result. Each caller's promise settles only after its batch committed (or failed).
 *
 * When a batch fails, its jobs are re-run one transaction each, so one bad job only fails itself.
 * Jobs are therefore written to be safe to re-run after a rollback (they keep no state of their own
 * between attempts) and must leave side effects (events, timers) to the caller, after the await.
 * With several lanes, two lanes' transactions may wait on each other's row locks (PostgreSQL then
 * aborts one as a deadlock): that batch's jobs are re-run one by one like any failed batch.
 */
export class WriteQueue {
  private readonly lanes: Lane[];
  /** batches committed and jobs written, for the metrics */
  readonly counters = { batches: 0, jobs: 0, retriedBatches: 0 };
  /**
   * The last batch the store refused for want of storage (a full disk, an I/O error, a database out
   * of reach), and when. Readiness reads it: a small probe write can still fit where the writes of
   * the API and the checks no longer do.
   */
  lastStorageFailure: { kind: StorageFailure; at: number } | null = null;
  private closed = false;

  constructor(db: Db, opts: WriteQueueOptions = {}) {
    const n = Math.max(1, Math.floor(opts.lanes ?? 1));
    this.lanes = Array.from({ length: n }, () => new Lane(db, this, opts.windowMs ?? 2, opts.maxBatch ?? 500, opts.batchBudgetMs ?? Infinity, opts.log));
  }

  /**
   * Runs `job` in the next batch's transaction; resolves with its value after the commit.
   * `gathered`: the job already carries a batch its caller gathered (heartbeat/ping-batches.ts, a
   * fold pass's slice), so waiting the window for company only adds latency: the batch starts on the
   * next turn of the event loop. Under a fixed number of clients waiting on their answers, nothing
   * arrives during the window, and it was dead time per ping batch (BENCHMARKS.md, "What changed to
   * get here"). `key`: the lane (a monitor's id: its results stay in order).
   */
  run<T>(job: WriteJob<T>, opts?: { gathered?: boolean; key?: number }): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the write queue is closed"));
    const key = opts?.key;
    const lane = key === undefined || this.lanes.length === 1 ? this.lanes[0]! : this.lanes[Math.abs(key) % this.lanes.length]!;
    return lane.run(job, opts?.gathered ?? false);
  }

  /**
   * Runs a job over many keys as one job per lane, each with the entries whose key picks that lane,
   * so a row written by key (a monitor's) is only ever written by its own lane: lanes then never wait
   * on each other's locks for it.
   */
  async runByKey<V>(entries: ReadonlyMap<number, V>, job: (part: ReadonlyMap<number, V>) => WriteJob<void>): Promise<void> {
    if (this.lanes.length === 1) return this.run(job(entries));
    const parts = new Map<number, Map<number, V>>();
    for (const [key, value] of entries) {
      const lane = Math.abs(key) % this.lanes.length;
      let part = parts.get(lane);
      if (!part) parts.set(lane, (part = new Map()));
      part.set(key, value);
    }
    await Promise.all([...parts.values()].map((part) => this.run(job(part), { key: part.keys().next().value! })));
  }

  /** Waits until everything queued so far has been written. */
  async flush(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.flush()));
  }

  /** Refuses new jobs and writes the queued ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  get length(): number {
    return this.lanes.reduce((n, l) => n + l.length, 0);
  }
}

/** One transaction at a time, batching the jobs that wait for it. */
class Lane {
  private queue: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private immediate: ReturnType<typeof setImmediate> | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly owner: WriteQueue,
    private readonly windowMs: number,
    private readonly maxBatch: number,
    private readonly budgetMs: number,
    private readonly log: Logger | undefined,
  ) {}

  run<T>(job: WriteJob<T>, gathered: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, resolve: resolve as (v: unknown) => void, reject });
      if (gathered) this.startSoon();
      else this.schedule();
    });
  }

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
        // a batch cut short by the budget gave its remaining jobs back: the loop turns before them
        if (await this.writeBatch(batch)) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })().finally(() => {
      this.running = null;
      // a job queued after the loop's last look (its caller woke before this ran) still gets written
      if (this.queue.length > 0) this.schedule();
    });
  }

  /** Writes the batch, or its first jobs within the budget; true when it gave the rest back to the queue. */
  private async writeBatch(batch: Pending[]): Promise<boolean> {
    let cut = false;
    try {
      const values = await this.db.transaction().execute(async (trx) => {
        const out: unknown[] = [];
        const until = performance.now() + this.budgetMs;
        for (const p of batch) {
          out.push(await p.job(trx));
          if (out.length < batch.length && performance.now() > until) {
            // in front of what arrived meanwhile, so the order of jobs holds
            this.queue.unshift(...batch.splice(out.length));
            cut = true;
            break;
          }
        }
        return out;
      });
      this.owner.counters.batches++;
      this.owner.counters.jobs += batch.length;
      batch.forEach((p, i) => p.resolve(values[i]));
      return cut;
    } catch (err) {
      // A full disk or an I/O error fails every job alike: re-running them one by one would only
      // repeat the failure, so the whole batch is refused at once and the next batch tries again.
      const storage = storageFailure(err);
      if (storage) this.owner.lastStorageFailure = { kind: storage, at: Date.now() };
      if (storage && this.log) logStorageFailure(this.log, storage, { jobs: batch.length });
      if (batch.length === 1 || storage) {
        for (const p of batch) p.reject(err);
        return cut;
      }
      this.owner.counters.retriedBatches++;
      this.log?.warn("write batch failed, retrying its jobs one by one", { jobs: batch.length, error: String(err) });
    }
    for (const p of batch) {
      try {
        const v = await this.db.transaction().execute((trx) => p.job(trx));
        this.owner.counters.batches++;
        this.owner.counters.jobs++;
        p.resolve(v);
      } catch (err) {
        p.reject(err);
      }
    }
    return cut;
  }
}
