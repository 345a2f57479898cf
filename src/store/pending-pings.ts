/**
 * The ping journal's written, not yet folded pings, in memory by monitor (the journal's files hold
 * them on disk). Only the journal's owner changes it, and only after a write job committed, so a
 * job that is rolled back and re-run (the write queue does that) finds it as it was.
 *
 * Why packed, numbers only: at the rates pings come in, hundreds of thousands are pending at once.
 * As objects in per-monitor arrays they were most of the serving thread's live heap, and every
 * ping stored a reference into an old array, which the next young collection then scanned whole:
 * thousands of arrays each time, in a pause no request could be answered in (BENCHMARKS.md,
 * "Morning runs for issue 18, point 9: pending pings as numbers"). So a ping is five numbers in its monitor's Float64Array,
 * its sender's address a number too (Addresses), and a monitor's entry stays when it empties:
 * storing a number writes no reference the collector must look at again.
 */
import type { JournaledPing } from "./ping-journal-file.ts";

/** id, at, durationMs, deadlineAt (NaN for null), and the sender's address as Addresses numbers it */
const FIELDS = 5;

/**
 * Senders' addresses as numbers. Few and long-lived (a job pings from one host), so the table
 * rarely changes; PendingPings renumbers it when it outgrows what is still pending.
 */
class Addresses {
  private readonly numbers = new Map<string, number>();
  private readonly list: string[] = [];
  get size(): number {
    return this.list.length;
  }
  /** -1 for none */
  numberOf(ip: string | null): number {
    if (ip === null) return -1;
    let n = this.numbers.get(ip);
    if (n === undefined) {
      n = this.list.push(ip) - 1;
      this.numbers.set(ip, n);
    }
    return n;
  }
  address(n: number): string | null {
    return n < 0 ? null : this.list[n]!;
  }
}

/** Above this many addresses (or twice what was in use at the last renumbering), the table is renumbered to what pending pings still use. */
const ADDRESSES_KEPT = 10_000;
/** Entries of monitors that stay empty this long (in emptied entries) are forgotten. */
const SWEEP_EVERY = 100_000;

/** One monitor's pending pings, oldest first, from `head` to `end`. */
class MonitorPings {
  numbers = new Float64Array(FIELDS * 4);
  head = 0;
  end = 0;
  /** empty at the last sweep */
  idle = false;

  get length(): number {
    return this.end - this.head;
  }

  push(p: JournaledPing, address: number): void {
    if ((this.end + 1) * FIELDS > this.numbers.length) this.makeRoom();
    const o = this.end * FIELDS;
    const n = this.numbers;
    n[o] = p.id;
    n[o + 1] = p.at;
    n[o + 2] = p.durationMs ?? NaN;
    n[o + 3] = p.deadlineAt ?? NaN;
    n[o + 4] = address;
    this.end++;
  }

  id(i: number): number {
    return this.numbers[(this.head + i) * FIELDS]!;
  }

  at(i: number): number {
    return this.numbers[(this.head + i) * FIELDS + 1]!;
  }

  ping(monitorId: number, i: number, addresses: Addresses): JournaledPing {
    const o = (this.head + i) * FIELDS;
    const n = this.numbers;
    return { id: n[o]!, monitorId, at: n[o + 1]!, sourceIp: addresses.address(n[o + 4]!), durationMs: orNull(n[o + 2]!), deadlineAt: orNull(n[o + 3]!) };
  }

  /** Drops the first `count` pings. */
  drop(count: number): void {
    this.head += count;
    if (this.head === this.end) this.head = this.end = 0;
  }

  /** Gives each ping's address its number in a renumbered table. */
  renumber(to: (old: number) => number): void {
    for (let o = this.head * FIELDS + 4; o < this.end * FIELDS; o += FIELDS) this.numbers[o] = to(this.numbers[o]!);
  }

  /** Moves what is kept to the front, and grows the array when that is not room enough. */
  private makeRoom(): void {
    const kept = this.length;
    if ((kept + 1) * FIELDS > this.numbers.length / 2) {
      const grown = new Float64Array(this.numbers.length * 2);
      grown.set(this.numbers.subarray(this.head * FIELDS, this.end * FIELDS));
      this.numbers = grown;
    } else this.numbers.copyWithin(0, this.head * FIELDS, this.end * FIELDS);
    this.head = 0;
    this.end = kept;
  }
}

const orNull = (v: number): number | null => (Number.isNaN(v) ? null : v);

export class PendingPings {
  private readonly byMonitor = new Map<number, MonitorPings>();
  private addresses = new Addresses();
  private addressLimit = ADDRESSES_KEPT;
  private count = 0;
  /** entries emptied since the last sweep */
  private emptied = 0;
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

  /** whether a monitor has pending pings */
  has(monitorId: number): boolean {
    return (this.byMonitor.get(monitorId)?.length ?? 0) > 0;
  }

  /** a monitor's pings, oldest first, as objects made for the caller (a fold on this thread) */
  of(monitorId: number): JournaledPing[] | undefined {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined || list.length === 0) return undefined;
    const out = new Array<JournaledPing>(list.length);
    for (let i = 0; i < list.length; i++) out[i] = list.ping(monitorId, i, this.addresses);
    return out;
  }

  /** the newest pending ping of a monitor, which its row does not show yet */
  lastPingAt(monitorId: number): number | undefined {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined || list.length === 0) return undefined;
    let at = list.at(0);
    for (let i = 1; i < list.length; i++) if (list.at(i) > at) at = list.at(i);
    return at;
  }

  /** monitors with pings, in id order: the order their index pages lie in */
  monitorIds(): number[] {
    const ids: number[] = [];
    for (const [id, list] of this.byMonitor) if (list.length > 0) ids.push(id);
    return ids.sort((a, b) => a - b);
  }

  add(p: JournaledPing): void {
    if (p.id > this.lastId) this.lastId = p.id;
    let list = this.byMonitor.get(p.monitorId);
    if (list === undefined) this.byMonitor.set(p.monitorId, (list = new MonitorPings()));
    if (p.sourceIp !== null && this.addresses.size >= this.addressLimit) this.renumberAddresses();
    list.push(p, this.addresses.numberOf(p.sourceIp));
    this.count++;
  }

  /** Forgets a monitor's pings up to and including id `throughId` (they were folded). */
  dropThrough(monitorId: number, throughId: number): void {
    const list = this.byMonitor.get(monitorId);
    if (list === undefined) return;
    let n = 0;
    while (n < list.length && list.id(n) <= throughId) n++;
    list.drop(n);
    this.count -= n;
    if (list.length === 0 && ++this.emptied >= SWEEP_EVERY) this.sweep();
  }

  /** Forgets the entries of monitors that were empty at the last sweep and still are (deleted, or no longer pinged). */
  private sweep(): void {
    this.emptied = 0;
    for (const [id, list] of this.byMonitor) {
      if (list.length > 0) list.idle = false;
      else if (list.idle) this.byMonitor.delete(id);
      else list.idle = true;
    }
  }

  /** A table of only the addresses pending pings use, when senders from many addresses have come and gone. */
  private renumberAddresses(): void {
    const old = this.addresses;
    const fresh = new Addresses();
    for (const list of this.byMonitor.values()) list.renumber((n) => fresh.numberOf(old.address(n)));
    this.addresses = fresh;
    // twice what is in use: with that many senders still pending, renumbering again at once would gain nothing
    this.addressLimit = Math.max(ADDRESSES_KEPT, fresh.size * 2);
  }
}
