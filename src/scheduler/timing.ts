/**
 * When runs happen: pure functions of monitor id, interval and time, so the spread is the same on
 * every restart and testable without a clock.
 */

/** The longest wait before re-checking after a region's first failure (docs/monitors.md "Scheduling"). */
export const MAX_RECHECK_DELAY_MS = 10_000;

/** Never run a monitor more often than this, whatever its stored interval says. */
export const MIN_INTERVAL_MS = 1_000;

/** A monitor's fixed place within its interval: monitors created together land at different times. */
export function phaseOffset(monitorId: number, intervalMs: number): number {
  // 32-bit integer mix (a murmur3 finaliser) so consecutive ids land far apart within the interval
  let h = monitorId >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h % Math.max(1, Math.floor(intervalMs));
}

/** The first slot of the monitor's phase at or after `after`. */
export function slotAtOrAfter(after: number, intervalMs: number, offset: number): number {
  const base = after - offset;
  const k = Math.ceil(base / intervalMs);
  return k * intervalMs + offset;
}

/**
 * The run after one that was due at `dueAt` and started at `now`: one interval on, keeping the
 * cadence; when the scheduler fell a whole interval behind, the next slot of the phase after now
 * (missed runs are skipped, not bunched).
 */
export function nextRegularRun(dueAt: number, now: number, intervalMs: number, offset: number): number {
  const next = dueAt + intervalMs;
  return next > now ? next : slotAtOrAfter(now + 1, intervalMs, offset);
}

/**
 * After a run that happened off the phase (the first run of a new or resumed monitor, or a
 * re-check), the next run joins the phase: the first slot at least half an interval away, so the
 * gap is between 0.5 and 1.5 intervals and thousands of monitors created together spread over a
 * whole interval.
 */
export function joinPhase(now: number, intervalMs: number, offset: number): number {
  return slotAtOrAfter(now + Math.ceil(intervalMs / 2), intervalMs, offset);
}

/** How soon a region re-checks after its first failure: min(interval, 10 s). */
export function recheckDelay(intervalMs: number, maxDelayMs = MAX_RECHECK_DELAY_MS): number {
  return Math.min(intervalMs, maxDelayMs);
}

export function effectiveIntervalMs(intervalSec: number): number {
  return Math.max(MIN_INTERVAL_MS, Math.round(intervalSec * 1000));
}
