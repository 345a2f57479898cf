/**
 * Group commit for the ping path. Pings and deadline evaluations are queued here; everything queued
 * so far becomes one job of the shared write queue (ctx.writes), so it commits in one transaction
 * together with whatever else is being written, and each ping's promise settles only after that
 * commit: a 200 means the ping is in the WAL (synchronous=NORMAL: it survives a process crash).
 *
 * While one batch is being written, new pings pile up and become the next batch, so batches grow
 * with load. A batch is one job rather than one job per ping, so a burst costs one promise chain
 * through the write queue, not thousands.
 *
 * A plain ping on an up monitor goes to the ping journal, append-only files of its own
 * (store/ping-journal-file.ts, journalable.ts): its batch is one record written there, outside the
 * write queue, and acknowledged once written. What is pending is folded FOLD_AFTER_MS later, or
 * sooner when a lot is, FOLD_SLICE entries a transaction in monitor id order, so a monitor's pings
 * of those seconds share their index pages: by the fold worker while the server runs
 * (fold-worker.ts), on this thread at start-up and shutdown.
 */
import type { AppContext } from "../context.ts";
import { CHECK_STATUSES, type CheckStatus } from "../domain/check-result.ts";
import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure } from "../lib/storage-errors.ts";
import type { PingJournalFile } from "../store/ping-journal-file.ts";
import { takeSlice } from "../store/ping-journal.ts";
import type { PingMonitorRow, PingStatements } from "../store/ping-statements.ts";
import { ACCEPTED, applyBatch, type BatchResult, type HeartbeatOp, type JournalAccess, type PingOutcome, type PingRequest } from "./apply-batch.ts";
import type { FoldThread } from "./fold-thread.ts";
import { applyToCache, splitJournalable } from "./journalable.ts";

/** What a committed batch tells the timers and the event bus. */
export type Committed = Pick<BatchResult, "deadlines" | "stateChanges" | "transitions">;

/** The journal as the writer uses it: the fold and the pending entries, and the journal's files. */
export interface JournalParts extends JournalAccess {
  file: PingJournalFile;
}

const NO_ROWS: ReadonlyMap<number, PingMonitorRow> = new Map();

/** A bound on one transaction's size keeps the writer from holding the database for long. */
export const MAX_BATCH = 1000;

/**
 * Journaled pings are folded this long after the first of them committed, or as soon as
 * FOLD_ABOVE are pending (~100 bytes of memory each). The longer a pass waits, the more pings of
 * each monitor it writes together (heartbeat bench, 10,000 monitors: 1 s passes 25.5 µs a ping,
 * 5 s passes 24.4). Readers of one monitor settle it first, so the wait shows nowhere in the API.
 */
