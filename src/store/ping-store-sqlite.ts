/**
 * The ping store on SQLite (the interface: ping-store.ts). A batch's plain pings on up monitors,
 * judged against the rows earlier batches left (ping-journal-split.ts), go to the ping journal
 * (ping-journal.ts) and are acknowledged once its record is written; the fold scheduler
 * (ping-fold-scheduler.ts) has them folded into their rows seconds later, on the fold worker. The
 * rest of the batch is one job of the write queue, on the prepared statements of
 * ping-statements.ts, after the journaled pings of its monitors are folded in the same
 * transaction. The rows that job read, as it left them, are what the next batches judge by, while
 * the heartbeat epoch stands where it was.
 */
import { opMonitorId, type HeartbeatOp } from "../domain/heartbeat-ping.ts";
import type { Db, SqliteStore } from "./database.ts";
import { FOLD_SLICE, FoldScheduler } from "./ping-fold-scheduler.ts";
import { startFoldThread } from "./ping-fold-thread.ts";
import { PingJournal } from "./ping-journal.ts";
import { applyToCache, splitJournalable } from "./ping-journal-split.ts";
import { preparePingStatements, type BatchStatements, type PingMonitorRow, type SqlitePingStatements } from "./ping-statements.ts";
import type { PingStore, PingStoreOptions, Taken } from "./ping-store.ts";

const NO_ROWS: ReadonlyMap<number, PingMonitorRow> = new Map();
const NO_DEADLINES: ReadonlyMap<number, number | null> = new Map();

export function openJournaledPingStore(store: SqliteStore, o: PingStoreOptions): PingStore {
  return new JournaledPingStore(store, o);
}

class JournaledPingStore implements PingStore {
  readonly sharedByInstances = false;
  private readonly journal: PingJournal;
  private readonly folds: FoldScheduler;
  private readonly stmts: SqlitePingStatements;
  /** monitor rows as the last committed batch that read them left them */
  private rows = new Map<number, PingMonitorRow>();
  /** the heartbeat epoch `rows` are true at */
  private rowsEpoch = -1;

  constructor(
    private readonly store: SqliteStore,
    private readonly o: PingStoreOptions,
  ) {
    this.journal = PingJournal.open(store, { dataDir: o.dataDir, region: o.region, writes: o.writes });
    this.folds = new FoldScheduler(this.journal, o.writes, o.log);
    this.stmts = preparePingStatements(store.sqlite, o.region);
  }

  get reads(): PingJournal {
    return this.journal;
  }

  get waiting(): number {
    return this.journal.size;
  }

  /**
   * The cached rows are true while the epoch has not moved since they were filled. Read outside a
   * transaction: a change committing right after this read is ordered after these pings, as if
   * they had arrived a moment earlier.
   */
  take(ops: readonly HeartbeatOp[]): Taken {
    const cache = this.stmts.heartbeatEpoch() === this.rowsEpoch ? this.rows : NO_ROWS;
    const split = splitJournalable(ops, cache, () => this.journal.nextId());
    const part = split.journal;
    if (part.pings.length === 0) return { accepted: [], deadlines: NO_DEADLINES, rest: split.rest };
    this.journal.append(part.pings);
    return { accepted: part.indexes, deadlines: applyToCache(part), rest: split.rest };
  }

  async write<T>(ops: readonly HeartbeatOp[], apply: (trx: Db, stmts: BatchStatements) => Promise<T>): Promise<T> {
    const cachedAt = this.rowsEpoch;
    const ids = [...new Set(ops.map(opMonitorId))];
    const done = await this.o.writes.run(async (trx) => {
      // Anything that changed a heartbeat monitor since the cache was filled moved the epoch, even
      // a change committed in this very transaction: then the cache starts over.
      const stale = this.stmts.heartbeatEpoch() !== cachedAt;
      // Before anything else touches a monitor, its journaled pings are folded, so its row and
      // timeline hold every ping acknowledged before: a deadline is judged from the true last ping.
      const folded = this.journal.foldNow(ids);
      const read = new Map<number, PingMonitorRow | null>();
      const value = await apply(trx, readsNoted(this.stmts, read));
      // after this batch's own flips, which it knows of: the rows it read are true at this epoch
      return { value, stale, folded, read, epoch: this.stmts.heartbeatEpoch() };
    }, { gathered: true });
    if (done.stale) this.rows.clear();
    this.rowsEpoch = done.epoch;
    for (const [id, row] of done.read) {
      if (row === null) this.rows.delete(id);
      else this.rows.set(id, row);
    }
    // before anything else runs in the write queue, so the next job sees what this one committed
    this.journal.folded(done.folded);
    return done.value;
  }

  forget(monitorId: number): void {
    this.rows.delete(monitorId);
  }

  afterBatch(): void {
    this.folds.soon();
  }

  /** Folds what the last run journaled and did not fold (and a restored backup's), then hands the folding to the fold worker. */
  async start(): Promise<void> {
    const { journal, folds, o } = this;
    if (journal.left > 0) await folds.foldAll();
    await journal.forgetCarried();
    if (journal.replayed > 0) o.log.info("folded the pings the last run journaled", { pings: journal.replayed });
    try {
      folds.useWorker(await startFoldThread({ databasePath: this.store.path, dataDir: o.dataDir, region: o.region, slice: FOLD_SLICE, onFolded: (m) => journal.folded(m), log: o.log }));
    } catch (err) {
      o.log.error("the fold worker could not start; the serving thread folds the ping journal", { error: err instanceof Error ? err.message : String(err) });
    }
  }

  settleAll(): Promise<void> {
    return this.folds.foldAll();
  }

  async close(): Promise<void> {
    await this.folds.close();
    this.journal.close();
  }
}

/**
 * The statements, with the rows a batch reads noted in `read`: those objects, as the batch leaves
 * them, are the next batches' cache once it has committed.
 */
function readsNoted(stmts: SqlitePingStatements, read: Map<number, PingMonitorRow | null>): BatchStatements {
  return {
    ...stmts,
    pingMonitors(ids) {
      const rows = stmts.pingMonitors(ids);
      for (const [id, row] of rows) read.set(id, row);
      return rows;
    },
  };
}
