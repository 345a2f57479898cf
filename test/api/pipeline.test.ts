import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DetailsCollector } from "../../src/http/errors.ts";
import type { RouteDef } from "../../src/api/route.ts";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox, type AppContext } from "../../src/context.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { revokeApiToken } from "../../src/store/api-tokens.ts";
import { openTestStore } from "../helpers/engine.ts";
import { buildHttpApp, listen, type RunningServer } from "../../src/server.ts";
import { scenarios, type ApiClient, type Scenario } from "../helpers/scenarios.ts";
import { apiClient, makeAccount, tempDir } from "../helpers/server.ts";

// The pipeline is tested with routes made for it, so each row of docs/api-rules.md "Statuses and
// error codes" is reached on purpose; the resource tests exercise the same pipeline through the real
// routes.
const ANY = Type.Object({});
const testRoutes: RouteDef[] = [
  { method: "GET", path: "/api/v1/things", scope: "monitors:read", summary: "list", tag: "test", response: ANY, handler: () => ({ body: { data: [] } }) },
  {
    method: "POST", path: "/api/v1/things", scope: "monitors:write", summary: "create", tag: "test", response: ANY, body: {} as never, successStatus: 201,
    handler: (req) => {
      const errors = new DetailsCollector();
      if (typeof req.body!.name !== "string") errors.add("name", "is required");
      errors.throwIfAny();
      return { body: { data: { id: "1", type: "monitor", attributes: req.body } } };
    },
  },
  { method: "DELETE", path: "/api/v1/things/:id", scope: "monitors:write", summary: "delete", tag: "test", response: ANY, handler: (req) => ({ body: { data: { id: req.params.id } } }) },
  { method: "GET", path: "/api/v1/pages", scope: "status_pages:read", summary: "pages", tag: "test", response: ANY, handler: () => ({ body: { data: [] } }) },
  { method: "GET", path: "/api/v1/boom", scope: "monitors:read", summary: "boom", tag: "test", response: ANY, handler: () => { throw new Error("secret internals /etc/passwd"); } },
];

let ctx: AppContext;
let server: RunningServer;
let logLines: string[] = [];
let pro: { token: string; accountId: number };
let pro2: { token: string; accountId: number };
let ent: { token: string; accountId: number };
let free: { token: string };
let readOnly: { token: string };
/** requests with the enterprise token unless told otherwise */
let client: ApiClient;

beforeAll(async () => {
  const dir = tempDir();
  const config = loadConfig(["--data", dir, "--host", "127.0.0.1", "--port", "0", "--rate-limit", "pro=5,enterprise=1000"], {});
  const store = await openTestStore(dir);
  ctx = buildContext({ config, store, log: createLogger("debug", "vigil", (l) => logLines.push(l)), clock: systemClock, secrets: loadSecretBox(dir, null) });
  server = listen(ctx, buildHttpApp(ctx, { routes: testRoutes }));
  pro = await makeAccount(ctx, "pro-a", "pro");
  pro2 = await makeAccount(ctx, "pro-b", "pro");
  ent = await makeAccount(ctx, "ent", "enterprise");
  free = await makeAccount(ctx, "free", "free", ["monitors:read"]);
  readOnly = await makeAccount(ctx, "ro", "enterprise", ["monitors:read"]);
  client = { api: apiClient(server.url, ent.token) };
});
afterAll(async () => {
  await server.stop();
  await ctx.store.close();
});

const THINGS = "/api/v1/things";
const BIG = JSON.stringify({ name: "x".repeat(1024 * 1024 + 10) });
const get = (path: string, token: string | null) => client.api("GET", path, undefined, { token });

