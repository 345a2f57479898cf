import { describe, expect, test } from "bun:test";
import {
  dueHeartbeatState,
  heartbeatPhaseAt,
  heartbeatPlanOf,
  nextHeartbeatTransition,
  nextScheduledTime,
  pingExpectedBy,
  scheduleProblem,
  type HeartbeatPlan,
} from "../../src/domain/heartbeat-rules.ts";

const T0 = Date.parse("2026-01-10T12:00:00.000Z");
const fixed = (periodSec: number, graceSec: number): HeartbeatPlan => ({ periodSec, graceSec, schedule: null, timezone: "UTC" });
const cron = (schedule: string, graceSec: number, timezone = "UTC"): HeartbeatPlan => ({ periodSec: 60, graceSec, schedule, timezone });

describe("heartbeatPlanOf", () => {
  test.each([
    ["null period means interval_sec, null grace means 0", { interval_sec: 300, heartbeat_period_sec: null, heartbeat_grace_sec: null, heartbeat_schedule: null, heartbeat_timezone: null }, { periodSec: 300, graceSec: 0, schedule: null, timezone: "UTC" }],
    ["explicit values win", { interval_sec: 300, heartbeat_period_sec: 60, heartbeat_grace_sec: 10, heartbeat_schedule: " 0 3 * * * ", heartbeat_timezone: "Europe/Berlin" }, { periodSec: 60, graceSec: 10, schedule: "0 3 * * *", timezone: "Europe/Berlin" }],
    ["blank schedule is no schedule", { interval_sec: 30, heartbeat_period_sec: 5, heartbeat_grace_sec: 0, heartbeat_schedule: "  ", heartbeat_timezone: "" }, { periodSec: 5, graceSec: 0, schedule: null, timezone: "UTC" }],
  ])("%s", (_name, fields, plan) => {
    expect(heartbeatPlanOf(fields)).toEqual(plan);
  });
});

describe("heartbeatPhaseAt (fixed period)", () => {
  // period 60 s, grace 30 s: up until +60 s, degraded until +90 s, then down
  test.each([
    ["just after the ping", 0, "up"],
    ["1 ms before the period ends", 59_999, "up"],
    ["at the end of the period", 60_000, "degraded"],
    ["inside grace", 75_000, "degraded"],
    ["at the end of grace", 90_000, "down"],
    ["long after", 86_400_000, "down"],
  ])("%s", (_name, offset, phase) => {
    expect(heartbeatPhaseAt(T0, fixed(60, 30), T0 + (offset as number)) as string).toBe(phase as string);
  });

  test("no grace: up straight to down when the period ends", () => {
    expect(heartbeatPhaseAt(T0, fixed(60, 0), T0 + 59_999)).toBe("up");
    expect(heartbeatPhaseAt(T0, fixed(60, 0), T0 + 60_000)).toBe("down");
  });
});

describe("nextHeartbeatTransition: the transition table", () => {
  test.each([
    ["unknown (no ping yet) has no deadline", "unknown", null, fixed(60, 30), null],
    ["up with grace: degraded when the period ends", "up", T0, fixed(60, 30), { at: T0 + 60_000, to: "degraded" }],
    ["up without grace: down when period and grace end together", "up", T0, fixed(60, 0), { at: T0 + 60_000, to: "down" }],
    ["degraded: down when grace ends", "degraded", T0, fixed(60, 30), { at: T0 + 90_000, to: "down" }],
    ["down waits for a ping", "down", T0, fixed(60, 30), null],
    ["cron: degraded at the next scheduled time", "up", T0, cron("0 3 * * *", 600), { at: Date.parse("2026-01-11T03:00:00Z"), to: "degraded" }],
    ["cron: down at the scheduled time plus grace", "degraded", T0, cron("0 3 * * *", 600), { at: Date.parse("2026-01-11T03:10:00Z"), to: "down" }],
    ["cron without grace: down at the scheduled time", "up", T0, cron("*/15 * * * *", 0), { at: Date.parse("2026-01-10T12:15:00Z"), to: "down" }],
    ["cron that never fires again: no deadline", "up", T0, cron("0 0 1 1 * 2020", 0), null],
  ])("%s", (_name, state, lastPing, plan, expected) => {
    expect(nextHeartbeatTransition(state as string, lastPing as number | null, plan as HeartbeatPlan)).toEqual(expected as never);
  });
});

