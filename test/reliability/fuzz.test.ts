/**
 * Bad input: fast-check throws malformed bodies, headers, query strings, paths and methods, huge and
 * 100,000-deep JSON, invalid UTF-8 and wrong types per attribute at every route of apiRoutes, the
 * ping URL and the peer endpoints. Every answer must be a documented status with a JSON error body
 * (never a 500, never a hang: each request has a 5 s limit), and the server must stay up (/healthz
 * after every batch). The seed is printed; FUZZ_SEED=<n> replays a run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import type { TSchema } from "@sinclair/typebox";
import { issuePeerToken } from "../../src/auth/peer-tokens.ts";
import { apiRoutes } from "../../src/api/routes.ts";
import { PEER_PREFIX, ResultsBatchSchema } from "../../src/peers/protocol.ts";
import { insertIncident } from "../../src/store/incidents.ts";
import { httpAttrs } from "../api/fixtures.ts";
import { defaultAccountId } from "../helpers/heartbeat.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { bodyArb, deepJson, headersArb, idArb, METHODS, queryArb, schemaKeys, uriEncode, type FuzzRequest } from "./fuzz-inputs.ts";

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PER_ROUTE = 800;
const PINGS = 3000;
const PEER = 2000;
const UNKNOWN = 600;
const CONCURRENCY = 16;
// An answer later than this is a hang. Generous, because CI shares two cores with the rest of the
// suite: a loaded box once took 5.4 s to answer a 1 MiB body here.
const TIMEOUT_MS = 20_000;

const API_STATUSES = [200, 201, 400, 401, 403, 404, 405, 413, 415, 422, 429];
const PING_STATUSES = [200, 404, 405, 413, 429];

let s: TestServer;
let token: string;
let otherToken: string;
let peerToken: string;
const pools: Record<string, { keep: string[]; doomed: string[] }> = {};
let pingToken = "";

beforeAll(async () => {
  s = await startTestServer(["--rate-limit", "pro=1000000,enterprise=1000000", "--ping-limit-token", "1000000", "--ping-limit-ip", "10000000"]);
  token = s.token;
  otherToken = (await makeAccount(s.ctx, "other", "enterprise")).token;
  peerToken = (await issuePeerToken(s.ctx.db, { region: "eu", label: "fuzz", accounts: "all", now: Date.now() })).token;
  const create = async (path: string, attrs: Record<string, unknown>) => {
    const r = await s.api("POST", path, attrs);
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
    return String(r.json.data.id);
  };
  const many = (n: number, path: string, attrs: (i: number) => Record<string, unknown>) => Promise.all(Array.from({ length: n }, (_, i) => create(path, attrs(i))));
  const mon = await create("/api/v1/monitors", httpAttrs({ name: "kept" }));
  const hb = await create("/api/v1/monitors", { name: "hb", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000, is_paused: true });
  pools.monitors = { keep: [mon, hb], doomed: await many(20, "/api/v1/monitors", (i) => httpAttrs({ name: `doomed-${i}` })) };
  pools["status-pages"] = { keep: [await create("/api/v1/status-pages", { name: "Kept page", monitor_ids: [Number(mon)] })], doomed: await many(10, "/api/v1/status-pages", (i) => ({ name: `Doomed ${i}` })) };
  const hook = (name: string) => ({ name, channel_type: "webhook", url: "http://127.0.0.1:9/hook" });
  pools["notification-channels"] = { keep: [await create("/api/v1/notification-channels", hook("kept"))], doomed: await many(10, "/api/v1/notification-channels", (i) => hook(`doomed-${i}`)) };
  const incident = await insertIncident(s.ctx.db, { accountId: await defaultAccountId(s.ctx), monitorId: Number(mon), startedAt: Date.now(), rootCheckId: null, errorCode: "http_error", errorMessage: "HTTP 500", httpCode: 500, failureCount: 1 });
  pools.incidents = { keep: [String(incident.id)], doomed: [] };
  const window = (name: string) => ({ name, monitor_ids: [Number(mon)], schedule: "0 3 * * *", duration_sec: 600 });
  pools["maintenance-windows"] = { keep: [await create("/api/v1/maintenance-windows", window("kept"))], doomed: await many(10, "/api/v1/maintenance-windows", (i) => window(`doomed-${i}`)) };
  // the ping target: not in any pool, so no fuzzed PATCH, DELETE or rotation touches it
  const ping = await s.api("POST", "/api/v1/monitors", { name: "pinged", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, heartbeat_payload_policy: "status_ok" });
  pingToken = ping.json.data.attributes.heartbeat_token;
});
afterAll(() => s?.stop());

const BASES: Record<string, Record<string, unknown>> = {
  monitors: httpAttrs({ name: "fuzzed" }),
  "status-pages": { name: "Fuzzed page" },
  "notification-channels": { name: "fuzzed", channel_type: "webhook", url: "http://127.0.0.1:9/hook" },
  incidents: {},
  "maintenance-windows": { name: "fuzzed", monitor_ids: [1], starts_at: "2030-01-01T00:00:00Z", ends_at: "2030-01-01T01:00:00Z" },
};

const resourceOf = (path: string) => path.split("/")[3]!;

function routeInputs(def: (typeof apiRoutes)[number], n: number, seed: number): FuzzRequest[] {
  const resource = resourceOf(def.path);
  const pool = pools[resource] ?? { keep: ["1"], doomed: [] };
  const ids = def.method === "DELETE" && pool.doomed.length ? pool.doomed : pool.keep;
  const queryNames = Object.keys((def.query as { properties?: object } | undefined)?.properties ?? {});
  const body = bodyArb(BASES[resource] ?? {}, schemaKeys(def.body as TSchema | undefined), resource.replace(/s$/, "").replace(/-/g, "_"), 1024 * 1024);
  const arb = fc.record({
    method: fc.oneof({ weight: 6, arbitrary: fc.constant(def.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    id: idArb(ids),
    query: queryArb(queryNames),
    headers: headersArb([token, token, token, otherToken], def.body !== undefined),
    body: fc.option(body, { freq: def.body ? 12 : 3, nil: undefined }),
    trailingSlash: fc.boolean(),
  });
  return fc.sample(arb, { numRuns: n, seed }).map((x) => ({
    method: x.method,
    path: def.path.replace(":id", x.id) + (x.trailingSlash ? "/" : ""),
    query: x.query,
    headers: x.headers,
    // GET and HEAD cannot carry a body in fetch
    body: x.method === "GET" || x.method === "HEAD" ? undefined : def.body || x.body ? x.body?.body : undefined,
    bodyKind: x.body?.kind ?? "none",
  }));
}

function pingInputs(n: number, seed: number): FuzzRequest[] {
  const arb = fc.record({
    method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom("GET", "POST", "HEAD") }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    token: fc.oneof({ weight: 4, arbitrary: fc.constant(pingToken) }, { weight: 2, arbitrary: idArb(["x"]) }, { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{8,40}$/) }),
    action: fc.option(fc.oneof(fc.constantFrom("start", "fail", "0", "1", "255", "256", "999", "-1", "1.5", "%00", "fail/extra"), fc.string({ maxLength: 10 }).map(uriEncode)), { freq: 2 }),
    query: queryArb(["status", "rid"]),
    headers: headersArb(["unused"], true),
    body: fc.option(bodyArb({ status: "ok" }, ["status"], "ping", 64 * 1024), { freq: 3, nil: undefined }),
  });
  return fc.sample(arb, { numRuns: n, seed }).map((x) => ({
    method: x.method,
    path: `/h/${x.token}${x.action === null ? "" : "/" + x.action}`,
    query: x.query,
    headers: x.headers,
    body: x.method === "GET" || x.method === "HEAD" ? undefined : x.body?.body,
    bodyKind: x.body?.kind ?? "none",
  }));
}

function peerInputs(n: number, seed: number): FuzzRequest[] {
  const base = { sent_at: Date.now(), queue_length: 0, results: [{ id: "r-1", monitor_id: 1, status: "up", checked_at: Date.now() }] };
  const arb = fc.record({
    endpoint: fc.constantFrom("hello", "monitors", "results", "peers", "nope", "results/1", ""),
    method: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("GET", "POST") }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    // a long-poll waits up to `wait` seconds: only short waits, so a wait is never mistaken for a hang
    query: fc.oneof(queryArb(["probe_time", "cursor"]), fc.constantFrom("wait=0", "wait=1", "wait=-1", "wait=26", "wait=x", "wait=1.5", "cursor=%zz&wait=0", "cursor=999999999999&wait=0")),
    headers: headersArb([peerToken, peerToken, token], true),
    body: fc.option(bodyArb(base, schemaKeys(ResultsBatchSchema), "results", 1536 * 1024), { freq: 3, nil: undefined }),
  });
  return fc.sample(arb, { numRuns: n, seed }).map((x) => ({
    method: x.method,
    path: `${PEER_PREFIX}/${x.endpoint}`,
    query: x.query,
    headers: x.headers,
    body: x.method === "GET" || x.method === "HEAD" ? undefined : x.body?.body,
    bodyKind: x.body?.kind ?? "none",
  }));
}

function unknownPathInputs(n: number, seed: number): FuzzRequest[] {
  const seg = fc.oneof(fc.constantFrom("monitors", "incidents", "status-pages", "1", "..", "%2F", "%zz", "", "openapi.json", "notification-channels"), fc.string({ maxLength: 12 }).map(uriEncode));
  const arb = fc.record({ segs: fc.array(seg, { minLength: 1, maxLength: 5 }), method: fc.constantFrom(...METHODS), headers: headersArb([token], false) });
  return fc.sample(arb, { numRuns: n, seed }).map((x) => ({ method: x.method, path: `/api/v1/${x.segs.join("/")}`, query: "", headers: x.headers, bodyKind: "none" }));
}

interface Failure { input: string; problem: string }

/** answers by status, and inputs fetch itself would not send, for the summary line */
const statusCounts = new Map<string, number>();
const tally = (k: string) => statusCounts.set(k, (statusCounts.get(k) ?? 0) + 1);

