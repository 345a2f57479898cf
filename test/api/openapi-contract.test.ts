/**
 * The OpenAPI document against the live server: every operation of the route table, and every other
 * operation the document lists, is called for real (success and its errors), and each answer's
 * status, headers and JSON body must be what the document says for that operation and status
 * (ajv with JSON Schema 2020-12, the dialect of OpenAPI 3.1). Both ways: every status the document
 * lists for an operation must be reached here, except 500, 503 and 507, which need a broken server
 * (507 is reached for one write, with the store capped).
 * A route added to the table without a scenario below fails this test until one is written.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { MAX_BODY_BYTES } from "../../src/http/json-body.ts";
import type { RouteDef } from "../../src/api/route.ts";
import { apiRoutes } from "../../src/api/routes.ts";
import { emptyResult } from "../../src/domain/check-result.ts";
import { PING_BODY_LIMIT } from "../../src/domain/ping-body.ts";
import { issuePeerToken } from "../../src/auth/peer-tokens.ts";
import { insertCheck } from "../../src/store/checks.ts";
import { insertIncident } from "../../src/store/incidents.ts";
import { createMonitor, createStatusPage, httpAttrs, VALID_BY_TYPE } from "./fixtures.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { makeAccount, startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { startDomainDns, type DomainDns } from "../helpers/custom-domains.ts";
import { asSqlite } from "../../src/store/database.ts";

/** statuses that need a failing disk or a bug to be reached; their shape is checked by the same code */
const NOT_REACHABLE_HERE = new Set([500, 503, 507]);
const PING_LIMIT = 8;
const PRO_LIMIT = 3;

let s: TestServer;
let hook: HttpTarget;
let dns: DomainDns;
let doc: any;
const ajv = new Ajv2020({ allErrors: true });
addFormats(ajv);
const tokens = { noScope: "", free: "", limited: "", noMetrics: "" };
const ids = { http: 0, hb: 0, hbPaused: 0, hbStatusOk: 0, hbLimited: 0, hbRotate: 0, page: 0, channel: 0, incident: 0, window: 0, group: 0, update: 0 };
const hbTokens = { hb: "", hbPaused: "", hbStatusOk: "", hbLimited: "" };
/** problems found, reported together at the end of each test */
const problems: string[] = [];
/** "get /api/v1/monitors 200": the operations and statuses reached */
const reached = new Set<string>();