describe("dueHeartbeatState: timers only move forward", () => {
  test.each([
    ["up, period not over: nothing", "up", 30_000, null],
    ["up, period over, grace remains: degraded", "up", 60_000, "degraded"],
    ["up, period and grace over (e.g. after a restart): down", "up", 95_000, "down"],
    ["degraded, grace remains: nothing", "degraded", 70_000, null],
    ["degraded, grace over: down", "degraded", 90_000, "down"],
    ["down: nothing", "down", 200_000, null],
    ["degraded but the plan was widened: never back to up", "degraded", 10_000, null],
    ["unknown: nothing", "unknown", 200_000, null],
  ])("%s", (_name, current, offset, due) => {
    expect(dueHeartbeatState(current as string, T0, fixed(60, 30), T0 + (offset as number))).toBe(due as never);
  });

  test("no last ping: nothing is due", () => {
    expect(dueHeartbeatState("up", null, fixed(60, 30), T0 + 1e9)).toBeNull();
  });
});

describe("cron schedules", () => {
  test.each([
    ["every 5 minutes, UTC", "*/5 * * * *", "UTC", "2026-01-10T12:03:10Z", "2026-01-10T12:05:00Z"],
    ["a ping exactly on the schedule expects the next one", "*/5 * * * *", "UTC", "2026-01-10T12:05:00Z", "2026-01-10T12:10:00Z"],
    ["daily 03:00 Berlin in winter is 02:00 UTC", "0 3 * * *", "Europe/Berlin", "2026-01-10T12:00:00Z", "2026-01-11T02:00:00Z"],
    ["daily 03:00 Berlin in summer is 01:00 UTC", "0 3 * * *", "Europe/Berlin", "2026-07-10T12:00:00Z", "2026-07-11T01:00:00Z"],
    ["weekdays 09:30 New York, from a Friday evening", "30 9 * * 1-5", "America/New_York", "2026-01-09T23:00:00Z", "2026-01-12T14:30:00Z"],
    ["six fields: every second", "* * * * * *", "UTC", "2026-01-10T12:00:00.400Z", "2026-01-10T12:00:01Z"],
  ])("%s", (_name, expr, tz, after, next) => {
    expect(nextScheduledTime(expr, tz, Date.parse(after))).toBe(Date.parse(next));
    expect(pingExpectedBy(Date.parse(after), cron(expr, 0, tz))).toBe(Date.parse(next));
  });

  test("parsed schedules are reused per expression and zone: asked in turn, each zone keeps its own answer", () => {
    const after = Date.parse("2026-01-10T12:00:00Z");
    for (let i = 0; i < 3; i++) {
      expect(nextScheduledTime("0 3 * * *", "Europe/Berlin", after)).toBe(Date.parse("2026-01-11T02:00:00Z"));
      expect(nextScheduledTime("0 3 * * *", "America/New_York", after)).toBe(Date.parse("2026-01-11T08:00:00Z"));
      expect(nextScheduledTime("not a schedule", "UTC", after)).toBeNull();
    }
    // past the cache's bound the answers stay right
    for (let m = 0; m < 200; m++) expect(nextScheduledTime(`${m % 60} 5 * * *`, "UTC", after)).toBe(Date.parse(`2026-01-11T05:${String(m % 60).padStart(2, "0")}:00Z`));
  });

  test("phase with a schedule: up until the scheduled time, degraded for the grace, then down", () => {
    const plan = cron("0 * * * *", 300);
    const ping = Date.parse("2026-01-10T12:00:05Z");
    expect(heartbeatPhaseAt(ping, plan, Date.parse("2026-01-10T12:59:59Z"))).toBe("up");
    expect(heartbeatPhaseAt(ping, plan, Date.parse("2026-01-10T13:00:00Z"))).toBe("degraded");
    expect(heartbeatPhaseAt(ping, plan, Date.parse("2026-01-10T13:05:00Z"))).toBe("down");
  });

  test.each([
    ["valid", "0 3 * * *", "UTC", null],
    ["six fields", "*/10 * * * * *", "Europe/Berlin", null],
    ["garbage", "every day", "UTC", "heartbeat_schedule"],
    ["out of range", "61 * * * *", "UTC", "heartbeat_schedule"],
    ["unknown zone", "0 3 * * *", "Mars/Olympus", "heartbeat_timezone"],
    ["never again", "0 0 1 1 * 2020", "UTC", "heartbeat_schedule"],
  ])("scheduleProblem: %s", (_name, expr, tz, attribute) => {
    const p = scheduleProblem(expr, tz);
    expect((p?.attribute ?? null) as string | null).toBe(attribute as string | null);
    if (p) expect(p.message.length).toBeGreaterThan(5);
  });
});
