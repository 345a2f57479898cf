/**
 * Every heartbeat monitor's next deadline in one min-heap (lib/min-heap.ts, the scheduler's), driven
 * by a single setTimeout armed for the earliest. Ten thousand monitors cost ten thousand heap
 * entries, not ten thousand timers, and nothing is polled: the process sleeps until the next
 * transition is due.
 *
 * Each monitor has one heap entry whose key is no later than its live deadline. Moving a deadline
 * later (what every ping does) only updates the live time: when the entry surfaces it is re-keyed to
 * it. Only a new or earlier deadline touches the heap: a push per ping was a measurable share of the
 * ping path's CPU (BENCHMARKS.md, heartbeat: "Figures behind the ping path's code").
 */
import type { Clock } from "../lib/clock.ts";
import { MinHeap, type HeapItem } from "../lib/min-heap.ts";

interface Deadline extends HeapItem {
  id: number;
  /** the monitor's deadline now; `key` (its place in the heap) is never later than it */
  live: number;
}

/** setTimeout cannot wait longer than 2^31-1 ms; far deadlines (a yearly cron) re-arm on the way. */
const MAX_DELAY_MS = 6 * 60 * 60 * 1000;

export class DeadlineTimers {
  private readonly heap = new MinHeap<Deadline>();
  private readonly deadlines = new Map<number, Deadline>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private armedFor = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (ids: number[]) => void,
  ) {}

  /** Sets (or with null, clears) a monitor's deadline. A deadline in the past fires at once. */
  set(id: number, at: number | null): void {
    const d = this.deadlines.get(id);
    if (at === null) {
      if (!d) return;
      this.heap.remove(d);
      this.deadlines.delete(id);
    } else if (!d) {
      const fresh: Deadline = { id, live: at, key: at, heapIndex: -1 };
      this.deadlines.set(id, fresh);
      this.heap.push(fresh);
    } else {
      if (d.live === at) return;
      d.live = at;
      // a later deadline is covered by the entry's current place; an earlier one moves it up
      if (at < d.key) this.heap.update(d, at);
    }
    this.arm();
  }

  get(id: number): number | null {
    return this.deadlines.get(id)?.live ?? null;
  }

  get size(): number {
    return this.deadlines.size;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The earliest live deadline on top: entries whose deadline moved later are re-keyed first. */
  private top(): Deadline | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (!top || top.key === top.live) return top;
      this.heap.update(top, top.live);
    }
  }

  private arm(): void {
    if (this.stopped) return;
    const top = this.top();
    if (!top) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.armedFor = Infinity;
      return;
    }
    if (this.timer && this.armedFor === top.key) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, top.key - this.clock.now()));
    this.armedFor = top.key;
    this.timer = setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.clock.now();
    const due: number[] = [];
    for (let top = this.top(); top && top.key <= now; top = this.top()) {
      this.heap.pop();
      this.deadlines.delete(top.id);
      due.push(top.id);
    }
    this.arm();
    if (due.length > 0) this.onDue(due);
  }
}
