/** HTTP probe against a real loopback server: codes, redirects, auth, body checks, errors. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { PROBES } from "../../src/probes/index.ts";
import { MAX_REDIRECTS, type JsonAssertion } from "../../src/domain/monitor.ts";
import { closedPort, startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

const JSON_DOC = { status: "ok", count: 5, ratio: 0.5, items: [{ id: 7, name: "alpha" }, { id: 8, name: "beta" }], nothing: null, tags: ["x", "y"] };
let t: HttpTarget;

beforeAll(async () => {
  t = await startHttpTarget({
    "/ok": () => new Response("hello world", { headers: { "content-type": "text/plain; charset=utf-8" } }),
    "/created": () => new Response("made", { status: 201 }),
    "/unavailable": () => new Response("down for maintenance", { status: 503 }),
    "/json": () => Response.json(JSON_DOC),
    "/echo": async (req) => Response.json({ method: req.method, headers: Object.fromEntries(req.headers), body: await req.text() }),
    "/redirect": () => new Response(null, { status: 302, headers: { location: "/ok" } }),
    "/post-redirect": () => new Response(null, { status: 302, headers: { location: "/echo" } }),
    "/keep-method": () => new Response(null, { status: 307, headers: { location: "/echo" } }),
    "/loop": () => new Response(null, { status: 302, headers: { location: "/loop" } }),
    "/slow": async () => { await Bun.sleep(300); return new Response("finally"); },
    "/hang": async () => { await Bun.sleep(5000); return new Response("too late"); },
    "/gzip": () => new Response(gzipSync("compressed keyword inside"), { headers: { "content-encoding": "gzip" } }),
    "/reflect-auth": (req) => new Response(`you sent ${req.headers.get("authorization")} and ${req.headers.get("x-api-key")}`, { status: 401 }),
  });
});
afterAll(() => t.close());

const run = (overrides: Parameters<typeof monitor>[0], ctx = context()) => PROBES.http(monitor({ monitor_type: "http", ...overrides }), ctx);

describe("status codes", () => {
  test("200 is up with latency, code and resolved ip", async () => {
    const r = await run({ target: `${t.url}/ok` });
    expect(r.status).toBe("up");
    expect(r.http_code).toBe(200);
    expect(r.resolved_ip).toBe("127.0.0.1");
    expect(r.latency_ms).toBeGreaterThanOrEqual(1);
    expect(r.error_code).toBeNull();
    expect(r.ssl_not_after).toBeNull();
  });

  test.each([
    ["/created", null, "up"],
    ["/created", "200,201,204", "up"],
    ["/created", "200,204", "down"],
    ["/unavailable", "500-599", "up"],
    ["/unavailable", "5xx", "up"],
    ["/unavailable", "2xx,3xx", "down"],
    ["/ok", "201-299", "down"],
  ])("%s with expected %p is %s", async (path, codes, status) => {
    const r = await run({ target: `${t.url}${path}`, expected_http_codes: codes });
    expect(r.status).toBe(status as "up" | "down");
    expect(r.error_code).toBe(status === "down" ? "http_error" : null);
  });

  test("a 503 against the default names what was expected and what came", async () => {
    const r = await run({ target: `${t.url}/unavailable` });
    expect(r).toMatchObject({ status: "down", error_code: "http_error", http_code: 503, error_message: "expected status 200-299, got 503" });
  });

  test("port overrides the URL's port", async () => {
    const r = await run({ target: `http://127.0.0.1:1/ok`, port: t.port });
    expect(r.status).toBe("up");
  });
});

describe("redirects", () => {
  test("followed to the final page", async () => {
    const r = await run({ target: `${t.url}/redirect`, keyword: "hello" });
    expect(r).toMatchObject({ status: "up", http_code: 200 });
  });

  test("a loop ends as too_many_redirects", async () => {
    const r = await run({ target: `${t.url}/loop` });
    expect(r.status).toBe("down");
    expect(r.error_code).toBe("too_many_redirects");
    expect(t.requests.filter((q) => q.path === "/loop").length).toBe(MAX_REDIRECTS + 1);
  });

  test("302 after POST becomes GET, 307 keeps POST and body", async () => {
    const a = await run({ target: `${t.url}/post-redirect`, method: "POST", api_body: "payload", api_json_assertions_json: [{ path: "method", op: "equals", value: "GET" }] });
    expect(a.status).toBe("up");
    const b = await run({ target: `${t.url}/keep-method`, method: "POST", api_body: "payload", api_json_assertions_json: [{ path: "method", op: "equals", value: "POST" }, { path: "body", op: "equals", value: "payload" }] });
    expect(b.status).toBe("up");
  });
});

describe("request building", () => {
  test("method, custom headers and body reach the server", async () => {
    const r = await run({
      target: `${t.url}/echo`, method: "PUT", api_headers_json: { "X-Custom": "custom-1" }, api_body: '{"a":1}',
      api_json_assertions_json: [
        { path: "method", op: "equals", value: "PUT" },
        { path: "headers.x-custom", op: "equals", value: "custom-1" },
        { path: "headers.content-type", op: "equals", value: "application/json" },
        { path: "body", op: "equals", value: '{"a":1}' },
      ],
    });
    expect(r.error_message).toBeNull();
    expect(r.status).toBe("up");
  });

  test("bearer, basic and api_key auth produce the right header", async () => {
    // the echoed answer is judged with the secrets masked: the secret sits exactly where *** is
    const bearer = await run({ target: `${t.url}/echo`, api_auth_type: "bearer", api_auth_bearer_token: "tok-abc",
      api_json_assertions_json: [{ path: "headers.authorization", op: "equals", value: "Bearer ***" }] });
    expect(bearer.status).toBe("up");
    const basic = await run({ target: `${t.url}/echo`, api_auth_type: "basic", api_auth_basic_user: "ann", api_auth_basic_pass: "pw:1",
      api_json_assertions_json: [{ path: "headers.authorization", op: "equals", value: "Basic ***" }] });
    expect(basic.status).toBe("up");
    const key = await run({ target: `${t.url}/echo`, api_auth_type: "api_key", api_auth_api_key_header: "X-Api-Key", api_auth_api_key_value: "k-999",
      api_json_assertions_json: [{ path: "headers.x-api-key", op: "equals", value: "***" }] });
    expect(key.status).toBe("up");
    // and the headers reached the target as sent
    expect(t.requests.filter((r) => r.path === "/echo").slice(-3).map((r) => r.headers.authorization ?? r.headers["x-api-key"])).toEqual(["Bearer tok-abc", `Basic ${btoa("ann:pw:1")}`, "k-999"]);
  });

  test("secrets never appear in error messages", async () => {
    const secret = "very-secret-token-123";
    const r = await run({ target: `${t.url}/reflect-auth`, api_auth_type: "bearer", api_auth_bearer_token: secret, expected_http_codes: "401", api_expected_body_contains: "nope" });
    expect(r.error_code).toBe("body_mismatch");
    expect(r.error_message).toContain("Bearer ***");
    expect(JSON.stringify(r)).not.toContain(secret);
    const k = await run({ target: `${t.url}/reflect-auth`, api_auth_type: "api_key", api_auth_api_key_header: "x-api-key", api_auth_api_key_value: "key-value-77", expected_http_codes: "401", api_expected_body_contains: "nope" });
    expect(k.error_message).toContain("***");
    expect(JSON.stringify(k)).not.toContain("key-value-77");
  });
});

describe("body checks", () => {
  test("keyword present is up, missing is keyword_missing", async () => {
    expect((await run({ target: `${t.url}/ok`, keyword: "world" })).status).toBe("up");
    const r = await run({ target: `${t.url}/ok`, keyword: "planet" });
    expect(r).toMatchObject({ status: "down", error_code: "keyword_missing", http_code: 200 });
    expect(r.error_message).toContain('"planet"');
  });

  test("gzip bodies are decoded before the keyword search", async () => {
    expect((await run({ target: `${t.url}/gzip`, keyword: "keyword inside" })).status).toBe("up");
  });

  test("content type matches on the media type, ignoring parameters", async () => {
    expect((await run({ target: `${t.url}/ok`, api_expected_content_type: "text/plain" })).status).toBe("up");
    expect((await run({ target: `${t.url}/json`, api_expected_content_type: "Application/JSON; charset=latin1" })).status).toBe("up");
    const r = await run({ target: `${t.url}/ok`, api_expected_content_type: "application/json" });
    expect(r).toMatchObject({ status: "down", error_code: "content_type_mismatch", error_message: "expected content type application/json, got text/plain" });
  });

  test("expected body text", async () => {
    expect((await run({ target: `${t.url}/ok`, api_expected_body_contains: "lo wo" })).status).toBe("up");
    const r = await run({ target: `${t.url}/ok`, api_expected_body_contains: "goodbye" });
    expect(r).toMatchObject({ status: "down", error_code: "body_mismatch" });
    expect(r.error_message).toContain('"hello world"');
  });
});

describe("JSON assertions", () => {
  const cases: [JsonAssertion, JsonAssertion][] = [
    [{ path: "status", op: "equals", value: "ok" }, { path: "status", op: "equals", value: "fail" }],
    [{ path: "count", op: "equals", value: "5.0" }, { path: "count", op: "equals", value: "6" }],
    [{ path: "status", op: "not_equals", value: "fail" }, { path: "status", op: "not_equals", value: "ok" }],
    [{ path: "items.1.name", op: "contains", value: "et" }, { path: "items.1.name", op: "contains", value: "zz" }],
    [{ path: "tags", op: "contains", value: "y" }, { path: "tags", op: "contains", value: "z" }],
    [{ path: "tags", op: "not_contains", value: "z" }, { path: "tags", op: "not_contains", value: "x" }],
    [{ path: "count", op: "greater_than", value: "4" }, { path: "count", op: "greater_than", value: "5" }],
    [{ path: "ratio", op: "less_than", value: "1" }, { path: "ratio", op: "less_than", value: "0.5" }],
    [{ path: "nothing", op: "is_null" }, { path: "count", op: "is_null" }],
    [{ path: "missing.deep", op: "is_null" }, { path: "items", op: "is_null" }],
    [{ path: "items[0].id", op: "is_not_null" }, { path: "nothing", op: "is_not_null" }],
    [{ path: "items[0].name", op: "regex", value: "^al.+a$" }, { path: "items[0].name", op: "regex", value: "^beta$" }],
    [{ path: "items.0.id", op: "equals", value: "7" }, { path: "items.5.id", op: "equals", value: "7" }],
  ];
  test.each(cases)("%p passes and its twin fails", async (pass, fail) => {
    const up = await run({ target: `${t.url}/json`, api_json_assertions_json: [pass] });
    expect(up.error_message).toBeNull();
    expect(up.status).toBe("up");
    const down = await run({ target: `${t.url}/json`, api_json_assertions_json: [pass, fail] });
    expect(down.status).toBe("down");
    expect(down.error_code).toBe("assertion_failed");
    expect(down.error_message).toStartWith(`expected ${fail.path} `);
  });

  test("the message says what was expected and what was seen", async () => {
    const r = await run({ target: `${t.url}/json`, api_json_assertions_json: [{ path: "items[1].id", op: "equals", value: "9" }] });
    expect(r.error_message).toBe('expected items[1].id equals "9", got 8');
  });

  test("patterns are RE2: inline flags work; one stored before RE2 refused it fails the check naming its rule", async () => {
    expect(await run({ target: `${t.url}/json`, api_json_assertions_json: [{ path: "items[0].name", op: "regex", value: "(?i)^ALPHA$" }] })).toMatchObject({ status: "up" });
    // a backreference is a 422 on write; a monitor stored with one by an older version is judged down, with the reason
    const r = await run({ target: `${t.url}/json`, api_json_assertions_json: [{ path: "status", op: "equals", value: "ok" }, { path: "status", op: "regex", value: "^(o)\\1" }] });
    expect(r).toMatchObject({ status: "down", error_code: "assertion_failed" });
    expect(r.error_message).toStartWith("rule 2: the pattern ");
    expect(r.error_message).toEndWith(" cannot be run (RE2 syntax; no backreferences or lookarounds): invalid escape sequence: `\\1`; edit the monitor");
  });

  test("a non-JSON body fails assertions", async () => {
    const r = await run({ target: `${t.url}/ok`, api_json_assertions_json: [{ path: "a", op: "is_null" }] });
    expect(r.error_code).toBe("assertion_failed");
  });
});

describe("latency and failures", () => {
  test("slower than api_max_latency_ms is degraded with a reason", async () => {
    const r = await run({ target: `${t.url}/slow`, api_max_latency_ms: 1 });
    expect(r.status).toBe("degraded");
    expect(r.latency_ms).toBeGreaterThanOrEqual(300);
    expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 1 ms`);
    const fast = await run({ target: `${t.url}/ok`, api_max_latency_ms: 60_000 });
    expect(fast.status).toBe("up");
  });

  test("no answer within timeout_ms is connection_timeout", async () => {
    const started = performance.now();
    const r = await run({ target: `${t.url}/hang`, timeout_ms: 200 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout" });
    expect(r.error_message).toContain("200 ms");
    expect(performance.now() - started).toBeLessThan(4000);
  });

  test("a closed port is connection_refused", async () => {
    const r = await run({ target: `http://127.0.0.1:${await closedPort()}/` });
    expect(r).toMatchObject({ status: "down", error_code: "connection_refused" });
  });

  test("an unresolvable host is dns_error", async () => {
    const r = await run({ target: "http://no-such-host.invalid/" });
    expect(r).toMatchObject({ status: "down", error_code: "dns_error" });
    expect(r.error_message).toContain("no-such-host.invalid");
  });

  test("blockPrivateTargets refuses loopback targets", async () => {
    const r = await run({ target: `${t.url}/ok` }, context({ blockPrivateTargets: true }));
    expect(r).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
  });

  test("an aborted context ends the check without throwing", async () => {
    const ac = new AbortController();
    const p = run({ target: `${t.url}/hang`, timeout_ms: 10_000 }, context({ signal: ac.signal }));
    setTimeout(() => ac.abort(), 50);
    const r = await p;
    expect(r.status).toBe("down");
    expect(r.error_code).toBe("internal_error");
    expect(r.error_message).toContain("cancelled");
  });

  test("an invalid target is a result, not an exception", async () => {
    const r = await run({ target: "not a url" });
    expect(r).toMatchObject({ status: "down", error_code: "http_error" });
  });
});