beforeAll(async () => {
  dns = await startDomainDns();
  s = await startTestServer(["--rate-limit", `pro=${PRO_LIMIT},enterprise=100000`, "--ping-limit-token", String(PING_LIMIT), ...dns.flags]);
  hook = await startHttpTarget({ "/hook": () => new Response("ok") });
  doc = (await s.api("GET", "/api/v1/openapi.json", undefined, { token: null })).json;
  tokens.noScope = (await makeAccount(s.ctx, "no-scope", "enterprise", ["metrics:read"])).token;
  tokens.noMetrics = (await makeAccount(s.ctx, "no-metrics", "enterprise", ["monitors:read"])).token;
  tokens.free = (await makeAccount(s.ctx, "free", "free")).token;
  tokens.limited = (await makeAccount(s.ctx, "limited", "pro")).token;

  ids.channel = Number((await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${hook.url}/hook`, secret: "signing-key-for-tests" })).json.data.id);
  for (const [type, attrs] of Object.entries(VALID_BY_TYPE)) {
    const id = await createMonitor(s, { ...attrs, name: `every type: ${type}` });
    if (type === "http") ids.http = id;
  }
  await s.api("PATCH", `/api/v1/monitors/${ids.http}`, { notification_channel_ids: [ids.channel] });
  const heartbeat = async (over: Record<string, unknown>) => {
    const res = await s.api("POST", "/api/v1/monitors", { ...VALID_BY_TYPE.heartbeat, is_paused: false, ...over });
    return { id: Number(res.json.data.id), token: String(res.json.data.attributes.heartbeat_token) };
  };
  for (const [key, over] of [["hb", {}], ["hbPaused", { is_paused: true }], ["hbStatusOk", { heartbeat_payload_policy: "status_ok" }], ["hbLimited", {}]] as const) {
    const m = await heartbeat({ name: key, ...over });
    ids[key] = m.id;
    hbTokens[key] = m.token;
  }
  ids.hbRotate = (await heartbeat({ name: "rotated" })).id;
  // a timeline with a ping and a transition, checks of several shapes, an incident
  expect((await fetch(`${s.url}/h/${hbTokens.hb}`)).status).toBe(200);
  const now = Date.now();
  await insertCheck(s.ctx.db, ids.http, "local", { ...emptyResult(now - 60_000), latency_ms: 42, http_code: 200, resolved_ip: "127.0.0.1" });
  await insertCheck(s.ctx.db, ids.http, "local", { ...emptyResult(now), status: "down", error_code: "connection_timeout", error_message: "no response", dns_answer: ["127.0.0.1"], synthetic_trace_json: { steps: [] } });
  const { account_id: accountId } = await s.ctx.db.selectFrom("monitors").select("account_id").where("id", "=", ids.http).executeTakeFirstOrThrow();
  const incident = await insertIncident(s.ctx.db, { accountId, monitorId: ids.http, startedAt: now, rootCheckId: null, errorCode: "connection_timeout", errorMessage: "no response", httpCode: null, failureCount: 1 });
  ids.incident = incident.id;
  await issuePeerToken(s.ctx.db, { region: "eu", label: "contract probe", accounts: [accountId], now });
  ids.page = await createStatusPage(s, { name: "Contract page", monitor_ids: [ids.http] });
  ids.window = Number((await s.api("POST", "/api/v1/maintenance-windows", { name: "Patching", monitor_ids: [ids.http], schedule: "0 3 * * 0", duration_sec: 3600 })).json.data.id);
  ids.group = Number((await s.api("POST", "/api/v1/groups", { name: "Contract group" })).json.data.id);
  await s.api("PATCH", `/api/v1/monitors/${ids.http}`, { group_id: ids.group, tags: ["contract"] });
  ids.update = await createUpdate("Contract update");
});

async function createUpdate(title: string): Promise<number> {
  const res = await s.api("POST", `/api/v1/status-pages/${ids.page}/updates`, { title, kind: "incident", body: "line one\nline two", affected_monitor_ids: [ids.http] });
  if (res.status !== 201) throw new Error(`update: ${res.status} ${res.text}`);
  return Number(res.json.data.id);
}
afterAll(async () => {
  await s?.stop();
  await hook?.close();
  await dns?.close();
});

// ---- the checks ----------------------------------------------------------------------------

function deref(x: any): any {
  if (!x?.$ref) return x;
  return (x.$ref as string).slice(2).split("/").reduce((o: any, k) => o[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
}

/** The document's components/schemas, as one schema ajv knows by this id. */
const COMPONENTS = "urn:vigil:openapi-components";
const rebased = (schema: object) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS}#/$defs/`));
const compiled = new WeakMap<object, ValidateFunction>();
function validator(schema: object): ValidateFunction {
  if (!ajv.getSchema(COMPONENTS)) ajv.addSchema(rebased({ $id: COMPONENTS, $defs: doc.components.schemas }));
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = ajv.compile(rebased(schema))));
  return v;
}

/** headers whose presence the document must announce when they are sent */
const WATCHED_HEADERS = ["x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after", "allow", "www-authenticate"];