describe("the statuses and error codes of docs/api-rules.md", () => {
  scenarios(() => client, [
    { name: "no Authorization header: 401 unauthorized with WWW-Authenticate", method: "GET", path: THINGS, token: null, status: 401, code: "unauthorized", check: (r) => expect(r.headers.get("www-authenticate")).toStartWith("Bearer") },
    ...["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "bearer", "Token abc", "Bearer a b"].map((auth): Scenario => ({ name: `malformed header ${JSON.stringify(auth)}: 401 unauthorized`, method: "GET", path: THINGS, token: null, headers: { authorization: auth }, status: 401, code: "unauthorized" })),
    { name: "unknown token: 401 invalid_token", method: "GET", path: THINGS, token: "vgl_doesnotexist", status: 401, code: "invalid_token" },
    { name: "a token not in our format: 401 invalid_token", method: "GET", path: THINGS, token: "not-even-our-format", status: 401, code: "invalid_token" },
    { name: "free plan: 403 plan_feature_disabled", method: "GET", path: THINGS, token: () => free.token, status: 403, code: "plan_feature_disabled" },
    // the free token lacks status_pages:read, yet the plan answer comes first
    { name: "free plan is checked before scope", method: "GET", path: "/api/v1/pages", token: () => free.token, status: 403, code: "plan_feature_disabled" },
    { name: "missing scope: 403 insufficient_scope naming the scope", method: "GET", path: "/api/v1/pages", token: () => readOnly.token, status: 403, code: "insufficient_scope", contains: { error: { message: expect.stringContaining("status_pages:read") } } },
    { name: "unknown path inside /api/v1: 404 not_found", method: "GET", path: "/api/v1/nothing-here", status: 404, code: "not_found" },
    { name: "unknown path outside /api/v1: 404 not_found", method: "GET", path: "/no/such/page", token: null, status: 404, code: "not_found" },
    { name: "known path, wrong method: 405 with Allow", method: "PUT", path: THINGS, body: "{}", status: 405, code: "method_not_allowed", check: (r) => expect(r.headers.get("allow")!.split(", ").sort()).toEqual(["GET", "HEAD", "POST"]) },
    { name: "a path with DELETE only: 405 with Allow: DELETE", method: "GET", path: `${THINGS}/7`, status: 405, check: (r) => expect(r.headers.get("allow")).toBe("DELETE") },
    ...["text/plain", "application/x-www-form-urlencoded"].map((type): Scenario => ({ name: `write as ${type}: 415`, method: "POST", path: THINGS, body: '{"name":"a"}', headers: { "content-type": type }, status: 415, code: "unsupported_media_type" })),
    ...["application/json; charset=utf-8", "application/vnd.api+json", "Application/JSON"].map((type): Scenario => ({ name: `write as ${type}: accepted`, method: "POST", path: THINGS, body: '{"name":"a"}', headers: { "content-type": type }, status: 201 })),
    ...["{not json", "", "[1,2]", "42", '"text"', "null"].map((body): Scenario => ({ name: `body ${JSON.stringify(body)}: 400 invalid_json`, method: "POST", path: THINGS, body, status: 400, code: "invalid_json" })),
    { name: "a malformed body is never echoed in the error (it may hold a secret)", method: "POST", path: THINGS, body: '{"api_auth_bearer_token": SuperSecret123}', status: 400, notContains: ["SuperSecret123"] },
    { name: "body over 1 MiB: 413 payload_too_large", method: "POST", path: THINGS, body: BIG, status: 413, code: "payload_too_large" },
    { name: "validation failure: 422 validation_error with details per attribute", method: "POST", path: THINGS, body: '{"other":1}', status: 422, code: "validation_error", check: (r) => expect(r.json.error.details).toEqual({ name: ["is required"] }) },
    {
      name: "unexpected failure: 500 internal_error with no internals in the body, logged with the request id", method: "GET", path: "/api/v1/boom", status: 500, code: "internal_error", notContains: ["/etc/passwd", "at "],
      check: (r) => expect(logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "unexpected failure" && l.request_id === r.json.meta.request_id)).toBeDefined(),
    },
  ]);

  test("revoked token: 401 invalid_token at once", async () => {
    const t = await makeAccount(ctx, "to-revoke", "enterprise");
    expect((await get(THINGS, t.token)).status).toBe(200);
    const row = await ctx.db.selectFrom("api_tokens").select("id").where("account_id", "=", t.accountId).executeTakeFirstOrThrow();
    await revokeApiToken(ctx.db, row.id, Date.now());
    const r = await get(THINGS, t.token);
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe("invalid_token");
  });

  // fetch labels a string body text/plain when no content type is given
  test("write without a content type: 415", async () => {
    const res = await fetch(server.url + THINGS, { method: "POST", headers: { authorization: `Bearer ${ent.token}` }, body: '{"name":"a"}' });
    expect(res.status).toBe(415);
    expect((await res.json()).error.code).toBe("unsupported_media_type");
  });

  test("invalid UTF-8 body: 400 invalid_json", async () => {
    const res = await fetch(server.url + THINGS, {
      method: "POST",
      headers: { authorization: `Bearer ${ent.token}`, "content-type": "application/json" },
      body: new Uint8Array([0x7b, 0x22, 0x6e, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe("invalid_json");
  });
});

describe("request ids and meta", () => {
  test("X-Request-Id on every response equals meta.request_id; rate_limit once the token is known", async () => {
    const anon = await get(THINGS, null);
    expect(anon.headers.get("x-request-id")).toBe(anon.json.meta.request_id);
    expect(anon.json.meta.rate_limit).toBeUndefined();
    const ok = await get(THINGS, ent.token);
    expect(ok.headers.get("x-request-id")).toBe(ok.json.meta.request_id);
    expect(ok.json.meta.rate_limit).toEqual({
      limit: 1000,
      remaining: Number(ok.headers.get("x-ratelimit-remaining")),
      reset: Number(ok.headers.get("x-ratelimit-reset")),
    });
  });

  test("a plain client X-Request-Id is kept; an odd one is replaced", async () => {
    const res = await fetch(server.url + THINGS, { headers: { "x-request-id": "trace-123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-123");
    const res2 = await fetch(server.url + THINGS, { headers: { "x-request-id": "bad id with spaces" } });
    expect(res2.headers.get("x-request-id")).not.toBe("bad id with spaces");
  });

  test("each request is logged as one JSON line with id, method, path, status and ms", async () => {
    const r = await get(THINGS, ent.token);
    const line = logLines.map((l) => JSON.parse(l)).find((l) => l.request_id === r.json.meta.request_id && l.msg === "request");
    expect(line).toMatchObject({ component: "api", method: "GET", path: "/api/v1/things", status: 200 });
    expect(typeof line.ms).toBe("number");
  });
});

describe("rate limits", () => {
  test("pro: the limit+1th request in a window is 429 with Retry-After; headers count down; accounts are separate", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await get(THINGS, pro.token);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("5");
      seen.push(Number(r.headers.get("x-ratelimit-remaining")));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    const over = await get(THINGS, pro.token);
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe("rate_limited");
    const retry = Number(over.headers.get("retry-after"));
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
    const reset = Number(over.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    // another pro account has its own window
    expect((await get(THINGS, pro2.token)).status).toBe(200);
  });

  test("rate limit is checked before scope: an exhausted account gets 429 even on a forbidden endpoint", async () => {
    const acct = await makeAccount(ctx, "pro-c", "pro", ["monitors:read"]);
    for (let i = 0; i < 5; i++) await get(THINGS, acct.token);
    const r = await get("/api/v1/pages", acct.token);
    expect(r.status).toBe(429);
  });

  test("enterprise uses its own limit from --rate-limit", async () => {
    const acct = await makeAccount(ctx, "ent-b", "enterprise");
    const r = await get(THINGS, acct.token);
    expect(r.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("999");
  });
});

describe("order of checks", () => {
  scenarios(() => client, [
    { name: "scope is checked before the body is read: 403 before 415/400", method: "POST", path: THINGS, token: () => readOnly.token, body: "{bad", headers: { "content-type": "text/plain" }, status: 403, code: "insufficient_scope" },
    { name: "authentication comes before 404", method: "GET", path: "/api/v1/unknown", token: null, status: 401 },
    { name: "authentication comes before 405", method: "PUT", path: THINGS, token: null, status: 401 },
  ]);
});
