import { expect, test } from "bun:test";
import { humanDuration } from "../../src/notify/format.ts";

test("humanDuration keeps the two largest units", () => {
  const cases: [number, string][] = [[0, "0 s"], [45_000, "45 s"], [125_000, "2 min 5 s"], [3_600_000, "1 h"], [3_725_000, "1 h 2 min"], [90_061_000, "1 d 1 h"]];
  for (const [ms, text] of cases) expect(humanDuration(ms)).toBe(text);
});
