/**
 * The ping journal behind one interface: append, fold, settle, last ping. The plain pings on up
 * heartbeat monitors that one ping batch accepts are appended as one record of the journal's
 * segment files (ping-journal-file.ts) and acknowledged once it is written; seconds later they are
 * folded (ping-fold.ts) into their permanent rows in the main database: a monitor_events ping, an up
 * check and the monitor's bookkeeping columns. Until then they wait here, in memory, by monitor
 * (pending-pings.ts).
 *
 * Why a journal: written directly, each ping inserted into two (monitor_id, time) indexes and
 * updated its monitor row, three random pages per ping in every commit; folded a few seconds of
 * pings at a time in monitor order, a monitor's rows share their index pages. Why outside the main
 * database: a fold worker (ping-fold-worker.ts) does the fold's inserts on its own connection,
 * and a plain ping's append never waits for the main database's write lock while the worker holds
 * it. (BENCHMARKS.md, heartbeat, has the figures of both choices.)
 */
import type { Database, Statement } from "bun:sqlite";
import type { Db, SqliteStore } from "./database.ts";
import { PendingPings } from "./pending-pings.ts";
import { preparePingFold, takeSlice, watermarks, type PingFold } from "./ping-fold.ts";
import { openPingJournal, readJournalBatches, type JournaledPing, type PingJournalFile } from "./ping-journal-file.ts";
import type { WriteQueue } from "./write-queue.ts";

/**
 * What a reader of the rows pings write is given of the journal: the only way it gets the database
 * is `settled`, which first folds the journaled pings of the monitors it reads.
 *
 * Why readers go through this rather than settle when they remember to: an acknowledged ping must
 * show at once wherever its rows are read (docs/architecture.md "One heartbeat ping", step 3), the
 * API's lists and the status pages and uptime figures alike, and a reader that forgot lagged the
 * ping by seconds. So every store read of checks and monitor_events a person sees
 * (store/check-queries.ts, store/event-queries.ts, the uptime of store/rollups.ts and
 * store/status-history.ts) takes a JournaledPings, not a Db. A monitor row's ping columns are the
 * exception that needs no fold: `lastPingAt` gives the newest journaled ping, which the row does not
 * show yet.
 */
export interface JournaledPings {
  /** the newest journaled ping of a monitor, if any: newer than its row's heartbeat_last_ping_at */
  lastPingAt(monitorId: number): number | undefined;
  /** The database, once these monitors' journaled pings are folded into their rows. */
  settled(monitorIds: readonly number[]): Promise<Db>;
}

/** While no journal is open (no heartbeat service, a probe, the CLI): nothing waits. */
export function nothingJournaled(db: Db): JournaledPings {
  return { lastPingAt: () => undefined, settled: async () => db };
}

export interface PingJournalOptions {
  dataDir: string;
  /** this instance's region, for the folded pings' checks */
  region: string;
  /** the main database's write queue: a reader's settle is one of its jobs */
  writes: WriteQueue;
}

export class PingJournal implements JournaledPings {
  /** segments holding only batches up to this id are deleted */
  private droppedThrough = 0;

  private constructor(
    private readonly store: SqliteStore,
    private readonly writes: WriteQueue,
    private readonly file: PingJournalFile,
    private readonly pending: PendingPings,
    private readonly folds: PingFold,
    /** the newest ping the ping_journal table carried in at open (0: none) */
    private readonly carriedThrough: number,
    /** pings found at open and not folded yet: the start-up folds them */
    readonly replayed: number,
  ) {}

  /**
   * Opens the journal's files for appending, with every ping that is not folded yet pending: the
   * journal's segments (a run that stopped without folding them) and the ping_journal table (a
   * backup's). New pings are numbered above every ping and watermark there is, or a new one could
   * be taken for one folded before.
   */
  static open(store: SqliteStore, o: PingJournalOptions): PingJournal {
    const file = openPingJournal(o.dataDir);
    const carried = carriedPings(store.sqlite).all();
    const onDisk = readJournalBatches(o.dataDir);
    const lastBatch = onDisk.reduce((n, b) => Math.max(n, b.id), 0);
    const marks = watermarks(store.sqlite);
    const found = [...carried, ...onDisk.flatMap((b) => b.pings)];
    let lastId = 0;
    for (const p of found) if (p.id > lastId) lastId = p.id;
    for (const mark of marks.values()) if (mark > lastId) lastId = mark;
    const pending = new PendingPings(lastId, lastBatch);
    // in id order, whichever place they come from: a monitor's pending pings must be
    const replay = found.filter((p) => p.id > (marks.get(p.monitorId) ?? Infinity)).sort((a, b) => a.id - b.id);
    for (const p of replay) pending.add(p);
    return new PingJournal(store, o.writes, file, pending, preparePingFold(store.sqlite, o.region), carried.at(-1)?.id ?? 0, replay.length);
  }

  // -- append

  /** An id for a new ping. */
  nextId(): number {
    return this.pending.nextId();
  }

  /** Writes one batch's pings as one record; they are acknowledged once this returns. Throws (ENOSPC, EIO) if they were not written. */
  append(pings: readonly JournaledPing[]): void {
    const batchId = this.pending.nextBatchId();
    this.file.append(batchId, pings);
    this.pending.addBatch(batchId, pings);
  }

