/**
 * What a synthetic check may store (README "Security", Limits), on a real server checking a real
 * HTTP target that answers large bodies: with `full` body detail a step keeps at most 64 KiB of its
 * body, a check at most 256 KiB of trace, and an account at most --trace-budget-mib per hour; past
 * the budget a trace keeps its steps' outline. Each cut says so in the stored trace.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_STEP_BODY_BYTES, MAX_TRACE_BYTES } from "../../src/domain/trace-bounds.ts";
import { CHECKED_MONITOR_ARGS, FIRST_RUN_MS } from "../helpers/checked-monitor.ts";
import { makeAccount, startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

const BIG = "y".repeat(1024 * 1024);
let s: TestServer;
let t: HttpTarget;
let a: { accountId: number; token: string };
let b: { accountId: number; token: string };

beforeAll(async () => {
  t = await startHttpTarget({ "/big": () => new Response(BIG), "/small": () => Response.json({ ok: true }) });
  s = await startTestServer([...CHECKED_MONITOR_ARGS, "--trace-budget-mib", "1"]);
  a = await makeAccount(s.ctx, "alpha", "enterprise");
  b = await makeAccount(s.ctx, "bravo", "enterprise");
});
afterAll(async () => {
  await s?.stop();
  await t?.close();
});

// five big bodies of 64 KiB each are more than one check may store
const steps = [...Array.from({ length: 5 }, (_, i) => ({ name: `big ${i + 1}`, url: "/big" })), { name: "small", url: "/small" }];

async function scenario(name: string, token: string): Promise<string> {
  const attrs = { name, monitor_type: "http", target: t.url, interval_sec: 3600, timeout_ms: 10_000, synthetic_enabled: true, synthetic_steps_json: { steps }, synthetic_trace_body_detail: "full" };
  const r = await s.api("POST", "/api/v1/monitors", attrs, { token });
  if (r.status !== 201) throw new Error(`creating ${name}: ${r.status} ${r.text}`);
  return String(r.json.data.id);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Trace = { truncated?: boolean; reason?: string; steps: any[] };
async function firstTrace(id: string, token: string): Promise<{ trace: Trace; text: string }> {
  const read = async () => {
    const r = await s.api("GET", `/api/v1/monitors/${id}/checks?per_page=5`, undefined, { token });
    return r.json.data.length ? r : null;
  };
  const r = await waitFor(read, { timeoutMs: FIRST_RUN_MS, intervalMs: 100 });
  if (!r) throw new Error(`monitor ${id} was not checked`);
  return { trace: r.json.data.at(-1).attributes.synthetic_trace_json, text: r.text };
}

const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

test("a full trace keeps 64 KiB of each body and 256 KiB in all, and says so; the check list stays small", async () => {
  const id = await scenario("full bodies", b.token);
  const { trace, text } = await firstTrace(id, b.token);
  expect(trace.steps.map((st) => st.status)).toEqual([200, 200, 200, 200, 200, 200]);
  expect(size(trace)).toBeLessThanOrEqual(MAX_TRACE_BYTES);
  expect(trace.truncated).toBe(true);
  expect(trace.reason).toBe(
    "trace cut: a step keeps at most 64 KiB of its response body; over the 256 KiB one check may store, so the steps' response bodies are shortened to fit",
  );
  for (const st of trace.steps.slice(0, 5)) {
    expect(st.body_truncated).toBe(true);
    expect(st.body).toMatch(/^y+$/);
    expect(st.body.length).toBeLessThan(MAX_STEP_BODY_BYTES);
    // the room is shared: each big body keeps about a fifth of the check's bound
    expect(st.body.length).toBeGreaterThan(MAX_TRACE_BYTES / 5 - 4096);
  }
  expect(trace.steps[5]).toMatchObject({ name: "small", body: '{"ok":true}' });
  expect(trace.steps[5].body_truncated).toBeUndefined();
  // a page of checks is a few of these at most, not megabytes per step
  expect(text.length).toBeLessThan(5 * MAX_TRACE_BYTES + 64 * 1024);
});

test("past the account's hourly budget a trace keeps its steps' outline and says until when; other accounts are not held back", async () => {
  // four traces of about 256 KiB fill the 1 MiB budget
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(await scenario(`budget ${i}`, a.token));
  const traces = await Promise.all(ids.map(async (id) => (await firstTrace(id, a.token)).trace));
  const outlined = traces.filter((tr) => tr.reason?.includes("this account's 1 MiB of traces per hour (until "));
  expect(outlined.length).toBeGreaterThanOrEqual(2);
  for (const tr of outlined) {
    expect(tr.truncated).toBe(true);
    expect(tr.steps.map((st) => st.name)).toEqual(steps.map((st) => st.name));
    expect(tr.steps.every((st) => st.body === undefined)).toBe(true);
  }
  const total = traces.reduce((n, tr) => n + size(tr), 0);
  expect(total).toBeLessThanOrEqual(1024 * 1024 + outlined.reduce((n, tr) => n + size(tr), 0));
  expect(traces.every((tr) => size(tr) <= MAX_TRACE_BYTES)).toBe(true);
  // account b's budget is its own
  const other = (await firstTrace(await scenario("bravo again", b.token), b.token)).trace;
  expect(other.reason).not.toContain("per hour");
  expect(other.steps[0].body.length).toBeGreaterThan(40_000);
  expect(s.logs.some((l) => l.msg === "trace budget reached: this account's traces keep their steps' outline until the hour is over" && l.account_id === a.accountId)).toBe(true);
}, 60_000);
