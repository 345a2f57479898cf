import { describe, expect, test } from "bun:test";
import { parseDateParam, toIso } from "../../src/lib/dates.ts";

describe("parseDateParam (the date forms of docs/api-rules.md)", () => {
  test.each([
    ["2026-11-21", Date.UTC(2026, 10, 21)],
    ["2026-11-21T10:20Z", Date.UTC(2026, 10, 21, 10, 20)],
    ["2026-11-21T10:20:30Z", Date.UTC(2026, 10, 21, 10, 20, 30)],
    ["2026-11-21T10:20:30.123Z", Date.UTC(2026, 10, 21, 10, 20, 30, 123)],
    ["2026-11-21T10:20:30+02:00", Date.UTC(2026, 10, 21, 8, 20, 30)],
    ["2026-11-21T10:20:30-0130", Date.UTC(2026, 10, 21, 11, 50, 30)],
    ["1795250000", 1795250000 * 1000],
    ["0", 0],
  ])("%p → %p", (text, ms) => expect(parseDateParam(text)).toBe(ms));

  test.each(["", "yesterday", "2026-13-01", "2026-02-30", "2026-11-21T25:00Z", "2026-11-21T10:20", "21/11/2026", "2026-11-21T10:20:30+25:00", "1e9"])(
    "%p is refused",
    (text) => expect(parseDateParam(text)).toBeNull(),
  );

  test("toIso uses milliseconds and Z", () => {
    expect(toIso(Date.UTC(2026, 0, 2, 3, 4, 5, 6))).toBe("2026-01-02T03:04:05.006Z");
    expect(toIso(null)).toBeNull();
  });
});
