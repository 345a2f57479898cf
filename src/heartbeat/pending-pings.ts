/**
 * The ping journal's committed, not yet folded entries, in memory by monitor, as stored (the
 * journal's files hold them on disk). Only the ping writer changes it, and only after a write job
 * committed, so a job that is rolled back and re-run (the write queue does that) finds it as it was.
 */
import type { StoredEntry } from "../store/ping-journal.ts";

export class PendingPings {
  private readonly byMonitor = new Map<number, StoredEntry[]>();
  private count = 0;
  private lastId: number;
  private lastBatchId: number;
  private addedThrough: number;

  /** `lastIdOnDisk` must be at least every monitor's watermark (store/ping-journal.ts). */
  constructor(lastIdOnDisk = 0, lastBatchOnDisk = 0) {
    this.lastId = lastIdOnDisk;
    this.lastBatchId = lastBatchOnDisk;
    this.addedThrough = lastBatchOnDisk;
  }

  /** An id for a new entry: increasing, never handed out twice. */
  nextId(): number {
    return ++this.lastId;
  }

  /** An id for a new journal record (a batch's entries): increasing, never handed out twice by this process. */
  nextBatchId(): number {
    return ++this.lastBatchId;
  }

  /**
   * The newest batch whose entries were all added: every entry of this batch and older ones is
   * here or folded already, so once a fold pass has folded what is here their segments can go.
   */
  get batchesThrough(): number {
    return this.addedThrough;
  }

  /** Adds a committed batch's entries. */
  addBatch(batchId: number, entries: readonly StoredEntry[]): void {
    for (const e of entries) this.add(e);
    if (batchId > this.addedThrough) this.addedThrough = batchId;
  }

  get size(): number {
    return this.count;
  }

  /** a monitor's entries, oldest first (the array is live: do not keep it past the current job) */
  of(monitorId: number): readonly StoredEntry[] | undefined {
    return this.byMonitor.get(monitorId);
  }

  /** the newest pending ping of a monitor, which its row does not show yet */
  lastPingAt(monitorId: number): number | undefined {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined) return undefined;
    let at = list[0]![2];
    for (const e of list) if (e[2] > at) at = e[2];
    return at;
  }

  /** monitors with entries, in id order: the order their index pages lie in */
  monitorIds(): number[] {
    return [...this.byMonitor.keys()].sort((a, b) => a - b);
  }

  add(e: StoredEntry): void {
    if (e[0] > this.lastId) this.lastId = e[0];
    const list = this.byMonitor.get(e[1]);
    if (list === undefined) this.byMonitor.set(e[1], [e]);
    else list.push(e);
    this.count++;
  }

  /** Forgets a monitor's entries up to and including id `throughId` (they were folded). */
  dropThrough(monitorId: number, throughId: number): void {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined) return;
    let n = 0;
    while (n < list.length && list[n]![0] <= throughId) n++;
    if (n === list.length) this.byMonitor.delete(monitorId);
    else list.splice(0, n);
    this.count -= n;
  }
}
