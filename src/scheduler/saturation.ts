/**
 * Whether this instance runs its checks on time (README "State, scheduling and incidents").
 *
 * Saturated: over the last `windowMs`, more than 1% of checks started more than `boundMs` after
 * they were due (start lateness p99 above the bound), or a due check has waited more than
 * `boundMs` for a free slot (the in-flight cap is reached and the queue does not drain). It ends
 * once every tick of a whole window saw at most 1% of its starts later than half the bound and no
 * check waiting longer than half the bound, so a load at the edge does not flap. The start is one
 * warning with the figures, a reminder follows every `remindEveryMs` while it lasts, and the end
 * is one info line.
 *
 * Latency measured meanwhile includes our own queueing and event-loop delays: `judge` keeps such a
 * check from being degraded by api_max_latency_ms, and likewise, short of saturation, a check whose
 * excess over the limit this instance's own recent delay could explain.
 */
import type { CheckResult } from "../domain/check-result.ts";
import type { SaturationReport } from "../domain/saturation-report.ts";
import { setAsideLatencyVerdict } from "../domain/latency-verdict.ts";
import type { Logger } from "../lib/logger.ts";
import { bucketOf, bucketQuantile, LATENESS_BUCKETS_MS } from "./lateness.ts";

export interface SaturationOptions {
  /** start lateness or wait for a slot beyond which checks are not on time */
  boundMs: number;
  /** the stretch of recent starts judged, and how long it must stay quiet before saturation ends */
  windowMs: number;
  /** how often the verdict is taken */
  tickMs: number;
  /** how often a lasting saturation is logged again */
  remindEveryMs: number;
}

export const DEFAULT_SATURATION: SaturationOptions = { boundMs: 1000, windowMs: 10_000, tickMs: 1000, remindEveryMs: 60_000 };

/** Share of starts allowed past the bound (1%: the p99 is within it). */
const LATE_SHARE = 0.01;

/** What the scheduler holds at the moment of a verdict. */
export interface LoadNow {
  inFlight: number;
  maxConcurrent: number;
  waiting: number;
  /** how long the check at the head of the queue has waited for a slot */
  oldestWaitMs: number;
  /** checks per second the scheduled monitors ask for */
  askedPerSec: number;
}

interface Slot {
  runs: number;
  overBound: number;
  overHalf: number;
  max: number;
  counts: number[];
}

const emptySlot = (): Slot => ({ runs: 0, overBound: 0, overHalf: 0, max: 0, counts: new Array<number>(LATENESS_BUCKETS_MS.length + 1).fill(0) });

export class SaturationWatch {
  private readonly slots: Slot[];
  private current = 0;
  private readonly createdAt: number;
  private since: number | null = null;
  /** the last tick that was not quiet, while saturated */
  private lastLoudAt = 0;
  private lastEndedAt: number | null = null;
  private lastLogAt = 0;
  private setAside = 0;
  private last: SaturationReport;

  constructor(
    private readonly o: SaturationOptions,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    this.slots = Array.from({ length: Math.max(1, Math.ceil(o.windowMs / o.tickMs)) }, emptySlot);
    this.createdAt = now();
    this.last = { saturated: false, since: null, bound_ms: o.boundMs, checks_per_sec_asked: 0, checks_per_sec_started: 0, in_flight: 0, max_concurrent: 0, waiting: 0, oldest_wait_ms: 0, lateness_p99_ms: 0, lateness_max_ms: 0 };
  }

  get saturated(): boolean {
    return this.since !== null;
  }

  report(): SaturationReport {
    return this.last;
  }

  /** A check started `latenessMs` after it was due. */
  observeStart(latenessMs: number): void {
    const v = Math.max(0, latenessMs);
    const s = this.slots[this.current]!;
    s.runs++;
    s.counts[bucketOf(v)]!++;
    if (v > this.o.boundMs) s.overBound++;
    if (v > this.o.boundMs / 2) s.overHalf++;
    if (v > s.max) s.max = v;
  }

