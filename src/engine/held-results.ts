import type { CheckResult } from "../domain/check-result.ts";
import type { Logger } from "../lib/logger.ts";
import { storageFailure } from "../lib/storage-errors.ts";

/**
 * Most check results held while the database cannot be reached. A result is about a kilobyte (a
 * synthetic trace is more): this keeps the wait to tens of megabytes, several minutes of results
 * for ten thousand monitors checked every minute.
 */
export const HELD_RESULTS_LIMIT = 50_000;
/** how often the oldest held result is tried again */
export const HELD_RETRY_MS = 1000;
/** results written at once when the database is back: they share group commits */
const DRAIN_CHUNK = 200;
/** a line about results dropped at the bound, at most this often */
const DROP_LOG_INTERVAL_MS = 60_000;

type Write = (monitorId: number, region: string, result: CheckResult) => Promise<void>;

interface Held {
  monitorId: number;
  region: string;
  result: CheckResult;
}

export interface HeldResultsOptions {
  log: Logger;
  limit?: number;
  retryMs?: number;
  /** results dropped at the bound, for /metrics */
  onDropped?: (n: number) => void;
}

/**
 * Check results that could not be written because the database was unreachable (README, "When the
 * database is unreachable"): the checks go on, their results wait here in arrival order, and are
 * written in that order once a retry gets through. While any wait, new results queue behind them,
 * so a monitor's results reach the store in the order they were taken. Past `limit` the oldest go
 * first (the newest say most about now); each drop is counted and logged once a minute. Any other
 * failure is the caller's, as before.
 */
export class HeldResults {
  private queue: Held[] = [];
  private head = 0;
  /** results of the chunk being written: they count as waiting, but cannot be dropped */
  private inFlight = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private draining: Promise<void> | null = null;
  private droppedSinceLog = 0;
  private lastDropLog = 0;
  private stopped = false;
  private readonly limit: number;
  private readonly retryMs: number;
  /** results held since start, written after a wait, and dropped at the bound */
  readonly counters = { held: 0, written: 0, dropped: 0 };

  constructor(private readonly write: Write, private readonly o: HeldResultsOptions) {
    this.limit = Math.max(1, o.limit ?? HELD_RESULTS_LIMIT);
    this.retryMs = o.retryMs ?? HELD_RETRY_MS;
  }

  /** results waiting now */
  get size(): number {
    return this.queue.length - this.head + this.inFlight;
  }

  /** Writes a result, or holds it while the database cannot be reached (or others wait before it). */
  async record(monitorId: number, region: string, result: CheckResult): Promise<void> {
    if (this.size > 0) return this.hold({ monitorId, region, result });
    try {
      await this.write(monitorId, region, result);
    } catch (err) {
      if (storageFailure(err) !== "unavailable" || this.stopped) throw err;
      this.hold({ monitorId, region, result });
    }
  }

  /** Tries once more to write what waits (within `deadlineMs`), then says how many results are lost. */
  async stop(deadlineMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.size > 0) await Promise.race([this.draining ?? this.drain(), Bun.sleep(deadlineMs)]);
    if (this.size > 0) this.o.log.error("check results still held at shutdown are lost: the database did not come back in time", { results: this.size });
  }

  private hold(h: Held): void {
    if (this.size === 0) this.o.log.warn("the database cannot be reached: check results wait in memory until it returns", { limit: this.limit });
    this.queue.push(h);
    this.counters.held++;
    const queued = this.queue.length - this.head;
    if (this.size > this.limit && queued > 0) this.dropOldest(Math.min(queued, this.size - this.limit));
    this.arm();
  }

  private dropOldest(n: number): void {
    this.head += n;
    this.compact();
    this.counters.dropped += n;
    this.droppedSinceLog += n;
    this.o.onDropped?.(n);
    const now = Date.now();
    if (now - this.lastDropLog >= DROP_LOG_INTERVAL_MS) {
      this.o.log.error("check results dropped: more were held than the bound while the database could not be reached", { dropped: this.droppedSinceLog, held: this.size, limit: this.limit });
      this.lastDropLog = now;
      this.droppedSinceLog = 0;
    }
  }

  private compact(): void {
    // the array is cut once its consumed head is half of it, so holding stays O(1) per result
    if (this.head === this.queue.length || (this.head > 1024 && this.head * 2 > this.queue.length)) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private arm(): void {
    if (this.timer || this.draining || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.drain();
    }, this.retryMs);
  }

  /** Writes what waits, oldest first, a chunk at a time; stops at the first chunk the database refuses. */
  private drain(): Promise<void> {
    return (this.draining ??= (async () => {
      let written = 0;
      try {
        while (this.size > 0) {
          const chunk = this.queue.slice(this.head, this.head + DRAIN_CHUNK);
          this.head += chunk.length;
          this.inFlight = chunk.length;
          const outcomes = await Promise.allSettled(chunk.map((h) => this.write(h.monitorId, h.region, h.result)));
          this.inFlight = 0;
          // what the database refused again waits on, in its place; anything else failed for good
          const again: Held[] = [];
          outcomes.forEach((r, i) => {
            if (r.status === "fulfilled") written++;
            else if (storageFailure(r.reason) === "unavailable") again.push(chunk[i]!);
            else this.o.log.error("recording a held check result failed", { monitor_id: chunk[i]!.monitorId, error: String(r.reason) });
          });
          if (again.length > 0) {
            // results held while this chunk was written sit behind it: the refused ones go back in front
            this.queue = [...again, ...this.queue.slice(this.head)];
            this.head = 0;
            return;
          }
          this.compact();
        }
      } finally {
        this.counters.written += written;
        if (written > 0) this.o.log.info(this.size === 0 ? "the database is back: held check results written" : "wrote some held check results", { results: written, still_held: this.size });
        this.draining = null;
        if (this.size > 0) this.arm();
      }
    })());
  }
}