export const FOLD_AFTER_MS = 5000;
export const FOLD_ABOVE = 200_000;
/** Entries folded per write job: ~1.5 ms of the writer, so ping batches get in between (2,000: p99 15.5 ms, 500: 7.5). */
export const FOLD_SLICE = 500;

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
  private rowsEpoch = -1;
  private draining: Promise<void> | null = null;
  private scheduled = false;
  private closed = false;
  private folding: Promise<void> | null = null;
  private foldTimer: ReturnType<typeof setTimeout> | null = null;
  /** a pass folded every journaled batch up to this id */
  private foldedThrough = 0;
  /** the journal's segments holding only batches up to this id are deleted */
  private droppedThrough = 0;
  /** the last pass failed (a full disk, say): the next one waits FOLD_AFTER_MS, however much is pending */
  private lastPassFailed = false;
  private worker: FoldThread | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly stmts: PingStatements,
    private readonly journal: JournalParts,
    private readonly log: Logger,
    private readonly onCommitted: (r: Committed) => void,
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

  /** Journaled pings not folded yet. */
  get journaled(): number {
    return this.journal.pending.size;
  }

  /** Folds one monitor's journaled pings now: for a reader that must see every acknowledged ping. */
  async settle(monitorId: number): Promise<void> {
    if (this.journal.pending.of(monitorId) === undefined) return;
    let through: number | undefined;
    await this.ctx.writes.run(async () => {
      through = this.foldMonitor(monitorId);
    });
    if (through !== undefined) this.journal.pending.dropThrough(monitorId, through);
  }

  /**
   * Folds everything journaled so far and deletes its journal segments (start-up, shutdown); stops
   * early when a pass gets nowhere (the store refuses writes).
   */
  async foldAll(): Promise<void> {
    for (let before = Infinity; this.journalLeft() > 0 && this.journalLeft() < before; ) {
      before = this.journalLeft();
      await (this.folding ?? this.startFold());
    }
  }

  /** From now on passes run on the fold worker. */
  useWorker(worker: FoldThread): void {
    this.worker = worker;
  }

  /** What a fold committed, (monitor, newest entry id folded): those entries are no longer pending. */
  folded(monitors: Iterable<readonly [number, number]>): void {
    for (const [id, through] of monitors) this.journal.pending.dropThrough(id, through);
  }

  /** Stops taking work and waits for what is queued to commit, and for the journal to be folded. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining || this.batches.length > 0) {
      if (!this.draining) this.kick(true);
      await this.draining;
    }
    if (this.foldTimer) clearTimeout(this.foldTimer);
    this.foldTimer = null;
    // a pass under way on the worker ends after its slice; what is left is folded here
    const worker = this.worker;
    this.worker = null;
    await worker?.stop();
    await this.folding;
    const pings = this.journal.pending.size;
    const t = performance.now();
    await this.foldAll();
    if (pings > 0) this.log.info("folded the journaled pings before stopping", { pings, ms: Math.round(performance.now() - t) });
  }

  /** pending entries, plus one while folded batches' segments are still on disk */
  private journalLeft(): number {
    return this.journal.pending.size + (this.journal.pending.batchesThrough > this.droppedThrough ? 1 : 0);
  }

  /** inside a write job: folds a monitor's pending entries; returns the newest id folded */
  private foldMonitor(monitorId: number): number | undefined {
    const entries = this.journal.pending.of(monitorId);
    if (entries === undefined || entries.length === 0) return undefined;
    this.journal.fold.fold([entries]);
    return entries[entries.length - 1]![0];
  }

  /** A pass on the worker: it reads the batches since the last pass up to the newest one added from the journal's files. */
  private async foldOnWorker(worker: FoldThread): Promise<void> {
    const batches = this.journal.pending.batchesThrough;
    const ok = await worker.fold(this.foldedThrough, batches);
    this.lastPassFailed = !ok;
    if (ok) this.dropBatches(batches);
  }

  /** Deletes the journal's segments up to `batches`: a pass folded everything in them. */
  private dropBatches(batches: number): void {
    if (batches > this.foldedThrough) this.foldedThrough = batches;
    if (batches <= this.droppedThrough) return;
    try {
      this.journal.file.dropBatches(batches);
      this.droppedThrough = batches;
    } catch (err) {
      // the segments stay; a later pass or the next start-up deletes them
      const storage = storageFailure(err);
      if (storage) logStorageFailure(this.log, storage, { journaled: this.journal.pending.size });
      else this.log.error("deleting folded ping journal segments failed", { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /**
   * One pass on this thread over the monitors with pending entries, in id order, FOLD_SLICE
   * entries per write job. A job that fails leaves its entries pending (the journal still has them)
   * for the next pass. A pass that got through has folded every entry of the batches added before
   * it started (each was pending then, or folded already), so their journal segments go.
   */
  private async fold(): Promise<void> {
    const batches = this.journal.pending.batchesThrough;
    const order = this.journal.pending.monitorIds();
    let next = 0;
    while (next < order.length) {
      let done: [number, number][] = [];
      let reached = next;
      try {
        await this.ctx.writes.run(async () => {
          const slice = takeSlice(order, next, FOLD_SLICE, (id) => this.journal.pending.of(id));
          this.journal.fold.fold(slice.monitors);
          done = slice.done;
          reached = slice.next;
        }, { gathered: true });
      } catch (err) {
        const storage = storageFailure(err);
        if (storage) logStorageFailure(this.log, storage, { journaled: this.journal.pending.size });
        else this.log.error("folding the ping journal failed; its pings stay journaled", { error: err instanceof Error ? err.message : String(err) });
        this.lastPassFailed = true;
        return;
      }
      this.folded(done);
      next = reached;
      // The write queue and bun:sqlite are promise chains without I/O: without a turn of the event
      // loop between slices, the next one starts at once and no request is read until the pass ends
      // (heartbeat bench: p99 243 ms, a whole pass, with every slice under 10 ms).
      if (next < order.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.lastPassFailed = false;
    this.dropBatches(batches);
  }

  /** Folds soon: at once when a lot is pending, else FOLD_AFTER_MS after the first entry waited. */
  private foldSoon(): void {
    const size = this.journal.pending.size;
    if (this.journalLeft() === 0 || this.folding) return;
    if (size >= FOLD_ABOVE && !this.lastPassFailed) {
      if (this.foldTimer) clearTimeout(this.foldTimer);
      this.foldTimer = null;
      void this.startFold();
      return;
    }
    if (this.foldTimer || this.closed) return;
    this.foldTimer = setTimeout(() => {
      this.foldTimer = null;
      if (!this.folding) void this.startFold();
    }, FOLD_AFTER_MS);
    // what waits is durable in the journal: a process on its way out need not stay for it
    this.foldTimer.unref?.();
  }

  private startFold(): Promise<void> {
    const worker = this.worker?.alive ? this.worker : null;
    return (this.folding = (worker ? this.foldOnWorker(worker) : this.fold()).finally(() => {
      this.folding = null;
      if (!this.closed) this.foldSoon();
    }));
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
        if (ids.length) this.onEvaluateFailed(ids);
      };
      let rest: number[];
      try {
        // The cached rows are true while the epoch has not moved since they were filled. Read
        // outside a transaction: a change committing right after this read is ordered after these
        // pings, as if they had arrived a moment earlier.
        const cache = this.stmts.heartbeatEpoch() === this.rowsEpoch ? this.rows : NO_ROWS;
        const split = splitJournalable(ops, cache, () => this.journal.pending.nextId());
        rest = split.rest;
        const part = split.journal;
        if (part.entries.length > 0) {
          const batchId = this.journal.pending.nextBatchId();
          this.journal.file.append(batchId, part.entries);
          this.journal.pending.addBatch(batchId, part.entries);
          for (const i of part.indexes) outcomes[i] = ACCEPTED;
          // each journaled ping becomes an up check when it is folded
          this.countChecks({ up: part.entries.length, down: 0, degraded: 0 });
          this.committed({ deadlines: applyToCache(part), stateChanges: [], transitions: [] });
        }
      } catch (err) {
        failed(err);
        continue;
      }
      if (rest.length > 0) {
        const restOps = rest.map((i) => ops[i]!);
        let result: BatchResult;
        try {
          result = await this.ctx.writes.run((trx) => applyBatch(trx, this.ctx, this.stmts, this.journal, restOps, this.rowsEpoch), { gathered: true });
        } catch (err) {
          // the journal part, if any, is durable: its pings are recorded though their answer is an error
          failed(err);
          continue;
        }
        if (result.cacheStale) this.rows.clear();
        this.rowsEpoch = result.epoch;
        for (const [id, row] of result.rows) {
          if (row === null) this.rows.delete(id);
          else this.rows.set(id, row);
        }
        // before anything else runs in the write queue, so the next job sees what this one committed
        this.folded(result.folded);
        rest.forEach((i, k) => (outcomes[i] = result.outcomes[k]!));
        this.countChecks(result.checks);
        this.committed(result);
      }
      this.foldSoon();
      batch.outcomes = outcomes;
      this.count(outcomes);
      batch.resolve();
    }
  }

  private committed(r: Committed): void {
    try {
      this.onCommitted(r);
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