/** What the document says of `status` for `method template`, against what the server answered. */
function compare(label: string, method: string, template: string, res: { status: number; headers: Headers; text: string }): void {
  const op = doc.paths[template]?.[method.toLowerCase()];
  if (!op) return void problems.push(`${label}: the document has no operation ${method} ${template}`);
  reached.add(`${method.toLowerCase()} ${template} ${res.status}`);
  const response = deref(op.responses[String(res.status)]);
  if (!response) return void problems.push(`${label}: ${res.status} is not among the documented statuses of ${method} ${template} (${Object.keys(op.responses).join(", ")}): ${res.text.slice(0, 200)}`);
  const documented = new Map(Object.entries(response.headers ?? {}).map(([n, h]) => [n.toLowerCase(), deref(h)]));
  for (const [name, h] of documented) {
    const value = res.headers.get(name);
    if (value === null) {
      if (h.required) problems.push(`${label}: header ${name} is documented as always sent, and is missing`);
      continue;
    }
    const typed = h.schema.type === "integer" ? (/^-?\d+$/.test(value) ? Number(value) : value) : value;
    if (!validator(h.schema)(typed)) problems.push(`${label}: header ${name}: ${value} does not match ${JSON.stringify(h.schema)}`);
  }
  for (const name of WATCHED_HEADERS) if (res.headers.has(name) && !documented.has(name)) problems.push(`${label}: header ${name} is sent but not documented for ${res.status}`);
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
  if (!response.content) return void (res.text !== "" && problems.push(`${label}: a body is sent where none is documented`));
  const media = response.content[type];
  if (!media) return void problems.push(`${label}: content type ${type} is not documented (${Object.keys(response.content).join(", ")})`);
  const value = type === "application/json" ? JSON.parse(res.text) : res.text;
  const validate = validator(media.schema);
  if (!validate(value)) problems.push(`${label}: body does not match the ${res.status} schema: ${ajv.errorsText(validate.errors)}; body ${res.text.slice(0, 300)}`);
}

interface Call {
  method: string;
  path: string;
  token?: string | null;
  body?: string | Record<string, unknown>;
  contentType?: string;
}

/**
 * Makes the request and compares the answer with the document, as an answer of `documentedAs` (the
 * operations of the path for a 405); returns it for the test's own checks.
 */
async function call(template: string, c: Call, documentedAs = [c.method]) {
  const headers: Record<string, string> = {};
  const token = c.token === undefined ? s.token : c.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (c.body !== undefined) {
    body = typeof c.body === "string" ? c.body : JSON.stringify(c.body);
    headers["content-type"] = c.contentType ?? "application/json";
  }
  const res = await fetch(s.url + c.path, { method: c.method, headers, body });
  const out = { status: res.status, headers: res.headers, text: await res.text() };
  for (const m of documentedAs) compare(`${c.method} ${c.path}${token === s.token ? "" : " (another token)"}`, m, template, out);
  return out;
}

// ---- /api/v1: scenarios per route ------------------------------------------------------------

const key = (def: RouteDef) => `${def.method} ${def.path}`;
const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

/** The record a route's :id names. */
function idFor(path: string): number {
  if (path.startsWith("/api/v1/monitors/:id/heartbeat-token")) return ids.hbRotate;
  if (path.startsWith("/api/v1/monitors/:id/events")) return ids.hb;
  if (path.startsWith("/api/v1/monitors/:id")) return ids.http;
  if (path.startsWith("/api/v1/incidents/:id")) return ids.incident;
  if (path.startsWith("/api/v1/status-pages/:id")) return ids.page;
  if (path.startsWith("/api/v1/notification-channels/:id")) return ids.channel;
  if (path.startsWith("/api/v1/maintenance-windows/:id")) return ids.window;
  if (path.startsWith("/api/v1/groups/:id")) return ids.group;
  throw new Error(`contract test: no record mapped for ${path}; add one`);
}
const fill = (path: string, id = idFor(path), updateId = ids.update) => path.replace(":id", String(id)).replace(":updateId", String(updateId));

