import { describe, expect, test } from "bun:test";
import { LatenessHistogram } from "../../src/scheduler/lateness.ts";
import { MinHeap, type HeapItem } from "../../src/lib/min-heap.ts";
import { joinPhase, nextRegularRun, phaseOffset, recheckDelay, slotAtOrAfter } from "../../src/scheduler/timing.ts";

describe("timing", () => {
  test("phase offsets of consecutive ids spread over the interval", () => {
    const interval = 60_000;
    const offsets = Array.from({ length: 1000 }, (_, i) => phaseOffset(i + 1, interval));
    expect(offsets.every((o) => o >= 0 && o < interval)).toBe(true);
    // every tenth of the interval gets between 5% and 15% of the monitors
    const deciles = new Array(10).fill(0);
    for (const o of offsets) deciles[Math.floor(o / (interval / 10))]++;
    for (const n of deciles) {
      expect(n).toBeGreaterThan(50);
      expect(n).toBeLessThan(150);
    }
    expect(phaseOffset(42, interval)).toBe(phaseOffset(42, interval));
  });

  test("slots keep the phase", () => {
    expect(slotAtOrAfter(125_000, 60_000, 7_000)).toBe(127_000);
    expect(slotAtOrAfter(127_000, 60_000, 7_000)).toBe(127_000);
    expect(slotAtOrAfter(127_001, 60_000, 7_000)).toBe(187_000);
  });

  test("the regular next run keeps the cadence, and skips missed slots instead of bunching", () => {
    expect(nextRegularRun(120_000, 120_050, 60_000, 0)).toBe(180_000);
    expect(nextRegularRun(120_000, 400_000, 60_000, 0)).toBe(420_000);
  });

  test("after an off-phase run the next one is 0.5 to 1.5 intervals away, on the phase", () => {
    for (const off of [0, 1, 29_999, 30_000, 59_999]) {
      const next = joinPhase(1_000_000, 60_000, off);
      expect(next - 1_000_000).toBeGreaterThanOrEqual(30_000);
      expect(next - 1_000_000).toBeLessThanOrEqual(90_000);
      expect(next % 60_000).toBe(off);
    }
  });

  test("re-check after a first failure within min(interval, 10 s)", () => {
    expect(recheckDelay(60_000)).toBe(10_000);
    expect(recheckDelay(5_000)).toBe(5_000);
    expect(recheckDelay(60_000, 200)).toBe(200);
  });
});

describe("MinHeap", () => {
  test("pops in key order under pushes, updates and removals", () => {
    const heap = new MinHeap<HeapItem & { name: number }>();
    const items = Array.from({ length: 200 }, (_, i) => ({ key: (i * 7919) % 1000, heapIndex: -1, name: i }));
    for (const it of items) heap.push(it);
    for (let i = 0; i < items.length; i += 3) heap.update(items[i]!, (i * 31) % 997);
    for (let i = 1; i < items.length; i += 5) heap.remove(items[i]!);
    const out: number[] = [];
    for (let it = heap.pop(); it; it = heap.pop()) out.push(it.key);
    expect(out.length).toBe(200 - 40);
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(items.every((it) => it.heapIndex === -1)).toBe(true);
  });
});

describe("LatenessHistogram", () => {
  test("percentiles are bucket bounds, max is exact, skips are counted", () => {
    const h = new LatenessHistogram();
    for (let i = 0; i < 98; i++) h.observe(3);
    h.observe(700);
    h.observe(4200);
    h.skip();
    const s = h.summary();
    expect(s).toMatchObject({ runs: 100, skipped: 1, p50_ms: 5, p99_ms: 1000, max_ms: 4200 });
    expect(s.buckets.at(-1)).toEqual({ le: Infinity, count: 100 });
  });
});
