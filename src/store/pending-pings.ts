/**
 * The ping journal's written, not yet folded pings, in memory by monitor (the journal's files hold
 * them on disk). Only the journal's owner changes it, and only after a write job committed, so a
 * job that is rolled back and re-run (the write queue does that) finds it as it was.
 */
import type { JournaledPing } from "./ping-journal-file.ts";

export class PendingPings {
  private readonly byMonitor = new Map<number, JournaledPing[]>();
  private count = 0;
  private lastId: number;
  private lastBatchId: number;
  private addedThrough: number;

  /** `lastIdOnDisk` must be at least every monitor's watermark (store/ping-fold.ts). */
  constructor(lastIdOnDisk = 0, lastBatchOnDisk = 0) {
    this.lastId = lastIdOnDisk;
    this.lastBatchId = lastBatchOnDisk;
    this.addedThrough = lastBatchOnDisk;
  }

  /** An id for a new ping: increasing, never handed out twice. */
  nextId(): number {
    return ++this.lastId;
  }

  /** An id for a new journal record (a batch's pings): increasing, never handed out twice by this process. */
  nextBatchId(): number {
    return ++this.lastBatchId;
  }

  /**
   * The newest batch whose pings were all added: every ping of this batch and older ones is here
   * or folded already, so once a fold pass has folded what is here their segments can go.
   */
  get batchesThrough(): number {
    return this.addedThrough;
  }

  /** Adds a written batch's pings. */
  addBatch(batchId: number, pings: readonly JournaledPing[]): void {
    for (const p of pings) this.add(p);
    if (batchId > this.addedThrough) this.addedThrough = batchId;
  }

  get size(): number {
    return this.count;
  }

  /** a monitor's pings, oldest first (the array is live: do not keep it past the current job) */
  of(monitorId: number): readonly JournaledPing[] | undefined {
    return this.byMonitor.get(monitorId);
  }

  /** the newest pending ping of a monitor, which its row does not show yet */
  lastPingAt(monitorId: number): number | undefined {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined) return undefined;
    let at = list[0]!.at;
    for (const p of list) if (p.at > at) at = p.at;
    return at;
  }

  /** monitors with pings, in id order: the order their index pages lie in */
  monitorIds(): number[] {
    return [...this.byMonitor.keys()].sort((a, b) => a - b);
  }

  add(p: JournaledPing): void {
    if (p.id > this.lastId) this.lastId = p.id;
    const list = this.byMonitor.get(p.monitorId);
    if (list === undefined) this.byMonitor.set(p.monitorId, [p]);
    else list.push(p);
    this.count++;
  }

  /** Forgets a monitor's pings up to and including id `throughId` (they were folded). */
  dropThrough(monitorId: number, throughId: number): void {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined) return;
    let n = 0;
    while (n < list.length && list[n]!.id <= throughId) n++;
    if (n === list.length) this.byMonitor.delete(monitorId);
    else list.splice(0, n);
    this.count -= n;
  }
}