/** A successful call per route; routes that delete get a record of their own. */
const SUCCESS: Record<string, () => Promise<Partial<Call>>> = {
  "GET /api/v1/monitors": async () => ({ path: "/api/v1/monitors?per_page=100" }),
  "GET /peer/v1/peers": async () => ({}),
  "POST /api/v1/monitors": async () => ({ body: httpAttrs({ name: "created", regions: ["local"], api_json_assertions_json: [{ path: "status", op: "equals", value: "ok" }] }) }),
  "GET /api/v1/monitors/:id": async () => ({}),
  "PATCH /api/v1/monitors/:id": async () => ({ body: { name: "renamed" } }),
  "DELETE /api/v1/monitors/:id": async () => ({ path: fill("/api/v1/monitors/:id", await createMonitor(s, httpAttrs({ name: "doomed" }))) }),
  "POST /api/v1/monitors/:id/heartbeat-token/rotate": async () => ({}),
  "GET /api/v1/monitors/:id/checks": async () => ({}),
  "GET /api/v1/monitors/:id/events": async () => ({}),
  "GET /api/v1/incidents": async () => ({ path: "/api/v1/incidents?resolved=false" }),
  "GET /api/v1/incidents/:id": async () => ({}),
  "GET /api/v1/status-pages": async () => ({}),
  "POST /api/v1/status-pages": async () => ({ body: { name: "Created page", is_token_protected: true, monitor_ids: [ids.http] } }),
  "GET /api/v1/status-pages/:id": async () => ({}),
  "PATCH /api/v1/status-pages/:id": async () => ({ body: { headline: "All good" } }),
  "DELETE /api/v1/status-pages/:id": async () => ({ path: fill("/api/v1/status-pages/:id", await createStatusPage(s, { name: "Doomed page" })) }),
  "POST /api/v1/status-pages/:id/custom-domain/verify": async () => {
    const res = await s.api("POST", "/api/v1/status-pages", { name: "Verified page", custom_domain: "status.contract.test" });
    dns.publish("status.contract.test", res.json.data.attributes.custom_domain_verification.record_value);
    return { path: fill("/api/v1/status-pages/:id/custom-domain/verify", Number(res.json.data.id)) };
  },
  "GET /api/v1/notification-channels": async () => ({}),
  "POST /api/v1/notification-channels": async () => ({ body: { name: "mail", channel_type: "email", email_to: "ops@example.com", smtp_host: "127.0.0.1", smtp_from: "vigil@example.com" } }),
  "GET /api/v1/notification-channels/:id": async () => ({}),
  "PATCH /api/v1/notification-channels/:id": async () => ({ body: { is_enabled: true } }),
  "DELETE /api/v1/notification-channels/:id": async () => {
    const res = await s.api("POST", "/api/v1/notification-channels", { name: "doomed", channel_type: "webhook", url: `${hook.url}/hook` });
    return { path: fill("/api/v1/notification-channels/:id", Number(res.json.data.id)) };
  },
  "POST /api/v1/notification-channels/:id/test": async () => ({}),
  "GET /api/v1/maintenance-windows": async () => ({}),
  "POST /api/v1/maintenance-windows": async () => ({ body: { name: "Upgrade", description: "one-off", monitor_ids: [ids.http], starts_at: "2030-01-01T02:00:00Z", ends_at: "2030-01-01T03:00:00Z" } }),
  "GET /api/v1/maintenance-windows/:id": async () => ({}),
  "PATCH /api/v1/maintenance-windows/:id": async () => ({ body: { timezone: "Europe/Berlin" } }),
  "DELETE /api/v1/maintenance-windows/:id": async () => {
    const res = await s.api("POST", "/api/v1/maintenance-windows", { name: "doomed", monitor_ids: [ids.http], schedule: "0 4 * * *", duration_sec: 600 });
    return { path: fill("/api/v1/maintenance-windows/:id", Number(res.json.data.id)) };
  },
  "GET /api/v1/groups": async () => ({}),
  "POST /api/v1/groups": async () => ({ body: { name: "Created group", description: "made by the contract test", sort_order: 5 } }),
  "GET /api/v1/groups/:id": async () => ({}),
  "PATCH /api/v1/groups/:id": async () => ({ body: { sort_order: 3 } }),
  "DELETE /api/v1/groups/:id": async () => ({ path: fill("/api/v1/groups/:id", Number((await s.api("POST", "/api/v1/groups", { name: "Doomed group" })).json.data.id)) }),
  "GET /api/v1/status-pages/:id/updates": async () => ({}),
  "POST /api/v1/status-pages/:id/updates": async () => ({ body: { title: "Planned work", kind: "maintenance", published_at: "2026-11-24T09:30:00Z" } }),
  "GET /api/v1/status-pages/:id/updates/:updateId": async () => ({}),
  "PATCH /api/v1/status-pages/:id/updates/:updateId": async () => ({ body: { status: "monitoring" } }),
  "DELETE /api/v1/status-pages/:id/updates/:updateId": async () => ({ path: fill("/api/v1/status-pages/:id/updates/:updateId", ids.page, await createUpdate("Doomed update")) }),
};

