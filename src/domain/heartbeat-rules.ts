/**
 * When a heartbeat monitor is late and when it is down (docs/heartbeats.md "Transitions and
 * deadlines"), as pure functions of the last accepted ping, the monitor's plan and a time. The
 * heartbeat service keeps one timer on the earliest `nextHeartbeatTransition` of all monitors;
 * nothing polls.
 *
 * A plan is either a fixed period (the next ping is expected `periodSec` after the last) or a cron
 * schedule (the next ping is expected at the first scheduled time after the last). Either way the
 * monitor turns degraded when that moment passes and down `graceSec` later; with no grace it goes
 * straight from up to down.
 */
import type { Cron } from "croner";
import { cronCalculator, cronError, parseCron } from "./cron-schedule.ts";

export interface HeartbeatPlan {
  periodSec: number;
  graceSec: number;
  /** cron expression (5 or 6 fields; croner syntax), or null for the fixed period */
  schedule: string | null;
  /** IANA zone the schedule is read in */
  timezone: string;
}

export type HeartbeatPhase = "up" | "degraded" | "down";

export interface HeartbeatTransition {
  at: number;
  to: "degraded" | "down";
}

export const DEFAULT_HEARTBEAT_TIMEZONE = "UTC";

/**
 * Fields of a monitor row the plan is made from (docs/heartbeats.md "Heartbeat attributes": null
 * period = interval_sec, null grace = 0).
 */
export interface HeartbeatPlanFields {
  interval_sec: number;
  heartbeat_period_sec: number | null;
  heartbeat_grace_sec: number | null;
  heartbeat_schedule: string | null;
  heartbeat_timezone: string | null;
}

export function heartbeatPlanOf(m: HeartbeatPlanFields): HeartbeatPlan {
  return {
    periodSec: m.heartbeat_period_sec ?? m.interval_sec,
    graceSec: m.heartbeat_grace_sec ?? 0,
    schedule: m.heartbeat_schedule && m.heartbeat_schedule.trim() !== "" ? m.heartbeat_schedule.trim() : null,
    timezone: m.heartbeat_timezone || DEFAULT_HEARTBEAT_TIMEZONE,
  };
}

/**
 * The first scheduled time strictly after `after`, or null when the schedule never fires again (or
 * cannot be read).
 *
 * @example nextScheduledTime("0 3 * * *", "Europe/Berlin", Date.parse("2026-01-10T12:00:00Z")) // 2026-01-11T02:00:00Z
 */
export function nextScheduledTime(expr: string, timezone: string, after: number): number | null {
  try {
    const next = cronCalculator(expr, timezone, "auto")?.nextRun(new Date(after));
    return next ? next.getTime() : null;
  } catch {
    return null;
  }
}

/** Why a schedule/timezone pair is unusable, or null when it is fine. For 422 messages. */
export function scheduleProblem(expr: string, timezone: string = DEFAULT_HEARTBEAT_TIMEZONE): { attribute: "heartbeat_schedule" | "heartbeat_timezone"; message: string } | null {
  if (!isValidTimezone(timezone)) return { attribute: "heartbeat_timezone", message: `'${timezone}' is not an IANA time zone name (for example Europe/Berlin or UTC)` };
  let cron: Cron;
  try {
    cron = parseCron(expr, timezone, "auto");
  } catch (err) {
    return { attribute: "heartbeat_schedule", message: `is not a valid cron expression (${cronError(err)}); e.g. "*/5 * * * *" or "0 3 * * 1-5"` };
  }
  if (!cron.nextRun()) return { attribute: "heartbeat_schedule", message: "never fires again" };
  return null;
}

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** When the next ping is due after one at `lastPingAt`: the end of the period. null = never late. */
export function pingExpectedBy(lastPingAt: number, plan: HeartbeatPlan): number | null {
  if (plan.schedule) return nextScheduledTime(plan.schedule, plan.timezone, lastPingAt);
  return lastPingAt + plan.periodSec * 1000;
}

/** The state the rules give at time `t` when the last accepted ping was at `lastPingAt`. */
export function heartbeatPhaseAt(lastPingAt: number, plan: HeartbeatPlan, t: number): HeartbeatPhase {
  const expected = pingExpectedBy(lastPingAt, plan);
  if (expected === null || t < expected) return "up";
  if (t < expected + plan.graceSec * 1000) return "degraded";
  return "down";
}

/**
 * The next transition due for a monitor now in `state`, or null when none is: before the first ping
 * (unknown waits for a ping, it never turns down by itself), once down (only a ping leaves it), and
 * when the schedule never fires again.
 */
export function nextHeartbeatTransition(state: string, lastPingAt: number | null, plan: HeartbeatPlan): HeartbeatTransition | null {
  if (lastPingAt === null) return null;
  const expected = pingExpectedBy(lastPingAt, plan);
  if (expected === null) return null;
  const downAt = expected + plan.graceSec * 1000;
  if (state === "up") return plan.graceSec > 0 ? { at: expected, to: "degraded" } : { at: downAt, to: "down" };
  if (state === "degraded") return { at: downAt, to: "down" };
  return null;
}

const RANK: Record<string, number> = { up: 0, degraded: 1, down: 2 };

/**
 * The transition a deadline should apply: only forward (up → degraded → down). A timer never moves a
 * monitor back towards up; only a valid ping does.
 */
export function dueHeartbeatState(current: string, lastPingAt: number | null, plan: HeartbeatPlan, now: number): "degraded" | "down" | null {
  if (lastPingAt === null || !(current in RANK)) return null;
  const phase = heartbeatPhaseAt(lastPingAt, plan, now);
  if (phase === "up" || RANK[phase]! <= RANK[current]!) return null;
  return phase;
}
