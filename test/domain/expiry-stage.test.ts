import { expect, test } from "bun:test";
import { daysLeft, daysLeftText, expiryReason, expiryStage, expiryWarnDays, nextExpiryMark, type ExpiryStage } from "../../src/domain/expiry-stage.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);

test("days left are whole days, as the checks count them", () => {
  const cases: [number, number][] = [[14 * DAY, 14], [13.8 * DAY, 13], [8 * DAY - 1, 7], [7 * DAY, 7], [2 * DAY - 1, 1], [DAY, 1], [DAY - 1, 0], [1, 0]];
  for (const [remaining, left] of cases) expect([remaining, daysLeft(NOW + remaining, NOW)]).toEqual([remaining, left]);
  expect([13, 1, 0].map(daysLeftText)).toEqual(["13 days left", "1 day left", "less than a day left"]);
});

test("stages: the warn window (remaining time ≤ warn days), then 7 whole days left, then 1; none once expired", () => {
  const cases: [number, number, ExpiryStage][] = [
    [30 * DAY, 14, 0],
    [14 * DAY + 1, 14, 0],
    [14 * DAY, 14, 1],
    [8 * DAY, 14, 1],
    [8 * DAY - 1, 14, 2],
    [7 * DAY, 14, 2],
    [2 * DAY, 14, 2],
    [2 * DAY - 1, 14, 3],
    [60_000, 14, 3],
    [0, 14, 0],
    [-DAY, 14, 0],
    // a window shorter than 7 days starts at its own length, at the 7-day stage
    [5 * DAY, 3, 0],
    [3 * DAY + 1, 3, 0],
    [3 * DAY, 3, 2],
    // a one-day window is the last stage at once
    [DAY, 1, 3],
    // a domain's 30-day window
    [29 * DAY, 30, 1],
  ];
  for (const [remaining, warn, stage] of cases) expect([remaining / DAY, warn, expiryStage(NOW + remaining, NOW, warn)]).toEqual([remaining / DAY, warn, stage]);
});

test("each stage of an expiry date alerts once; a later date starts afresh; an earlier one only for a stage not alerted yet", () => {
  const A = NOW + 10 * DAY, B = NOW + 40 * DAY;
  expect(nextExpiryMark({ notAfter: null, stage: 0 }, { notAfter: A, stage: 0 })).toBeNull();
  expect(nextExpiryMark({ notAfter: null, stage: 0 }, { notAfter: A, stage: 1 })).toEqual({ notAfter: A, stage: 1 });
  expect(nextExpiryMark({ notAfter: A, stage: 1 }, { notAfter: A, stage: 1 })).toBeNull();
  expect(nextExpiryMark({ notAfter: A, stage: 1 }, { notAfter: A, stage: 2 })).toEqual({ notAfter: A, stage: 2 });
  expect(nextExpiryMark({ notAfter: A, stage: 3 }, { notAfter: A, stage: 2 })).toBeNull();
  // renewed: outside the window nothing happens yet; inside it, its first stage alerts
  expect(nextExpiryMark({ notAfter: A, stage: 3 }, { notAfter: B, stage: 0 })).toBeNull();
  expect(nextExpiryMark({ notAfter: A, stage: 3 }, { notAfter: B, stage: 1 })).toEqual({ notAfter: B, stage: 1 });
  // the old certificate seen again after the renewal: quiet unless it is further along
  expect(nextExpiryMark({ notAfter: B, stage: 1 }, { notAfter: A, stage: 1 })).toBeNull();
  expect(nextExpiryMark({ notAfter: B, stage: 1 }, { notAfter: A, stage: 3 })).toEqual({ notAfter: B, stage: 3 });
});

test("warn days: the monitor's own, else 14 for a certificate and 30 for a domain registration", () => {
  expect(expiryWarnDays({ monitor_type: "ssl", ssl_expiry_warn_days: null })).toBe(14);
  expect(expiryWarnDays({ monitor_type: "http", ssl_expiry_warn_days: 21 })).toBe(21);
  expect(expiryWarnDays({ monitor_type: "smtp", ssl_expiry_warn_days: null })).toBe(14);
  expect(expiryWarnDays({ monitor_type: "domain", ssl_expiry_warn_days: null })).toBe(30);
  expect(expiryWarnDays({ monitor_type: "domain", ssl_expiry_warn_days: null, domain_expiry_warn_days: 60 })).toBe(60);
});

test("the reason names what expires, the date and the days left", () => {
  expect(expiryReason("certificate", NOW + 10 * DAY, NOW)).toBe("certificate expires on 2026-12-04 12:00 UTC (10 days left)");
  expect(expiryReason("domain", NOW + 1.5 * DAY, NOW)).toBe("domain registration expires on 2026-11-26 00:00 UTC (1 day left)");
  expect(expiryReason("certificate", NOW + 0.5 * DAY, NOW)).toBe("certificate expires on 2026-11-25 00:00 UTC (less than a day left)");
});
