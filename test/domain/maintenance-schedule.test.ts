import { describe, expect, test } from "bun:test";
import { scheduleProblem, windowSpanAt, type WindowPlan } from "../../src/domain/maintenance-schedule.ts";
import { parseZonedTime, wallClockMinute } from "../../src/domain/zoned-time.ts";

// docs/maintenance-windows.md "When a window is active": spans as pure functions of a plan and a time.
const T = (iso: string) => Date.parse(iso);
const span = (plan: WindowPlan, at: string) => {
  const s = windowSpanAt(plan, T(at));
  return s && { from: new Date(s.from).toISOString(), until: new Date(s.until).toISOString() };
};
const recurring = (schedule: string, durationSec: number, timezone = "UTC"): WindowPlan => ({ startsAt: null, endsAt: null, schedule, durationSec, timezone });

describe("recurring windows", () => {
  test.each([
    // [schedule, duration, zone, at, from, until]
    ["0 3 * * *", 3600, "UTC", "2026-01-10T02:59:59.999Z", "2026-01-10T03:00:00.000Z", "2026-01-10T04:00:00.000Z"],
    ["0 3 * * *", 3600, "UTC", "2026-01-10T03:00:00.000Z", "2026-01-10T03:00:00.000Z", "2026-01-10T04:00:00.000Z"],
    ["0 3 * * *", 3600, "UTC", "2026-01-10T03:59:59.999Z", "2026-01-10T03:00:00.000Z", "2026-01-10T04:00:00.000Z"],
    // the end is not in the span: the next occurrence is
    ["0 3 * * *", 3600, "UTC", "2026-01-10T04:00:00.000Z", "2026-01-11T03:00:00.000Z", "2026-01-11T04:00:00.000Z"],
    // Sundays 03:00 in Berlin: 02:00Z in winter, 01:00Z in summer
    ["0 3 * * 0", 7200, "Europe/Berlin", "2026-01-07T12:00:00.000Z", "2026-01-11T02:00:00.000Z", "2026-01-11T04:00:00.000Z"],
    ["0 3 * * 0", 7200, "Europe/Berlin", "2026-07-01T12:00:00.000Z", "2026-07-05T01:00:00.000Z", "2026-07-05T03:00:00.000Z"],
    // an occurrence that began yesterday and lasts into today
    ["0 22 * * *", 6 * 3600, "UTC", "2026-01-10T02:00:00.000Z", "2026-01-09T22:00:00.000Z", "2026-01-10T04:00:00.000Z"],
  ] as const)("%s for %i s in %s, at %s: %s to %s", (schedule, duration, zone, at, from, until) => {
    expect(span(recurring(schedule, duration, zone), at)).toEqual({ from, until });
  });

  test("occurrences that overlap or touch are one span: maintenance never ends between them", () => {
    // every 30 minutes for 45 minutes, only between 01:00 and 02:59: one span 01:00 to 03:15
    expect(span(recurring("0,30 1-2 * * *", 45 * 60), "2026-01-10T01:40:00Z")).toEqual({ from: "2026-01-10T01:00:00.000Z", until: "2026-01-10T03:15:00.000Z" });
    // hourly for an hour, 09:00 to 11:00 on weekdays: touching occurrences, one span
    expect(span(recurring("0 9-10 * * 1-5", 3600), "2026-01-09T08:00:00Z")).toEqual({ from: "2026-01-09T09:00:00.000Z", until: "2026-01-09T11:00:00.000Z" });
  });

  test("a schedule that never stops is cut into long spans, each starting where the last ended", () => {
    const plan = recurring("*/5 * * * *", 600);
    const first = windowSpanAt(plan, T("2026-01-10T00:02:00Z"))!;
    expect(first.until - first.from).toBeGreaterThan(3600_000);
    const second = windowSpanAt(plan, first.until)!;
    expect(second.from).toBeLessThanOrEqual(first.until);
    expect(second.until).toBeGreaterThan(first.until);
  });

  test("a schedule that never fires again has no span", () => {
    expect(windowSpanAt(recurring("0 0 30 2 *", 600), Date.now())).toBeNull();
  });

  test("only 5 fields are a schedule", () => {
    expect(scheduleProblem("0 3 * * 0", "UTC")).toBeNull();
    expect(scheduleProblem("*/10 * * * * *", "UTC")).toContain("5 fields");
    expect(scheduleProblem("0 3 * *", "UTC")).toContain("5 fields");
    expect(scheduleProblem("61 * * * *", "UTC")).toStartWith("is not a valid cron expression");
    expect(scheduleProblem("0 0 30 2 *", "UTC")).toBe("never fires again");
  });
});

describe("one-off windows", () => {
  const plan: WindowPlan = { startsAt: T("2026-01-10T02:00:00Z"), endsAt: T("2026-01-10T03:00:00Z"), schedule: null, durationSec: null, timezone: "UTC" };
  test("the span until it ends, then none", () => {
    expect(span(plan, "2026-01-01T00:00:00Z")).toEqual({ from: "2026-01-10T02:00:00.000Z", until: "2026-01-10T03:00:00.000Z" });
    expect(span(plan, "2026-01-10T02:59:59.999Z")).toEqual({ from: "2026-01-10T02:00:00.000Z", until: "2026-01-10T03:00:00.000Z" });
    expect(span(plan, "2026-01-10T03:00:00Z")).toBeNull();
  });
});

describe("wall-clock times in a zone", () => {
  test.each([
    ["2026-12-01T02:00", "Europe/Berlin", "2026-12-01T01:00:00.000Z"],
    ["2026-07-01T02:00:30.250", "Europe/Berlin", "2026-07-01T00:00:30.250Z"],
    ["2026-07-01 02:00", "America/New_York", "2026-07-01T06:00:00.000Z"],
    // skipped by the change to summer time: moved forward by the gap
    ["2026-03-29T02:30", "Europe/Berlin", "2026-03-29T01:30:00.000Z"],
    // there twice when summer time ends: the first
    ["2026-10-25T02:30", "Europe/Berlin", "2026-10-25T00:30:00.000Z"],
    // with an offset: an instant, whatever the zone
    ["2026-07-01T02:00:00Z", "Asia/Tokyo", "2026-07-01T02:00:00.000Z"],
    ["2026-07-01T02:00+05:30", "UTC", "2026-06-30T20:30:00.000Z"],
  ])("%s in %s is %s", (text, zone, iso) => {
    expect(new Date(parseZonedTime(text, zone)!).toISOString()).toBe(iso);
  });

  test.each(["2026-07-01", "tomorrow", "2026-02-30T10:00", "2026-07-01T24:00", "2026-07-01T10:00+25:00", "1767225600"])("%s is not one", (text) => {
    expect(parseZonedTime(text, "UTC")).toBeNull();
  });

  test("a stored time reads back as the zone's wall clock", () => {
    expect(wallClockMinute(T("2026-12-01T01:00:00Z"), "Europe/Berlin")).toBe("2026-12-01T02:00");
    expect(wallClockMinute(T("2026-07-01T06:00:00Z"), "America/New_York")).toBe("2026-07-01T02:00");
  });
});
