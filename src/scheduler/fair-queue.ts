/**
 * Due runs waiting for a slot, and the slots they hold, account by account (README "State,
 * scheduling and incidents"). While the scheduler holds the monitors of more than one account, an
 * account may hold at most `perAccount` of the `total` slots, so the others always find room; and
 * the waiting runs are taken from the accounts in turn, one at a time, so one account's backlog
 * never sits in front of another's run. With a single account it is the plain first-in first-out
 * line with the one global cap.
 */

/** A due run waiting for a slot. */
export interface WaitingRun<T> {
  item: T;
  account: number;
  dueAt: number;
}

/** One account's runs in arrival order; `head` moves instead of shifting the array. */
class Line<T> {
  private runs: WaitingRun<T>[] = [];
  private head = 0;

  get size(): number {
    return this.runs.length - this.head;
  }

  get first(): WaitingRun<T> | undefined {
    return this.runs[this.head];
  }

  push(run: WaitingRun<T>): void {
    this.runs.push(run);
  }

  shift(): WaitingRun<T> {
    const run = this.runs[this.head]!;
    this.runs[this.head++] = undefined as never;
    if (this.head > 1024 && this.head * 2 > this.runs.length) {
      this.runs = this.runs.slice(this.head);
      this.head = 0;
    }
    return run;
  }
}

export class FairQueue<T> {
  /** accounts with waiting runs, in the order their turn comes (a Map keeps insertion order) */
  private lines = new Map<number, Line<T>>();
  private waitingCount = 0;
  private running = new Map<number, number>();
  private runningCount = 0;
  /** monitors scheduled per account: the share applies while there are two accounts or more */
  private scheduledBy = new Map<number, number>();

  constructor(
    readonly total: number,
    readonly perAccount: number,
  ) {}

  /** Runs waiting for a slot. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Slots held. */
  get inFlight(): number {
    return this.runningCount;
  }

  /** The earliest due time among the runs at the head of each account's line. */
  oldestDueAt(): number | null {
    let oldest: number | null = null;
    for (const line of this.lines.values()) {
      const d = line.first!.dueAt;
      if (oldest === null || d < oldest) oldest = d;
    }
    return oldest;
  }

  /** A monitor of `account` is scheduled (+1) or no longer (-1). */
  scheduled(account: number, delta: 1 | -1): void {
    const n = (this.scheduledBy.get(account) ?? 0) + delta;
    if (n > 0) this.scheduledBy.set(account, n);
    else this.scheduledBy.delete(account);
  }

  push(item: T, account: number, dueAt: number): void {
    let line = this.lines.get(account);
    if (!line) this.lines.set(account, (line = new Line<T>()));
    line.push({ item, account, dueAt });
    this.waitingCount++;
  }

  /**
   * The next run that may take a slot now, or null: every slot is held, nothing waits, or every
   * account with waiting runs holds its share. Its account's turn passes to the next account.
   */
  next(): WaitingRun<T> | null {
    if (this.runningCount >= this.total) return null;
    const shared = this.scheduledBy.size > 1;
    for (const [account, line] of this.lines) {
      if (shared && (this.running.get(account) ?? 0) >= this.perAccount) continue;
      const run = line.shift();
      this.waitingCount--;
      this.lines.delete(account);
      if (line.size > 0) this.lines.set(account, line);
      return run;
    }
    return null;
  }

  /** A run of `account` took a slot. */
  started(account: number): void {
    this.running.set(account, (this.running.get(account) ?? 0) + 1);
    this.runningCount++;
  }

  /** A run of `account` gave its slot back. */
  finished(account: number): void {
    const n = (this.running.get(account) ?? 0) - 1;
    if (n > 0) this.running.set(account, n);
    else this.running.delete(account);
    this.runningCount--;
  }

  /** Drops every waiting run (shutdown); slots held stay counted until their runs finish. */
  clear(): void {
    this.lines.clear();
    this.waitingCount = 0;
  }
}