async function send(req: FuzzRequest, allowed: number[]): Promise<Failure | null> {
  const describe = () => `${req.method} ${req.path.slice(0, 120)}${req.query ? "?" + req.query.slice(0, 80) : ""} body=${req.bodyKind} headers=${JSON.stringify(req.headers).slice(0, 200)}`;
  let res: Response;
  let text: string;
  const url = `${s.url}${req.path}${req.query ? "?" + req.query : ""}`;
  // fetch resolves dot segments (%2e%2e too) before sending: a path that leaves the endpoint's
  // prefix that way is a request for another page, not the input meant
  const prefix = req.path.split("/").slice(0, req.path.startsWith("/h/") ? 2 : 3).join("/");
  if (!new URL(url).pathname.startsWith(prefix)) return tally("normalized away"), null;
  try {
    res = await fetch(url, { method: req.method, headers: req.headers, body: req.body as BodyInit | undefined, signal: AbortSignal.timeout(TIMEOUT_MS) });
    text = await res.text();
  } catch (err) {
    const name = (err as Error).name;
    // fetch itself refuses some inputs (a header value it will not send): not the server's answer
    if (name === "TypeError" && /header|method|invalid/i.test((err as Error).message)) return tally("not sent"), null;
    return { input: describe(), problem: name === "TimeoutError" ? `no answer within ${TIMEOUT_MS} ms` : `connection failed: ${(err as Error).message}` };
  }
  tally(String(res.status));
  if (process.env.FUZZ_DEBUG) console.log(res.status, req.method, req.path.slice(0, 60), req.bodyKind, text.slice(0, 100));
  if (!allowed.includes(res.status)) return { input: describe(), problem: `status ${res.status}: ${text.slice(0, 300)}` };
  if (req.method === "HEAD") return null;
  if (!(res.headers.get("content-type") ?? "").includes("application/json")) return { input: describe(), problem: `status ${res.status} with content-type ${res.headers.get("content-type")}: ${text.slice(0, 200)}` };
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    return { input: describe(), problem: `status ${res.status}, body is not JSON: ${text.slice(0, 200)}` };
  }
  if (res.status >= 400 && (typeof json?.error?.code !== "string" || typeof json?.error?.message !== "string")) {
    return { input: describe(), problem: `status ${res.status} without an error {code, message}: ${text.slice(0, 200)}` };
  }
  return null;
}

