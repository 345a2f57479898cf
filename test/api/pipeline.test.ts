import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DetailsCollector } from "../../src/http/errors.ts";
import type { RouteDef } from "../../src/api/route.ts";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox, type AppContext } from "../../src/context.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { revokeApiToken } from "../../src/store/api-tokens.ts";
import { openStore } from "../../src/store/database.ts";
import { buildHttpApp, listen, type RunningServer } from "../../src/server.ts";
import { makeAccount, tempDir } from "../helpers/server.ts";

// The pipeline is tested with routes made for it, so each row of decisions.md "HTTP behaviour"
// is reached on purpose; the resource tests exercise the same pipeline through the real routes.
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

beforeAll(async () => {
  const dir = tempDir();
  const config = loadConfig(["--data", dir, "--host", "127.0.0.1", "--port", "0", "--rate-limit", "pro=5,enterprise=1000"], {});
  const store = openStore(dir);
  ctx = buildContext({ config, store, log: createLogger("debug", "vigil", (l) => logLines.push(l)), clock: systemClock, secrets: loadSecretBox(dir, null) });
  server = listen(ctx, buildHttpApp(ctx, { routes: testRoutes }));
  pro = await makeAccount(ctx, "pro-a", "pro");
  pro2 = await makeAccount(ctx, "pro-b", "pro");
  ent = await makeAccount(ctx, "ent", "enterprise");
  free = await makeAccount(ctx, "free", "free", ["monitors:read"]);
  readOnly = await makeAccount(ctx, "ro", "enterprise", ["monitors:read"]);
});
afterAll(async () => {
  await server.stop();
  await ctx.store.close();
});