/** A call each route that refuses without a body (RouteDef.refuses) answers with 422. */
const REFUSED: Record<string, () => Promise<Partial<Call>>> = {
  // a page without a custom domain has nothing to verify
  "POST /api/v1/status-pages/:id/custom-domain/verify": async () => ({ path: fill("/api/v1/status-pages/:id/custom-domain/verify", await createStatusPage(s, { name: "No domain" })) }),
};

/** A body each write route refuses with 422. */
const INVALID_BODY = { name: "", no_such_attribute: 1 };

test("the document lists exactly the operations of the route table under /api/v1 (and the peers list beside the peer protocol)", () => {
  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .filter(([p]) => p.startsWith("/api/v1/") || p.startsWith("/peer/v1/"))
    .flatMap(([p, item]) => Object.keys(item).filter((m) => m !== "parameters" && m !== "servers").map((m) => `${m} ${p}`));
  const operations = apiRoutes.flatMap((r) => (r.method === "GET" ? ["get", "head"] : [r.method.toLowerCase()]).map((m) => `${m} ${openApiPath(r.path)}`));
  expect(documented.sort()).toEqual(operations.sort());
});

test("every /api/v1 operation answers, for success and each of its errors, what the document says", async () => {
  for (const def of apiRoutes) {
    const template = openApiPath(def.path);
    const scenario = SUCCESS[key(def)];
    if (!scenario) throw new Error(`contract test: no success scenario for ${key(def)}; add one to SUCCESS`);
    const path = def.path.includes(":") ? fill(def.path) : def.path;
    // a GET is asked again as HEAD, which the document lists beside it: the same status, no body
    const asked = async (c: Call) => {
      const res = await call(template, c);
      if (c.method === "GET") expect(`HEAD ${c.path} ${(await call(template, { ...c, method: "HEAD" })).status}`).toBe(`HEAD ${c.path} ${res.status}`);
      return res;
    };
    const ok = await asked({ method: def.method, path, ...(await scenario()) });
    expect(`${key(def)} ${ok.status}`).toBe(`${key(def)} ${def.successStatus ?? 200}`);
    const data = JSON.parse(ok.text).data;
    if (Array.isArray(data)) expect(`${key(def)}: ${data.length} items`).not.toBe(`${key(def)}: 0 items`);

    const valid = def.body ? { body: {} } : {};
    await asked({ method: def.method, path, token: null, ...valid }); // 401 unauthorized
    await asked({ method: def.method, path, token: "not-a-token-of-this-instance", ...valid }); // 401 invalid_token
    await asked({ method: def.method, path, token: tokens.free, ...valid }); // 403 plan_feature_disabled
    await asked({ method: def.method, path, token: tokens.noScope, ...valid }); // 403 insufficient_scope
    if (def.path.includes(":")) await asked({ method: def.method, path: fill(def.path, 987654321), ...valid });
    if (def.query) await asked({ method: def.method, path: `${path}?per_page=0&page=x` });
    if (def.refuses) {
      const refusal = REFUSED[key(def)];
      if (!refusal) throw new Error(`contract test: no 422 scenario for ${key(def)}; add one to REFUSED`);
      await call(template, { method: def.method, path, ...(await refusal()) });
    }
    if (def.body) {
      await call(template, { method: def.method, path, body: INVALID_BODY });
      await call(template, { method: def.method, path, body: "{not json" });
      await call(template, { method: def.method, path, body: "{}", contentType: "text/plain" });
      await call(template, { method: def.method, path, body: `{"name": "${"x".repeat(MAX_BODY_BYTES)}"}` });
    }
    // 405: a method the path does not take, compared with what each operation of the path documents
    const taken = apiRoutes.filter((r) => r.path === def.path).map((r) => r.method);
    const other = ["PUT", "PATCH", "POST", "DELETE", "GET"].find((m) => !taken.includes(m as never))!;
    await call(template, { method: other, path }, [def.method]);
  }
  expect(problems.splice(0)).toEqual([]);
}, 120_000);

