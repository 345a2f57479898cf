/**
 * When a maintenance window is in effect (docs/maintenance-windows.md "When a window is active"), as
 * pure functions of its plan and a time. A one-off window has one span, [starts_at, ends_at). A
 * recurring one starts at each time its cron schedule fires, read in its time zone, and lasts
 * duration_sec; occurrences that overlap or touch make one span, so maintenance never "ends" for an
 * instant between two of them. croner is used only as a calculator.
 */
import type { Cron } from "croner";
import { cronCalculator, cronError, parseCron } from "./cron-schedule.ts";
import { isValidTimezone } from "./heartbeat-rules.ts";

export interface WindowPlan {
  /** one-off: epoch ms, or null for a recurring window */
  startsAt: number | null;
  endsAt: number | null;
  /** recurring: a 5-field cron expression, or null for a one-off window */
  schedule: string | null;
  durationSec: number | null;
  /** IANA zone the schedule is read in */
  timezone: string;
}

/** A stretch of maintenance: from `from` (inclusive) to `until` (exclusive), epoch ms. */
export interface Span {
  from: number;
  until: number;
}

export const MIN_DURATION_SEC = 60;
export const MAX_DURATION_SEC = 30 * 86_400;

/**
 * How many occurrences one span may chain together: a schedule that fires more often than its
 * duration is never off, and its span is cut after this many; the span after it starts where the
 * cut one ends, so the cut is invisible (README "Maintenance windows").
 */
const MAX_CHAINED = 200;

/** Why a schedule cannot be used, or null when it is fine: 5 fields croner parses, firing again. */
export function scheduleProblem(expr: string, timezone: string): string | null {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) return `must be a cron expression of 5 fields (minute hour day-of-month month day-of-week), e.g. "0 3 * * 0"; this one has ${fields.length}`;
  if (!isValidTimezone(timezone)) return null; // the time zone's own message says what is wrong
  let cron: Cron;
  try {
    cron = parseCron(expr, timezone, "5-part");
  } catch (err) {
    return `is not a valid cron expression (${cronError(err)}); e.g. "0 3 * * 0"`;
  }
  return cron.nextRun() ? null : "never fires again";
}

/** The first occurrence strictly after `t`, or null. */
function nextStart(cron: Cron, t: number): number | null {
  return cron.nextRun(new Date(t))?.getTime() ?? null;
}

/** The last occurrence at or before `t`, or null. */
function lastStartAtOrBefore(cron: Cron, t: number): number | null {
  return cron.previousRuns(1, new Date(t + 1))[0]?.getTime() ?? null;
}

/** The end of the span that an occurrence at `start` opens, through every occurrence it overlaps. */
function chainedEnd(cron: Cron, start: number, durationMs: number): number {
  let last = start;
  let end = start + durationMs;
  for (let i = 0; i < MAX_CHAINED; i++) {
    const later = lastStartAtOrBefore(cron, end);
    if (later === null || later <= last) break;
    last = later;
    end = later + durationMs;
  }
  return end;
}

/**
 * The span in effect at `t`, or else the next one; null when none is ahead (a one-off window that
 * is over, a schedule that never fires again).
 *
 * @example windowSpanAt({ startsAt: null, endsAt: null, schedule: "0 3 * * *", durationSec: 3600, timezone: "UTC" }, Date.parse("2026-01-10T03:30:00Z"))
 * // { from: 2026-01-10T03:00Z, until: 2026-01-10T04:00Z }
 */
export function windowSpanAt(plan: WindowPlan, t: number): Span | null {
  if (plan.schedule === null) {
    if (plan.startsAt === null || plan.endsAt === null || plan.endsAt <= t) return null;
    return { from: plan.startsAt, until: plan.endsAt };
  }
  const cron = cronCalculator(plan.schedule, plan.timezone, "5-part");
  if (!cron || plan.durationSec === null) return null;
  const durationMs = plan.durationSec * 1000;
  const last = lastStartAtOrBefore(cron, t);
  if (last !== null) {
    const until = chainedEnd(cron, last, durationMs);
    if (until > t) return { from: earliestChainedStart(cron, last, durationMs), until };
  }
  const next = nextStart(cron, t);
  return next === null ? null : { from: next, until: chainedEnd(cron, next, durationMs) };
}

/** Where the span holding an occurrence at `start` began: back through the occurrences it overlaps. */
function earliestChainedStart(cron: Cron, start: number, durationMs: number): number {
  let first = start;
  for (let i = 0; i < MAX_CHAINED; i++) {
    const before = cron.previousRuns(1, new Date(first))[0]?.getTime();
    if (before === undefined || before + durationMs < first) break;
    first = before;
  }
  return first;
}

/** Whether `span` is in effect at `t`. */
export function spanHolds(span: { from: number | null; until: number | null }, t: number): boolean {
  return span.from !== null && span.until !== null && span.from <= t && t < span.until;
}
