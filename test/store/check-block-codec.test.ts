import { expect, test } from "bun:test";
import fc from "fast-check";
import { byTimeThenId, decodeChecks, encodeChecks, type PackedCheck } from "../../src/store/check-block-codec.ts";

const text = fc.option(fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("up", "down", "local", "eu-west", "connection_refused", "Ωmega ✓ 漢字", "")), { nil: null });
const int = fc.option(fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.constantFrom(200, 503, 1_900_000_000_000, Number.MAX_SAFE_INTEGER)), { nil: null });

const check = (monitorId: number) =>
  fc.record({
    id: fc.integer({ min: 1, max: 2 ** 40 }),
    monitor_id: fc.constant(monitorId),
    region: fc.constantFrom("local", "eu", "us-east"),
    status: fc.constantFrom("up", "down", "degraded"),
    checked_at: fc.integer({ min: 0, max: 2 ** 45 }),
    latency_ms: fc.option(fc.integer({ min: -5, max: 120_000 }), { nil: null }),
    http_code: int,
    error_code: text,
    error_message: text,
    degraded_reason: text,
    resolved_ip: text,
    ssl_not_after: int,
    dns_answer: text,
    synthetic_trace_json: text,
  }) satisfies fc.Arbitrary<PackedCheck>;

test("a block gives back exactly the checks packed into it, in time then id order (fast-check)", () => {
  let runs = 0;
  fc.assert(
    fc.property(fc.uniqueArray(check(7), { selector: (c) => c.id, maxLength: 300 }), (checks) => {
      runs++;
      const back = decodeChecks(7, encodeChecks(checks));
      expect(back).toEqual([...checks].sort(byTimeThenId));
    }),
    { numRuns: 300 },
  );
  console.log(`check-block codec: ${runs} random blocks round-tripped`);
});

test("a day of steady checks packs to a few bytes each (ids, times and latencies vary, the rest repeats)", () => {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const checks: PackedCheck[] = [];
  let id = 1_000_000;
  for (let i = 0; i < 1440; i++) {
    id += 10_000 + Math.floor(rand() * 60) - 30;
    checks.push({
      id, monitor_id: 1, region: "local", status: i % 200 === 0 ? "down" : "up", checked_at: 1_795_000_000_000 + i * 60_000 + Math.floor(rand() * 5),
      latency_ms: 40 + Math.floor(rand() * 30), http_code: i % 200 === 0 ? null : 200, error_code: i % 200 === 0 ? "connection_refused" : null,
      error_message: i % 200 === 0 ? "connect ECONNREFUSED 127.0.0.1:80" : null, degraded_reason: null, resolved_ip: "127.0.0.1", ssl_not_after: null, dns_answer: null, synthetic_trace_json: null,
    });
  }
  const block = encodeChecks(checks);
  expect(decodeChecks(1, block)).toEqual(checks);
  // a row of the checks table costs ~63 bytes with its index
  expect(block.length / checks.length).toBeLessThan(6);
});

test("a damaged block is refused with an error, not read as other checks", () => {
  const block = encodeChecks([{ id: 1, monitor_id: 1, region: "local", status: "up", checked_at: 5, latency_ms: 3, http_code: 200, error_code: null, error_message: null, degraded_reason: null, resolved_ip: null, ssl_not_after: null, dns_answer: null, synthetic_trace_json: null }]);
  expect(() => decodeChecks(1, block.subarray(0, block.length - 2))).toThrow();
  expect(() => decodeChecks(1, new Uint8Array([9, 1, 2]))).toThrow(/unknown format/);
  expect(() => decodeChecks(1, new Uint8Array())).toThrow(/empty/);
});