async function runAll(reqs: { req: FuzzRequest; allowed: number[] }[]): Promise<{ failures: Failure[]; tried: number }> {
  const failures: Failure[] = [];
  let tried = 0;
  for (let i = 0; i < reqs.length; i += CONCURRENCY * 16) {
    const batch = reqs.slice(i, i + CONCURRENCY * 16);
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < batch.length) {
        const item = batch[next++]!;
        const f = await send(item.req, item.allowed);
        tried++;
        if (f) failures.push(f);
      }
    }));
    // the server stays up after every batch
    const health = await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(TIMEOUT_MS) }).catch((e) => e as Error);
    if (!(health instanceof Response) || health.status !== 200) {
      failures.push({ input: `after input ${tried}`, problem: "/healthz did not answer 200: the server is down" });
      break;
    }
  }
  return { failures, tried };
}

test("every endpoint answers malformed input with a documented status and a JSON error, never 500 or a hang", async () => {
  const reqs: { req: FuzzRequest; allowed: number[] }[] = [];
  apiRoutes.forEach((def, i) => {
    for (const req of routeInputs(def, PER_ROUTE, SEED + i)) reqs.push({ req, allowed: API_STATUSES });
  });
  for (const req of pingInputs(PINGS, SEED + 1000)) reqs.push({ req, allowed: PING_STATUSES });
  for (const req of peerInputs(PEER, SEED + 2000)) reqs.push({ req, allowed: API_STATUSES });
  for (const req of unknownPathInputs(UNKNOWN, SEED + 3000)) reqs.push({ req, allowed: API_STATUSES });

  const started = performance.now();
  const { failures, tried } = await runAll(reqs);
  const unexpected = s.logs.filter((l) => l.msg === "unexpected failure");
  console.log(`fuzz: ${tried} inputs (seed ${SEED}, ${apiRoutes.length} API routes, ping URL, peer endpoints) in ${Math.round(performance.now() - started)} ms, ${failures.length} failures, ${unexpected.length} unexpected-failure log lines`);
  console.log(`fuzz: answers ${JSON.stringify(Object.fromEntries([...statusCounts].sort()))}`);
  for (const f of failures.slice(0, 15)) console.log(`  ${f.problem}\n    ${f.input}`);
  for (const l of unexpected.slice(0, 5)) console.log(`  logged: ${String(l.error).split("\n").slice(0, 3).join(" | ")}`);
  expect(tried).toBe(reqs.length);
  expect(failures).toEqual([]);
  expect(unexpected).toEqual([]);
}, 120_000);

