import { describe, expect, test } from "bun:test";
import { certExpiryVerdict, latencyReason } from "../../src/domain/cert-expiry.ts";
import { emptyResult, failed, type CheckResult } from "../../src/domain/check-result.ts";
import { setAsideLatencyVerdict } from "../../src/domain/latency-verdict.ts";

const NOW = 1_800_000_000_000;
const WHY = "measured while this Vigil instance was saturated (this check started 1.6 s late)";
const soonExpiry = certExpiryVerdict(NOW + 3 * 86_400_000, NOW, 14);
const expiring = soonExpiry.kind === "expiring" ? soonExpiry.reason : "";
const slow = latencyReason(250, 200)!;

const result = (over: Partial<CheckResult>): CheckResult => ({ ...emptyResult(NOW), latency_ms: 250, ...over });

interface Case {
  name: string;
  in: CheckResult;
  maxMs: number | null;
  want: Partial<CheckResult> | "unchanged";
}

const cases: Case[] = [
  {
    name: "degraded by latency alone: up, no degraded_reason, the note in error_message",
    in: result({ status: "degraded", degraded_reason: slow }),
    maxMs: 200,
    want: { status: "up", degraded_reason: null, error_message: `latency 250 ms above 200 ms not judged: ${WHY}`, latency_ms: 250 },
  },
  {
    name: "degraded by latency and certificate expiry: stays degraded for the certificate",
    in: result({ status: "degraded", degraded_reason: `${slow}; ${expiring}` }),
    maxMs: 200,
    want: { status: "degraded", degraded_reason: expiring, error_message: `latency 250 ms above 200 ms not judged: ${WHY}` },
  },
  { name: "degraded by the certificate only", in: result({ status: "degraded", degraded_reason: expiring }), maxMs: 200, want: "unchanged" },
  { name: "up", in: result({ status: "up" }), maxMs: 200, want: "unchanged" },
  { name: "down", in: failed(NOW, "http_error", "expected 200-299, got 503", { latency_ms: 250 }), maxMs: 200, want: "unchanged" },
  { name: "no api_max_latency_ms", in: result({ status: "degraded", degraded_reason: expiring }), maxMs: null, want: "unchanged" },
  { name: "latency within the limit", in: result({ status: "degraded", degraded_reason: expiring, latency_ms: 150 }), maxMs: 200, want: "unchanged" },
];

describe("setAsideLatencyVerdict", () => {
  test.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const out = setAsideLatencyVerdict(c.in, c.maxMs, WHY);
    if (c.want === "unchanged") expect(out).toBe(c.in);
    else expect(out).toEqual({ ...c.in, ...c.want });
  });
});