  /** Takes the verdict on the window and the load now, logs a change, and starts the next slot. */
  tick(load: LoadNow): SaturationReport {
    const now = this.now();
    let runs = 0, overBound = 0, max = 0;
    const counts = new Array<number>(LATENESS_BUCKETS_MS.length + 1).fill(0);
    for (const s of this.slots) {
      runs += s.runs;
      overBound += s.overBound;
      max = Math.max(max, s.max);
      s.counts.forEach((c, i) => (counts[i]! += c));
    }
    const covered = Math.min(this.o.windowMs, Math.max(this.o.tickMs, now - this.createdAt));
    const loud = overBound > runs * LATE_SHARE || load.oldestWaitMs > this.o.boundMs;
    const slot = this.slots[this.current]!;
    const quiet = slot.overHalf <= slot.runs * LATE_SHARE && load.oldestWaitMs <= this.o.boundMs / 2;
    const figures = {
      bound_ms: this.o.boundMs,
      checks_per_sec_asked: round1(load.askedPerSec),
      checks_per_sec_started: round1(runs / (covered / 1000)),
      in_flight: load.inFlight,
      max_concurrent: load.maxConcurrent,
      waiting: load.waiting,
      oldest_wait_ms: Math.round(load.oldestWaitMs),
      lateness_p99_ms: Math.round(bucketQuantile(counts, runs, max, 0.99)),
      lateness_max_ms: Math.round(max),
    };
    if (this.since === null && loud) {
      this.since = now;
      this.lastLoudAt = now;
      this.lastLogAt = now;
      this.setAside = 0;
      this.log.warn("saturated: checks are not starting on time; latency measured meanwhile does not degrade monitors", figures);
    } else if (this.since !== null) {
      if (!quiet) this.lastLoudAt = now;
      if (quiet && now - this.lastLoudAt >= this.o.windowMs) {
        this.log.info("saturation over: checks start on time again", { ...figures, lasted_ms: now - this.since, latency_not_judged: this.setAside });
        this.since = null;
        this.lastEndedAt = now;
      } else if (now - this.lastLogAt >= this.o.remindEveryMs) {
        this.lastLogAt = now;
        this.log.warn("still saturated: checks are not starting on time", { ...figures, lasted_ms: now - this.since, latency_not_judged: this.setAside });
      }
    }
    this.last = { saturated: this.since !== null, since: this.since, ...figures };
    this.current = (this.current + 1) % this.slots.length;
    this.slots[this.current] = emptySlot();
    return this.last;
  }

  /**
   * The result as recorded: a check is not degraded by its latency when it ran while this instance
   * was saturated (now, or at any moment since it started), when it itself started later than the
   * bound, or when its excess over the limit is no more than how far behind this instance has been
   * running (the longest start lateness of the window): short of saturation the event loop that
   * starts checks late also reads their answers late. `onSetAside` hears each check so spared.
   */
  judge(result: CheckResult, maxLatencyMs: number | null, startedAt: number, latenessMs: number, onSetAside?: () => void): CheckResult {
    if (result.status !== "degraded" || maxLatencyMs === null || result.latency_ms === null) return result;
    const lateItself = latenessMs > this.o.boundMs;
    const duringSaturation = this.since !== null || (this.lastEndedAt !== null && this.lastEndedAt >= startedAt);
    // the window's longest lateness, the starts since the last verdict included: a stall that
    // delayed a few starts (too few to move the p99) delayed the answers read meanwhile as much
    const behindMs = Math.max(this.last.lateness_max_ms, Math.round(this.slots[this.current]!.max));
    const excessMs = Math.round(result.latency_ms - maxLatencyMs);
    if (!lateItself && !duringSaturation && excessMs > behindMs) return result;
    const why = lateItself
      ? `measured while this Vigil instance was saturated (this check started ${seconds(latenessMs)} late)`
      : duringSaturation
        ? `measured while this Vigil instance was saturated (start lateness p99 ${seconds(this.last.lateness_p99_ms)}, ${this.last.waiting} checks waiting for a free slot)`
        : `this Vigil instance was running up to ${seconds(behindMs)} behind (its checks' longest start lateness over the last ${seconds(this.o.windowMs)}), enough to account for the ${excessMs} ms over the limit`;
    const judged = setAsideLatencyVerdict(result, maxLatencyMs, why);
    if (judged !== result) {
      this.setAside++;
      onSetAside?.();
    }
    return judged;
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}