/** Spends the limited account's window (again, should a new one have opened since). */
async function exhaustRateLimit(): Promise<void> {
  for (let i = 0; i <= PRO_LIMIT; i++) if ((await s.api("GET", "/api/v1/monitors", undefined, { token: tokens.limited })).status === 429) return;
  throw new Error("the limited account was never refused");
}

test("over the rate limit, every /api/v1 operation answers 429 as documented", async () => {
  await exhaustRateLimit();
  for (const def of apiRoutes) {
    for (const method of def.method === "GET" ? ["GET", "HEAD"] : [def.method]) {
      const res = await call(openApiPath(def.path), { method, path: def.path.includes(":") ? fill(def.path) : def.path, token: tokens.limited });
      expect(`${method} ${def.path} ${res.status}`).toBe(`${method} ${def.path} 429`);
    }
  }
  expect(problems.splice(0)).toEqual([]);
});

// SQLite's page cap is what fills the store here; PostgreSQL's disk_full is read as the same full
// store (test/reliability/storage-errors.test.ts)
test.skipIf(TEST_ENGINE === "postgres")("a full store: a write answers 507 as documented", async () => {
  // SQLite's own page cap makes the store full for real: the next write that needs a page fails
  // with SQLITE_FULL, as on a full disk (test/reliability/disk-full.test.ts fills a real one)
  const sqlite = asSqlite(s.ctx.store, "this").sqlite;
  const { page_count } = sqlite.query("PRAGMA page_count").get() as { page_count: number };
  sqlite.query(`PRAGMA max_page_count = ${page_count}`).get();
  try {
    const res = await call("/api/v1/monitors", { method: "POST", path: "/api/v1/monitors", body: httpAttrs({ name: "too big", api_body: "x".repeat(65_536) }) });
    expect(res.status).toBe(507);
  } finally {
    sqlite.query("PRAGMA max_page_count = 4294967294").get();
  }
  expect(problems.splice(0)).toEqual([]);
});

// ---- outside /api/v1 ---------------------------------------------------------------------------