async function call(method: string, path: string, o: { token?: string; auth?: string; body?: string; type?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (o.auth !== undefined) headers.authorization = o.auth;
  else if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined && o.type !== null) headers["content-type"] = o.type ?? "application/json";
  const res = await fetch(server.url + path, { method, headers, body: o.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : null };
}

describe("decisions.md HTTP behaviour table", () => {
  test("no Authorization header: 401 unauthorized with WWW-Authenticate", async () => {
    const r = await call("GET", "/api/v1/things");
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe("unauthorized");
    expect(r.headers.get("www-authenticate")).toStartWith("Bearer");
  });

  test.each(["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "bearer", "Token abc", "Bearer a b"])("malformed header %p: 401 unauthorized", async (auth) => {
    const r = await call("GET", "/api/v1/things", { auth });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe("unauthorized");
  });

  test("unknown token: 401 invalid_token", async () => {
    const r = await call("GET", "/api/v1/things", { token: "vgl_doesnotexist" });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe("invalid_token");
    const r2 = await call("GET", "/api/v1/things", { token: "not-even-our-format" });
    expect(r2.json.error.code).toBe("invalid_token");
  });

  test("revoked token: 401 invalid_token at once", async () => {
    const t = await makeAccount(ctx, "to-revoke", "enterprise");
    expect((await call("GET", "/api/v1/things", { token: t.token })).status).toBe(200);
    const row = await ctx.db.selectFrom("api_tokens").select("id").where("account_id", "=", t.accountId).executeTakeFirstOrThrow();
    await revokeApiToken(ctx.db, row.id, Date.now());
    const r = await call("GET", "/api/v1/things", { token: t.token });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe("invalid_token");
  });

  test("free plan: 403 plan_feature_disabled, checked before scope", async () => {
    const r = await call("GET", "/api/v1/things", { token: free.token });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe("plan_feature_disabled");
    // the free token lacks status_pages:read, yet the plan answer comes first
    const r2 = await call("GET", "/api/v1/pages", { token: free.token });
    expect(r2.json.error.code).toBe("plan_feature_disabled");
  });

  test("missing scope: 403 insufficient_scope naming the scope", async () => {
    const r = await call("GET", "/api/v1/pages", { token: readOnly.token });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe("insufficient_scope");
    expect(r.json.error.message).toContain("status_pages:read");
  });

  test("unknown path: 404 not_found, inside and outside /api/v1", async () => {
    const r = await call("GET", "/api/v1/nothing-here", { token: ent.token });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("not_found");
    const r2 = await call("GET", "/no/such/page");
    expect(r2.status).toBe(404);
    expect(r2.json.error.code).toBe("not_found");
  });

  test("known path, wrong method: 405 with Allow", async () => {
    const r = await call("PUT", "/api/v1/things", { token: ent.token, body: "{}" });
    expect(r.status).toBe(405);
    expect(r.json.error.code).toBe("method_not_allowed");
    expect(r.headers.get("allow")!.split(", ").sort()).toEqual(["GET", "POST"]);
    const r2 = await call("GET", "/api/v1/things/7", { token: ent.token });
    expect(r2.status).toBe(405);
    expect(r2.headers.get("allow")).toBe("DELETE");
  });

  test("write without JSON content type: 415; vnd.api+json and charset accepted", async () => {
    for (const type of [null, "text/plain", "application/x-www-form-urlencoded"]) {
      const r = await call("POST", "/api/v1/things", { token: ent.token, body: '{"name":"a"}', type });
      expect(r.status).toBe(415);
      expect(r.json.error.code).toBe("unsupported_media_type");
    }
    for (const type of ["application/json; charset=utf-8", "application/vnd.api+json", "Application/JSON"]) {
      const r = await call("POST", "/api/v1/things", { token: ent.token, body: '{"name":"a"}', type });
      expect(r.status).toBe(201);
    }
  });

  test.each([["{not json"], [""], ["[1,2]"], ["42"], ['"text"'], ["null"]])("body %p: 400 invalid_json", async (body) => {
    const r = await call("POST", "/api/v1/things", { token: ent.token, body });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("invalid_json");
  });

  test("a malformed body is never echoed in the error (it may hold a secret)", async () => {
    const r = await call("POST", "/api/v1/things", { token: ent.token, body: '{"api_auth_bearer_token": SuperSecret123}' });
    expect(r.status).toBe(400);
    expect(r.text).not.toContain("SuperSecret123");
  });

  test("invalid UTF-8 body: 400 invalid_json", async () => {
    const res = await fetch(server.url + "/api/v1/things", {
      method: "POST",
      headers: { authorization: `Bearer ${ent.token}`, "content-type": "application/json" },
      body: new Uint8Array([0x7b, 0x22, 0x6e, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe("invalid_json");
  });

  test("body over 1 MiB: 413 payload_too_large", async () => {
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024 + 10) });
    const r = await call("POST", "/api/v1/things", { token: ent.token, body: big });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe("payload_too_large");
  });

  test("validation failure: 422 validation_error with details per attribute", async () => {
    const r = await call("POST", "/api/v1/things", { token: ent.token, body: '{"other":1}' });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("validation_error");
    expect(r.json.error.details).toEqual({ name: ["is required"] });
  });

  test("unexpected failure: 500 internal_error with no internals in the body, logged with the request id", async () => {
    const r = await call("GET", "/api/v1/boom", { token: ent.token });
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe("internal_error");
    expect(r.text).not.toContain("/etc/passwd");
    expect(r.text).not.toContain("at ");
    const line = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "unexpected failure" && l.request_id === r.json.meta.request_id);
    expect(line).toBeDefined();
  });
});

describe("request ids and meta", () => {
  test("X-Request-Id on every response equals meta.request_id; rate_limit once the token is known", async () => {
    const anon = await call("GET", "/api/v1/things");
    expect(anon.headers.get("x-request-id")).toBe(anon.json.meta.request_id);
    expect(anon.json.meta.rate_limit).toBeUndefined();
    const ok = await call("GET", "/api/v1/things", { token: ent.token });
    expect(ok.headers.get("x-request-id")).toBe(ok.json.meta.request_id);
    expect(ok.json.meta.rate_limit).toEqual({
      limit: 1000,
      remaining: Number(ok.headers.get("x-ratelimit-remaining")),
      reset: Number(ok.headers.get("x-ratelimit-reset")),
    });
  });

  test("a plain client X-Request-Id is kept; an odd one is replaced", async () => {
    const res = await fetch(server.url + "/api/v1/things", { headers: { "x-request-id": "trace-123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-123");
    const res2 = await fetch(server.url + "/api/v1/things", { headers: { "x-request-id": "bad id with spaces" } });
    expect(res2.headers.get("x-request-id")).not.toBe("bad id with spaces");
  });

  test("each request is logged as one JSON line with id, method, path, status and ms", async () => {
    const r = await call("GET", "/api/v1/things", { token: ent.token });
    const line = logLines.map((l) => JSON.parse(l)).find((l) => l.request_id === r.json.meta.request_id && l.msg === "request");
    expect(line).toMatchObject({ component: "api", method: "GET", path: "/api/v1/things", status: 200 });
    expect(typeof line.ms).toBe("number");
  });
});

describe("rate limits", () => {
  test("pro: the limit+1th request in a window is 429 with Retry-After; headers count down; accounts are separate", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call("GET", "/api/v1/things", { token: pro.token });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("5");
      seen.push(Number(r.headers.get("x-ratelimit-remaining")));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    const over = await call("GET", "/api/v1/things", { token: pro.token });
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe("rate_limited");
    const retry = Number(over.headers.get("retry-after"));
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
    const reset = Number(over.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    // another pro account has its own window
    expect((await call("GET", "/api/v1/things", { token: pro2.token })).status).toBe(200);
  });

  test("rate limit is checked before scope: an exhausted account gets 429 even on a forbidden endpoint", async () => {
    const acct = await makeAccount(ctx, "pro-c", "pro", ["monitors:read"]);
    for (let i = 0; i < 5; i++) await call("GET", "/api/v1/things", { token: acct.token });
    const r = await call("GET", "/api/v1/pages", { token: acct.token });
    expect(r.status).toBe(429);
  });

  test("enterprise uses its own limit from --rate-limit", async () => {
    const acct = await makeAccount(ctx, "ent-b", "enterprise");
    const r = await call("GET", "/api/v1/things", { token: acct.token });
    expect(r.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("999");
  });
});

describe("order of checks", () => {
  test("scope is checked before the body is read: 403 before 415/400", async () => {
    const r = await call("POST", "/api/v1/things", { token: readOnly.token, body: "{bad", type: "text/plain" });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe("insufficient_scope");
  });

  test("authentication comes before 404/405", async () => {
    expect((await call("GET", "/api/v1/unknown")).status).toBe(401);
    expect((await call("PUT", "/api/v1/things")).status).toBe(401);
  });
});
