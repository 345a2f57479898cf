/**
 * Every heartbeat monitor's next deadline in one min-heap, driven by a single setTimeout armed for
 * the earliest. Ten thousand monitors cost ten thousand heap entries, not ten thousand timers, and
 * nothing is polled: the process sleeps until the next transition is due.
 *
 * `current` holds each monitor's live deadline; the heap holds, for each, at least one entry no
 * later than it. Moving a deadline later (what every ping does) only updates `current`: when the
 * old, earlier entry surfaces it is re-queued at the live time. Only a new or earlier deadline
 * pushes. Entries no longer needed are dropped when they surface (or by a rebuild when they pile
 * up). Before, every ping pushed an entry and the pushes, pops and rebuilds were ~5% of the ping
 * path's CPU (heartbeat bench profile: siftDown, set).
 */
import type { Clock } from "../lib/clock.ts";

interface Entry {
  id: number;
  at: number;
}

/** setTimeout cannot wait longer than 2^31-1 ms; far deadlines (a yearly cron) re-arm on the way. */
const MAX_DELAY_MS = 6 * 60 * 60 * 1000;

export class DeadlineTimers {
  private heap: Entry[] = [];
  private current = new Map<number, number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private armedFor = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (ids: number[]) => void,
  ) {}

  /** Sets (or with null, clears) a monitor's deadline. A deadline in the past fires at once. */
  set(id: number, at: number | null): void {
    if (at === null) {
      this.current.delete(id);
    } else {
      const was = this.current.get(id);
      if (was === at) return;
      this.current.set(id, at);
      // a later deadline is covered by the entry that held the earlier one
      if (was !== undefined && was < at) return;
      this.push({ id, at });
    }
    if (this.heap.length > 2 * this.current.size + 1024) this.rebuild();
    this.arm();
  }

  get(id: number): number | null {
    return this.current.get(id) ?? null;
  }

  get size(): number {
    return this.current.size;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.stopped) return;
    this.dropStale();
    const top = this.heap[0];
    if (!top) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.armedFor = Infinity;
      return;
    }
    if (this.timer && this.armedFor === top.at) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, top.at - this.clock.now()));
    this.armedFor = top.at;
    this.timer = setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.clock.now();
    const due: number[] = [];
    for (;;) {
      this.dropStale();
      const top = this.heap[0];
      if (!top || top.at > now) break;
      this.pop();
      this.current.delete(top.id);
      due.push(top.id);
    }
    this.arm();
    if (due.length > 0) this.onDue(due);
  }

  /** Leaves a live entry on top: drops entries of cleared or earlier-moved deadlines, re-queues moved-later ones. */
  private dropStale(): void {
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      const live = this.current.get(top.id);
      if (live === top.at) return;
      this.pop();
      // live > top.at: moved later, and this was its covering entry. (live < top.at: an earlier
      // entry of the same monitor exists, pushed when the deadline moved earlier; this one is stale.)
      if (live !== undefined && live > top.at) this.push({ id: top.id, at: live });
    }
  }

  private rebuild(): void {
    this.heap = [...this.current].map(([id, at]) => ({ id, at }));
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.at <= h[i]!.at) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    this.siftDown(0);
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.at < h[m]!.at) m = l;
      if (r < h.length && h[r]!.at < h[m]!.at) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}