  // -- last ping, and settle for readers

  /** pings not folded yet */
  get size(): number {
    return this.pending.size;
  }

  lastPingAt(monitorId: number): number | undefined {
    return this.pending.lastPingAt(monitorId);
  }

  async settled(monitorIds: readonly number[]): Promise<Db> {
    let waiting: number[] | null = null;
    for (const id of monitorIds) if (this.pending.has(id)) (waiting ??= []).push(id);
    if (waiting !== null) {
      const ids = waiting;
      this.folded(await this.writes.run(async () => this.foldNow(ids)));
    }
    return this.store.db;
  }

  // -- fold, inside a write job of the main database's connection

  /**
   * Folds these monitors' pending pings inside the caller's write job (a reader's settle, or the
   * direct path's batch before it touches a monitor); returns (monitor, newest ping id folded) for
   * `folded` once the job has committed.
   */
  foldNow(monitorIds: readonly number[]): [number, number][] {
    const lists: (readonly JournaledPing[])[] = [];
    const done: [number, number][] = [];
    for (const id of monitorIds) {
      const pings = this.pending.of(id);
      if (pings === undefined || pings.length === 0) continue;
      lists.push(pings);
      done.push([id, pings[pings.length - 1]!.id]);
    }
    if (lists.length > 0) this.folds.fold(lists);
    return done;
  }

  /**
   * One slice of a fold pass over `order` (monitors with pending pings, in id order) from place
   * `from`, about `limit` pings, inside the caller's write job; `done` goes to `folded` once the job
   * has committed, `next` is where the following slice starts.
   */
  foldSlice(order: readonly number[], from: number, limit: number): { done: [number, number][]; next: number } {
    const slice = takeSlice(order, from, limit, (id) => this.pending.of(id));
    this.folds.fold(slice.monitors);
    return { done: slice.done, next: slice.next };
  }

  /** What a committed fold folded, (monitor, newest ping id folded), here or on the fold worker: those pings are no longer pending. */
  folded(monitors: Iterable<readonly [number, number]>): void {
    for (const [id, through] of monitors) this.pending.dropThrough(id, through);
  }

  // -- what fold passes need

  /** monitors with pending pings, in id order: the order their index pages lie in */
  monitorIds(): number[] {
    return this.pending.monitorIds();
  }

  /** the newest batch whose pings were all added: a pass over what is pending folds every batch up to it */
  get batchesThrough(): number {
    return this.pending.batchesThrough;
  }

  /** pending pings, plus one while folded batches' segments are still on disk */
  get left(): number {
    return this.pending.size + (this.pending.batchesThrough > this.droppedThrough ? 1 : 0);
  }

  /** Deletes the segments holding only batches up to `batches` (a pass folded everything in them); throws if they could not be deleted. */
  dropBatches(batches: number): void {
    if (batches <= this.droppedThrough) return;
    this.file.dropBatches(batches);
    this.droppedThrough = batches;
  }

  /** Once everything is folded, empties the ping_journal table of what it carried in at open. */
  async forgetCarried(): Promise<void> {
    if (this.carriedThrough === 0 || this.pending.size > 0) return;
    const carried = carriedPings(this.store.sqlite);
    await this.writes.run(async () => carried.clearThrough(this.carriedThrough));
  }

  close(): void {
    this.file.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The ping_journal table: the pings `vigil backup` copies out of the journal's files that its copy
// has not folded (store/backup.ts), which a server started on the restored copy folds at start-up;
// a build before migration 013 journaled there too.

export interface CarriedPings {
  /** its pings, oldest first */
  all(): JournaledPing[];
  /** Deletes pings up to `id` (they are folded); inside a transaction of the caller's. */
  clearThrough(id: number): void;
  /** Adds pings (a backup's copy); inside a transaction of the caller's. */
  add(pings: readonly JournaledPing[]): void;
}

type CarriedRow = { id: number; monitor_id: number; at: number; source_ip: string | null; duration_ms: number | null; deadline_at: number | null };

export function carriedPings(sqlite: Database): CarriedPings {
  const all = sqlite.prepare("SELECT id, monitor_id, at, source_ip, duration_ms, deadline_at FROM ping_journal ORDER BY id") as Statement<CarriedRow, []>;
  const clear = sqlite.prepare("DELETE FROM ping_journal WHERE id <= ?");
  const insert = sqlite.prepare("INSERT OR IGNORE INTO ping_journal (id, monitor_id, at, source_ip, duration_ms, deadline_at) VALUES (?, ?, ?, ?, ?, ?)");
  return {
    all: () => all.all().map((r) => ({ id: r.id, monitorId: r.monitor_id, at: r.at, sourceIp: r.source_ip, durationMs: r.duration_ms, deadlineAt: r.deadline_at })),
    clearThrough: (id) => {
      clear.run(id);
    },
    add: (pings) => {
      for (const p of pings) insert.run(p.id, p.monitorId, p.at, p.sourceIp, p.durationMs, p.deadlineAt);
    },
  };
}
