import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { rmSync } from "node:fs";
import { startInstance, type Instance } from "../../src/cli/serve.ts";
import { emptyResult } from "../../src/domain/check-result.ts";
import { MAX_TRACE_BYTES } from "../../src/domain/trace-bounds.ts";
import { boundResult, ResultItemSchema, toResultItem } from "../../src/peers/protocol.ts";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { engineArgs } from "../helpers/engine.ts";
import { makeAccount, startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { remainingInSpool } from "./cluster.ts";
import { batch, makePeer, peerCall, resultItem } from "./helpers.ts";

/**
 * What a peer may do, against a real in-process leader with the test acting as the probe (and, for
 * the quota, a real probe): a peer token serves the accounts it was created for, results must be
 * of a monitor's lifetime and within the leader's retention, traces are cut to a size, and a peer
 * has a quota of results per minute that its probe honours without losing any.
 */
let s: TestServer;
let a: { accountId: number; token: string };
let b: { accountId: number; token: string };
let peerA: { id: number; token: string };
let peerAll: { id: number; token: string };

beforeAll(async () => {
  s = await startTestServer();
  a = await makeAccount(s.ctx, "alpha");
  b = await makeAccount(s.ctx, "bravo");
  peerA = await makePeer(s.ctx, "eu", [a.accountId]);
  peerAll = await makePeer(s.ctx, "eu", "all");
});
afterAll(() => s.stop());

const ids = (feed: { monitors: { id: number }[] }) => feed.monitors.map((m) => m.id);
// regions ["eu"]: the leader (region "local") checks none of these itself
const euMonitor = (name: string, token: string, over: Record<string, unknown> = {}) =>
  createMonitor(s, httpAttrs({ name, is_paused: false, interval_sec: 3600, regions: ["eu"], ...over }), token);
const checksOf = async (id: number, token: string) => (await s.api("GET", `/api/v1/monitors/${id}/checks`, undefined, { token })).json;

describe("a peer serves the accounts it was created for", () => {
  let mA: number, mB: number;
  let cursor: string;

  beforeAll(async () => {
    mA = await euMonitor("alpha web", a.token);
    mB = await euMonitor("bravo web", b.token, { api_auth_type: "bearer", api_auth_bearer_token: "bravo-secret-0b1c" });
  });

  test("the feed sends a peer only its accounts' monitors (an all-accounts peer gets both)", async () => {
    const feed = (await peerCall(s.url, peerA.token, "GET", "/monitors")).json.data;
    expect(ids(feed)).toContain(mA);
    expect(ids(feed)).not.toContain(mB);
    expect(JSON.stringify(feed)).not.toContain("bravo-secret-0b1c");
    cursor = feed.cursor;
    const all = (await peerCall(s.url, peerAll.token, "GET", "/monitors")).json.data;
    expect(ids(all)).toEqual(expect.arrayContaining([mA, mB]));
  });

  test("changes to another account's monitors are not mentioned, not even as removals", async () => {
    await s.api("PATCH", `/api/v1/monitors/${mB}`, { timeout_ms: 4000 }, { token: b.token });
    const other = await euMonitor("bravo api", b.token);
    await s.api("DELETE", `/api/v1/monitors/${other}`, undefined, { token: b.token });
    await s.api("PATCH", `/api/v1/monitors/${mA}`, { timeout_ms: 4000 }, { token: a.token });
    const feed = (await peerCall(s.url, peerA.token, "GET", `/monitors?cursor=${cursor}`)).json.data;
    expect(feed.full).toBe(false);
    expect(ids(feed)).toEqual([mA]);
    expect(feed.removed).toEqual([]);
  });

  test("a result for another account's monitor is answered as for a monitor that does not exist, and changes nothing", async () => {
    const now = Date.now();
    const items = [resultItem(mB, "down", now - 3000), resultItem(mB, "down", now - 2000), resultItem(999_999, "down", now - 2000), resultItem(mA, "up", now - 1000)];
    const res = await peerCall(s.url, peerA.token, "POST", "/results", batch(items));
    expect(res.status).toBe(200);
    const acks = res.json.data.results.map((r: { outcome: string; reason?: string }) => [r.outcome, r.reason]);
    expect(acks).toEqual([["dropped", "deleted"], ["dropped", "deleted"], ["dropped", "deleted"], ["stored", undefined]]);
    expect((await checksOf(mB, b.token)).pagination.total).toBe(0);
    expect((await s.api("GET", `/api/v1/monitors/${mB}`, undefined, { token: b.token })).json.data.attributes.last_status).toBe("unknown");
    expect((await checksOf(mA, a.token)).pagination.total).toBe(1);
  });

  test("the all-accounts peer reports for both", async () => {
    const res = await peerCall(s.url, peerAll.token, "POST", "/results", batch([resultItem(mB, "up", Date.now() - 500)]));
    expect(res.json.data.results[0].outcome).toBe("stored");
  });
});

describe("which results a peer may report", () => {
  let m: number;
  let createdAt: number;
  beforeAll(async () => {
    m = await euMonitor("lifetime", a.token);
    createdAt = Date.parse((await s.api("GET", `/api/v1/monitors/${m}`, undefined, { token: a.token })).json.data.attributes.created_at);
  });

  test("a region-scoped monitor refuses another region's results: they cannot drive it down", async () => {
    const usOnly = await createMonitor(s, httpAttrs({ name: "us only", is_paused: false, interval_sec: 3600, regions: ["us"] }), a.token);
    const now = Date.now();
    const res = await peerCall(s.url, peerA.token, "POST", "/results", batch([1, 2, 3].map((i) => resultItem(usOnly, "down", now - 4000 + i * 1000))));
    expect(res.json.data.results.map((r: { outcome: string; reason: string }) => `${r.outcome} ${r.reason}`)).toEqual(Array(3).fill("dropped region_excluded"));
    expect((await checksOf(usOnly, a.token)).pagination.total).toBe(0);
    expect((await s.api("GET", `/api/v1/monitors/${usOnly}`, undefined, { token: a.token })).json.data.attributes.last_status).toBe("unknown");
  });

  test("checked_at 0, older than --retention-days, or more than 60 s before the monitor was created is rejected", async () => {
    const items = [
      resultItem(m, "down", 0),
      resultItem(m, "down", Date.now() - 31 * 86_400_000),
      resultItem(m, "down", createdAt - 120_000),
      // within the clock tolerance of the creation: a probe whose clock is a little behind
      resultItem(m, "up", createdAt - 30_000),
    ];
    const res = await peerCall(s.url, peerA.token, "POST", "/results", batch(items));
    const acks = res.json.data.results;
    expect(acks.map((r: { outcome: string }) => r.outcome)).toEqual(["rejected", "rejected", "rejected", "stored"]);
    expect(acks[0].reason).toBe("too_old: checked_at is older than the 30 days the leader keeps checks");
    expect(acks[1].reason).toBe(acks[0].reason);
    expect(acks[2].reason).toBe("too_old: checked_at is before the monitor was created");
    const checks = (await checksOf(m, a.token)).data;
    expect(checks.map((c: { attributes: { status: string } }) => c.attributes.status)).toEqual(["up"]);
  });

  test(`a synthetic trace over ${MAX_TRACE_BYTES} bytes keeps its steps with their bodies shortened, or else their outline; the check itself is kept`, async () => {
    const trace = {
      steps: [
        { name: "login", request: { method: "POST", url: "https://example.test/login", headers: {} }, status: 200, latency_ms: 12, assertions: [], error: null, body: "x".repeat(1_000_000) },
        { name: "profile", request: { method: "GET", url: "https://example.test/me", headers: {} }, status: 500, latency_ms: 7, assertions: [], error: "expected 200-299, got 500", body: "short" },
      ],
    };
    // no body to shorten: only the outline fits
    const headers = { steps: [{ ...trace.steps[1], request: { method: "GET", url: "https://example.test/me", headers: { "x-big": "h".repeat(300_000) } } }] };
    const big = resultItem(m, "down", Date.now() - 300, { synthetic_trace_json: trace, error_code: "synthetic_step_failed", error_message: 'step "profile" failed' });
    const outlined = resultItem(m, "down", Date.now() - 200, { synthetic_trace_json: headers, error_code: "synthetic_step_failed", error_message: 'step "profile" failed' });
    const small = resultItem(m, "up", Date.now() - 100, { synthetic_trace_json: { steps: [{ ...trace.steps[0], body: "ok" }] } });
    const res = await peerCall(s.url, peerA.token, "POST", "/results", batch([big, outlined, small]));
    expect(res.json.data.results.map((r: { outcome: string }) => r.outcome)).toEqual(["stored", "stored", "stored"]);
    const checks = (await checksOf(m, a.token)).data.map((c: { attributes: Record<string, any> }) => c.attributes);
    const at = (item: { checked_at: number }) => checks.find((c: { checked_at: string }) => c.checked_at === new Date(item.checked_at).toISOString());
    const cut = at(big);
    expect(cut.error_message).toBe('step "profile" failed');
    expect(cut.synthetic_trace_json).toMatchObject({ truncated: true, reason: "trace cut: over the 256 KiB one check may store, so the steps' response bodies are shortened to fit" });
    const [login, profile] = cut.synthetic_trace_json.steps;
    expect(login).toMatchObject({ name: "login", status: 200, body_truncated: true, request: trace.steps[0]!.request });
    expect(login.body).toMatch(/^x+$/);
    expect(login.body.length).toBeGreaterThan(MAX_TRACE_BYTES - 2048);
    // a body short enough for its share is kept whole and not marked
    expect(profile).toEqual(trace.steps[1]);
    expect(Buffer.byteLength(JSON.stringify(cut.synthetic_trace_json))).toBeLessThanOrEqual(MAX_TRACE_BYTES);

    const outline = at(outlined).synthetic_trace_json;
    expect(outline.truncated).toBe(true);
    expect(outline.reason).toStartWith("trace cut: over the 256 KiB one check may store (it was ");
    expect(outline.steps).toEqual([{ name: "profile", status: 500, latency_ms: 7, error: "expected 200-299, got 500" }]);
    // a trace within the limit is stored as sent
    expect(at(small).synthetic_trace_json).toEqual(small.synthetic_trace_json);
  });

  test("a probe cuts its own results to what the leader accepts, so none is refused for its size", () => {
    const long = {
      ...emptyResult(Date.now()),
      status: "down" as const,
      error_code: "dns_answer_mismatch" as const,
      error_message: "e".repeat(10_000),
      degraded_reason: "d".repeat(10_000),
      dns_answer: Array.from({ length: 300 }, (_, i) => `${i} ${"t".repeat(2000)}`),
      synthetic_trace_json: { steps: [{ name: "big", status: 200, body: "b".repeat(MAX_TRACE_BYTES) }] },
    };
    expect(Value.Check(ResultItemSchema, toResultItem("uid-too-long-1", 1, long))).toBe(false);
    const item = toResultItem("uid-too-long-1", 1, boundResult(long));
    expect(Value.Check(ResultItemSchema, item)).toBe(true);
    expect(item.error_message).toBe("e".repeat(4000));
    expect(item.dns_answer).toHaveLength(100);
    expect(item.synthetic_trace_json).toMatchObject({ truncated: true, steps: [{ name: "big", status: 200 }] });
  });

  test("a trace that is not an object is an invalid result", async () => {
    const res = await peerCall(s.url, peerA.token, "POST", "/results", batch([resultItem(m, "up", Date.now(), { synthetic_trace_json: "x".repeat(100) })]));
    expect(res.json.data.results[0].outcome).toBe("rejected");
    expect(res.json.data.results[0].reason).toContain("synthetic_trace_json");
  });
});

describe("results per peer per minute", () => {
  test("twice the peer's monitors' rate plus --peer-result-limit; what does not fit is `retry`, then 429 with Retry-After", async () => {
    const q = await startTestServer(["--peer-result-limit", "3"]);
    try {
      const c = await makeAccount(q.ctx, "charlie");
      // two monitors every 60 s in the peer's region: 2 results a minute, 4 with the margin
      const mons: number[] = [];
      for (const name of ["one", "two"]) mons.push(await createMonitor(q, httpAttrs({ name, is_paused: false, interval_sec: 60, regions: ["eu"] }), c.token));
      await createMonitor(q, httpAttrs({ name: "elsewhere", is_paused: false, interval_sec: 10, regions: ["us"] }), c.token);
      const peer = await makePeer(q.ctx, "eu", [c.accountId]);
      const now = Date.now();
      const items = Array.from({ length: 9 }, (_, i) => resultItem(mons[i % 2]!, "up", now - 10_000 + i));
      const res = await peerCall(q.url, peer.token, "POST", "/results", batch(items));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("7");
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
      const acks = res.json.data.results;
      expect(acks.map((r: { outcome: string }) => r.outcome)).toEqual([...Array(7).fill("stored"), "retry", "retry"]);
      expect(acks[7].reason).toStartWith("rate_limited");

      const over = await peerCall(q.url, peer.token, "POST", "/results", batch([items[7]]));
      expect(over.status).toBe(429);
      expect(over.json.error.code).toBe("rate_limited");
      const retryAfter = Number(over.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // another peer has its own quota
      const other = await makePeer(q.ctx, "eu", [c.accountId]);
      expect((await peerCall(q.url, other.token, "POST", "/results", batch([items[7]]))).json.data.results[0].outcome).toBe("stored");
    } finally {
      await q.stop();
    }
  });

  test("a probe over its quota keeps its results spooled and delivers them when the leader has room again", async () => {
    // the leader's clock is moved to near the end of the quota window, so the wait is seconds, not a minute
    let offset = 0;
    const leader = await startTestServer(["--peer-result-limit", "2"], { clock: { now: () => Date.now() + offset } });
    const target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
    const probeDir = tempDir("vigil-probe-quota-");
    const probeLogs: string[] = [];
    let probe: Instance | undefined;
    try {
      const d = await makeAccount(leader.ctx, "delta", "enterprise");
      const peer = await makePeer(leader.ctx, "eu", [d.accountId]);
      // paused: the probe has nothing to run, and the window's limit is the floor alone (2)
      const m = await createMonitor(leader, httpAttrs({ name: "quota", is_paused: true, interval_sec: 3600, regions: ["eu"], target: `http://127.0.0.1:${target.port}/` }), d.token);
      const args = ["--role", "probe", "--leader", leader.url, "--peer-token", peer.token, "--region", "eu", "--data", probeDir, "--host", "127.0.0.1", "--port", "0", "--log-level", "debug"];
      probe = await startInstance(
        [...args, ...(await engineArgs(args))],
        {},
        { logSink: (l) => probeLogs.push(l) },
      );
      // the peer's minute is used up (results of a paused monitor are dropped, but they count)
      const used = await peerCall(leader.url, peer.token, "POST", "/results", batch([resultItem(m, "up", Date.now()), resultItem(m, "up", Date.now())]));
      expect(used.headers.get("x-ratelimit-remaining")).toBe("0");
      expect((await peerCall(leader.url, peer.token, "POST", "/results", batch([]))).status).toBe(429);
      offset = 52_000;

      // resumed: the probe checks it at once, and the leader refuses its batch for the rest of the window
      expect((await leader.api("PATCH", `/api/v1/monitors/${m}`, { is_paused: false }, { token: d.token })).status).toBe(200);
      const limited = await waitFor(() => probeLogs.some((l) => l.includes("the leader limits this probe's results")), { timeoutMs: 20_000, intervalMs: 50 });
      expect(limited).toBe(true);
      const line = JSON.parse(probeLogs.find((l) => l.includes("the leader limits this probe's results"))!);
      expect(line.retry_after_ms).toBeGreaterThan(0);
      expect(line.retry_after_ms).toBeLessThanOrEqual(8000);

      const spooled = () => probeLogs.filter((l) => l.includes('"result spooled"')).map((l) => JSON.parse(l)).filter((l) => l.monitor_id === m);
      expect(spooled().length).toBeGreaterThanOrEqual(1);
      const delivered = await waitFor(async () => (await leader.api("GET", `/api/v1/monitors/${m}/checks?region=eu`, undefined, { token: d.token })).json.pagination.total >= spooled().length, { timeoutMs: 30_000, intervalMs: 200 });
      expect(delivered).toBe(true);
      // the probe says so once its delivery is answered, which may come a moment after the rows are readable
      expect(await waitFor(() => probeLogs.some((l) => l.includes("the leader accepts this probe's results again")), { timeoutMs: 10_000 })).toBe(true);
      // each spooled result stored exactly once
      const checks = (await leader.api("GET", `/api/v1/monitors/${m}/checks?region=eu`, undefined, { token: d.token })).json.data;
      expect(checks.map((c: { attributes: { checked_at: string } }) => Date.parse(c.attributes.checked_at)).sort()).toEqual(spooled().map((l) => l.checked_at).sort());
      await probe.shutdown();
      probe = undefined;
      expect(await remainingInSpool(probeDir)).toEqual([]);
    } finally {
      await probe?.shutdown();
      await leader.stop();
      target.stop(true);
      rmSync(probeDir, { recursive: true, force: true });
    }
  }, 60_000);
});