test("the ping endpoint, /healthz, /readyz and /metrics answer as documented", async () => {
  const ping = "/h/{token}";
  const signal = "/h/{token}/{action}";
  const big = "x".repeat(PING_BODY_LIMIT + 1);
  const answers: string[] = [];
  const result = async (template: string, c: Call) => {
    const res = await call(template, { token: null, ...c }, c.method === "PUT" ? ["GET", "POST"] : [c.method]);
    answers.push(`${c.method} ${c.path.replace(/\/h\/[^/]+/, "/h/<token>")} → ${res.status} ${res.text.startsWith('{"result"') ? JSON.parse(res.text).result : ""}`.trim());
  };
  await result(ping, { method: "GET", path: `/h/${hbTokens.hb}` });
  await result(ping, { method: "POST", path: `/h/${hbTokens.hb}`, body: "done", contentType: "text/plain" });
  await result(ping, { method: "GET", path: `/h/${hbTokens.hbPaused}` });
  await result(ping, { method: "POST", path: `/h/${hbTokens.hbStatusOk}`, body: { status: "failing" } });
  await result(ping, { method: "GET", path: "/h/no-monitor-has-this-token" });
  await result(ping, { method: "POST", path: "/h/no-monitor-has-this-token" });
  await result(ping, { method: "POST", path: `/h/${hbTokens.hb}`, body: big, contentType: "text/plain" });
  await result(ping, { method: "PUT", path: `/h/${hbTokens.hb}` });
  await result(signal, { method: "PUT", path: `/h/${hbTokens.hb}/start` });
  await result(signal, { method: "GET", path: `/h/${hbTokens.hb}/start` });
  await result(signal, { method: "POST", path: `/h/${hbTokens.hb}/fail`, body: "disk full", contentType: "text/plain" });
  await result(signal, { method: "GET", path: `/h/${hbTokens.hb}/0` });
  await result(signal, { method: "GET", path: `/h/${hbTokens.hb}/nope` });
  await result(signal, { method: "POST", path: `/h/${hbTokens.hb}/nope` });
  await result(signal, { method: "POST", path: `/h/${hbTokens.hb}/fail`, body: big, contentType: "text/plain" });
  for (let i = 0; i <= PING_LIMIT && (await fetch(`${s.url}/h/${hbTokens.hbLimited}`)).status !== 429; i++);
  await result(ping, { method: "GET", path: `/h/${hbTokens.hbLimited}` });
  await result(ping, { method: "POST", path: `/h/${hbTokens.hbLimited}` });
  await result(signal, { method: "GET", path: `/h/${hbTokens.hbLimited}/start` });
  await result(signal, { method: "POST", path: `/h/${hbTokens.hbLimited}/start` });
  expect(answers).toEqual([
    "GET /h/<token> → 200 accepted",
    "POST /h/<token> → 200 accepted",
    "GET /h/<token> → 200 ignored",
    "POST /h/<token> → 200 rejected",
    "GET /h/<token> → 404",
    "POST /h/<token> → 404",
    "POST /h/<token> → 413",
    "PUT /h/<token> → 405",
    "PUT /h/<token>/start → 405",
    "GET /h/<token>/start → 200 accepted",
    "POST /h/<token>/fail → 200 accepted",
    "GET /h/<token>/0 → 200 accepted",
    "GET /h/<token>/nope → 404",
    "POST /h/<token>/nope → 404",
    "POST /h/<token>/fail → 413",
    "GET /h/<token> → 429",
    "POST /h/<token> → 429",
    "GET /h/<token>/start → 429",
    "POST /h/<token>/start → 429",
  ]);
  // HEAD, which a GET's path takes too: the GET's statuses without a body (the paused monitor's
  // token, as the first one has used up its pings by now)
  const heads: string[] = [];
  for (const [template, path] of [[ping, `/h/${hbTokens.hbPaused}`], [ping, "/h/no-monitor-has-this-token"], [ping, `/h/${hbTokens.hbLimited}`], [signal, `/h/${hbTokens.hbPaused}/start`], [signal, `/h/${hbTokens.hbPaused}/nope`], [signal, `/h/${hbTokens.hbLimited}/start`]] as const) {
    heads.push(`HEAD ${template} ${(await call(template, { method: "HEAD", path, token: null })).status}`);
  }
  expect(heads).toEqual([`HEAD ${ping} 200`, `HEAD ${ping} 404`, `HEAD ${ping} 429`, `HEAD ${signal} 200`, `HEAD ${signal} 404`, `HEAD ${signal} 429`]);

  const both = async (template: string, c: Call) => {
    await call(template, c);
    await call(template, { ...c, method: "HEAD" });
  };
  await both("/healthz", { method: "GET", path: "/healthz", token: null });
  // a write refused for storage keeps /readyz at 503 for a while (the full-store case above): its 200 once that is over
  await waitFor(async () => (await fetch(`${s.url}/readyz`)).status === 200, { timeoutMs: 30_000 });
  await both("/readyz", { method: "GET", path: "/readyz", token: null });
  await both("/metrics", { method: "GET", path: "/metrics" });
  await both("/metrics", { method: "GET", path: "/metrics", token: null });
  await both("/metrics", { method: "GET", path: "/metrics", token: tokens.free });
  await both("/metrics", { method: "GET", path: "/metrics", token: tokens.noMetrics });
  // scrapes count in a window of their own: the account's spent API window leaves them be, until
  // they have spent theirs
  await exhaustRateLimit();
  await both("/metrics", { method: "GET", path: "/metrics", token: tokens.limited });
  for (let i = 0; i < PRO_LIMIT; i++) if ((await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${tokens.limited}` } })).status === 429) break;
  await both("/metrics", { method: "GET", path: "/metrics", token: tokens.limited });
  expect(problems.splice(0)).toEqual([]);
});

test("every status the document lists was reached (but for 500, 503 and 507)", () => {
  const missing: string[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === "parameters" || method === "servers") continue;
      for (const status of Object.keys(op.responses)) {
        if (NOT_REACHABLE_HERE.has(Number(status))) continue;
        if (!reached.has(`${method} ${template} ${status}`)) missing.push(`${method} ${template} ${status}`);
      }
    }
  }
  expect(missing).toEqual([]);
});
