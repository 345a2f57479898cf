import { expect, test } from "bun:test";
import { alertSummary, humanDuration } from "../../src/notify/format.ts";
import { DOWN } from "./channels/fixtures.ts";

test("humanDuration keeps the two largest units", () => {
  const cases: [number, string][] = [[0, "0 s"], [45_000, "45 s"], [125_000, "2 min 5 s"], [3_600_000, "1 h"], [3_725_000, "1 h 2 min"], [90_061_000, "1 d 1 h"]];
  for (const [ms, text] of cases) expect(humanDuration(ms)).toBe(text);
});

test("a recovery from down into degraded says the outage is over and how long it lasted", () => {
  const p = { ...DOWN, event: "monitor.degraded" as const, state: "degraded", previous_state: "down", incident: { id: "9", started_at: "2026-11-24T10:00:00.000Z", resolved_at: "2026-11-24T10:05:00.000Z", duration_ms: 300_000 } };
  expect(alertSummary(p)).toBe("Checkout API is no longer down but still degraded, after 5 min of downtime.");
});