test("100,000-deep JSON at every attribute of every write and in a peer result is a 400; in a ping it is a rejected ping", async () => {
  const reqs: { req: FuzzRequest; allowed: number[] }[] = [];
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  for (const def of apiRoutes.filter((d) => d.body)) {
    const resource = resourceOf(def.path);
    const path = def.path.replace(":id", pools[resource]?.keep[0] ?? "1");
    const base = JSON.stringify(BASES[resource] ?? {}).slice(1, -1);
    for (const key of schemaKeys(def.body as TSchema)) {
      for (const kind of ["array", "object"] as const) {
        const text = `{${base ? base + "," : ""}${JSON.stringify(key)}:${deepJson(100_000, kind)}}`;
        reqs.push({ req: { method: def.method, path, query: "", headers, body: new TextEncoder().encode(text), bodyKind: `deep ${kind} at ${key}` }, allowed: [400] });
      }
    }
  }
  for (const kind of ["array", "object"] as const) {
    const body = new TextEncoder().encode(`{"status":${deepJson(10_000, kind)}}`);
    reqs.push({ req: { method: "POST", path: `/h/${pingToken}`, query: "", headers: { "content-type": "application/json" }, body, bodyKind: `deep ${kind} ping` }, allowed: [200] });
  }
  // a peer result whose synthetic_trace_json is deep once failed to store on every retry
  const item = { result_uid: "deep-result-1", monitor_id: Number(pools.monitors!.keep[0]), status: "up", checked_at: Date.now(), latency_ms: 1, http_code: 200, error_code: null, error_message: null, degraded_reason: null, resolved_ip: null, ssl_not_after: null, dns_answer: null };
  for (const kind of ["array", "object"] as const) {
    const text = `{"sent_at":${Date.now()},"queue_length":0,"results":[${JSON.stringify(item).slice(0, -1)},"synthetic_trace_json":${deepJson(100_000, kind)}}]}`;
    reqs.push({ req: { method: "POST", path: `${PEER_PREFIX}/results`, query: "", headers: { authorization: `Bearer ${peerToken}`, "content-type": "application/json" }, body: new TextEncoder().encode(text), bodyKind: `deep ${kind} peer result` }, allowed: [400] });
  }
  const { failures, tried } = await runAll(reqs);
  console.log(`fuzz: ${tried} deep-nesting inputs, ${failures.length} failures`);
  for (const f of failures.slice(0, 10)) console.log(`  ${f.problem}\n    ${f.input}`);
  expect(tried).toBeGreaterThan(100);
  expect(failures).toEqual([]);
}, 60_000);
