/**
 * The ping journal's committed, not yet folded entries, in memory by monitor (store/ping-journal.ts
 * holds them on disk). Only the ping writer changes it, and only after a write job committed, so a
 * job that is rolled back and re-run (the write queue does that) finds it as it was.
 */
import type { JournalEntry } from "../store/ping-journal.ts";

export class PendingPings {
  private readonly byMonitor = new Map<number, JournalEntry[]>();
  private count = 0;
  private lastId: number;

  constructor(lastIdOnDisk = 0) {
    this.lastId = lastIdOnDisk;
  }

  /** An id for a new entry: increasing, never handed out twice by this process. */
  nextId(): number {
    return ++this.lastId;
  }

  get size(): number {
    return this.count;
  }

  /** a monitor's entries, oldest first (the array is live: do not keep it past the current job) */
  of(monitorId: number): readonly JournalEntry[] | undefined {
    return this.byMonitor.get(monitorId);
  }

  /** the newest pending ping of a monitor, which its row does not show yet */
  lastPingAt(monitorId: number): number | undefined {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined) return undefined;
    let at = list[0]!.at;
    for (const e of list) if (e.at > at) at = e.at;
    return at;
  }

  /** monitors with entries, in id order: the order their index pages lie in */
  monitorIds(): number[] {
    return [...this.byMonitor.keys()].sort((a, b) => a - b);
  }

  add(e: JournalEntry): void {
    if (e.id > this.lastId) this.lastId = e.id;
    const list = this.byMonitor.get(e.monitorId);
    if (list === undefined) this.byMonitor.set(e.monitorId, [e]);
    else list.push(e);
    this.count++;
  }

  /** Forgets a monitor's entries up to and including id `throughId` (they were folded). */
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
