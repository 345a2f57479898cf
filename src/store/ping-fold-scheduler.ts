/**
 * When the ping journal (store/ping-journal.ts) is folded, and where. What is pending is folded
 * FOLD_AFTER_MS after the first of it waited, or at once when FOLD_ABOVE are: the longer a pass
 * waits, the more pings of each monitor it writes together, and readers settle the monitors they
 * read first, so the wait shows nowhere. A pass goes through the monitors in id order, FOLD_SLICE
 * pings a transaction, so a monitor's rows of those seconds share their index pages: on the fold
 * worker (ping-fold-thread.ts) while the server runs, on this thread at start-up and shutdown, and when
 * the worker did not start or failed. A pass that got through has folded every ping of the batches
 * added before it started, so their journal segments go.
 *
 * The constants were chosen with the heartbeat bench (BENCHMARKS.md, heartbeat: "Figures that chose
 * the constants").
 */
import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure } from "../lib/storage-errors.ts";
import type { PingJournal } from "./ping-journal.ts";
import type { WriteQueue } from "./write-queue.ts";
import type { FoldThread } from "./ping-fold-thread.ts";

/**
 * A pass costs the store about three leaves of each (monitor, time) index for every monitor in it,
 * however many pings that monitor brings (SQLite rebalances a full leaf with its neighbours), and
 * each of those pages goes to the WAL and through the checkpointer. While the tables are small,
 * neighbouring monitors share leaves; once each has its own, passes of a few pings a monitor cost
 * several times more per ping and the rate fell minute by minute as the tables grew. Longer passes
 * bring more pings a monitor, so that cost stays a small part of a ping (BENCHMARKS.md, "Sustained
 * load").
 */
export const FOLD_AFTER_MS = 15_000;
/** pending pings (about 100 bytes of memory each) that start a pass at once */
export const FOLD_ABOVE = 750_000;
/** pings folded per transaction: short enough that ping batches get in between */
export const FOLD_SLICE = 500;

export class FoldScheduler {
  private folding: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** a pass folded every batch up to this id */
  private foldedThrough = 0;
  /** the last pass failed (a full disk, say): the next one waits FOLD_AFTER_MS, however much is pending */
  private lastPassFailed = false;
  private worker: FoldThread | null = null;
  private closed = false;

  constructor(
    private readonly journal: PingJournal,
    private readonly writes: WriteQueue,
    private readonly log: Logger,
  ) {}

  /** After pings were journaled: a pass at once when a lot is pending, else FOLD_AFTER_MS after the first waited. */
  soon(): void {
    if (this.journal.left === 0 || this.folding) return;
    if (this.journal.size >= FOLD_ABOVE && !this.lastPassFailed) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      void this.startPass();
      return;
    }
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.folding) void this.startPass();
    }, FOLD_AFTER_MS);
    // what waits is durable in the journal: a process on its way out need not stay for it
    this.timer.unref?.();
  }

  /**
   * Folds everything journaled so far and deletes its journal segments (start-up, shutdown); stops
   * early when a pass gets nowhere (the store refuses writes).
   */
  async foldAll(): Promise<void> {
    for (let before = Infinity; this.journal.left > 0 && this.journal.left < before; ) {
      before = this.journal.left;
      await (this.folding ?? this.startPass());
    }
  }

  /** From now on passes run on the fold worker. */
  useWorker(worker: FoldThread): void {
    this.worker = worker;
  }

  /** Stops the worker after its slice under way, and folds what is left on this thread. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const worker = this.worker;
    this.worker = null;
    await worker?.stop();
    await this.folding;
    const pings = this.journal.size;
    const t = performance.now();
    await this.foldAll();
    if (pings > 0) this.log.info("folded the journaled pings before stopping", { pings, ms: Math.round(performance.now() - t) });
  }

  private startPass(): Promise<void> {
    const worker = this.worker?.alive ? this.worker : null;
    return (this.folding = (worker ? this.passOnWorker(worker) : this.passHere()).finally(() => {
      this.folding = null;
      if (!this.closed) this.soon();
    }));
  }

  /** A pass on the worker: it reads the batches since the last pass, up to the newest one added, from the journal's files. */
  private async passOnWorker(worker: FoldThread): Promise<void> {
    const batches = this.journal.batchesThrough;
    const ok = await worker.fold(this.foldedThrough, batches);
    this.lastPassFailed = !ok;
    if (ok) this.passed(batches);
  }

  /**
   * A pass on this thread, FOLD_SLICE pings a write job. A job that fails leaves its pings pending
   * (the journal still has them) for the next pass.
   */
  private async passHere(): Promise<void> {
    const batches = this.journal.batchesThrough;
    const order = this.journal.monitorIds();
    let next = 0;
    while (next < order.length) {
      let slice: { done: [number, number][]; next: number };
      try {
        const from = next;
        slice = await this.writes.run(async () => this.journal.foldSlice(order, from, FOLD_SLICE), { gathered: true });
      } catch (err) {
        const storage = storageFailure(err);
        if (storage) logStorageFailure(this.log, storage, { journaled: this.journal.size });
        else this.log.error("folding the ping journal failed; its pings stay journaled", { error: err instanceof Error ? err.message : String(err) });
        this.lastPassFailed = true;
        return;
      }
      this.journal.folded(slice.done);
      next = slice.next;
      // The write queue and bun:sqlite are promise chains without I/O: without a turn of the event
      // loop between slices, the next one would start at once and no request would be read until
      // the pass ended.
      if (next < order.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.lastPassFailed = false;
    this.passed(batches);
  }

  /** A pass folded every batch up to `batches`: their segments go. */
  private passed(batches: number): void {
    if (batches > this.foldedThrough) this.foldedThrough = batches;
    try {
      this.journal.dropBatches(batches);
    } catch (err) {
      // the segments stay; a later pass or the next start-up deletes them
      const storage = storageFailure(err);
      if (storage) logStorageFailure(this.log, storage, { journaled: this.journal.size });
      else this.log.error("deleting folded ping journal segments failed", { error: err instanceof Error ? err.message : String(err) });
    }
  }
}
