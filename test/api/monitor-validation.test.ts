import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, httpAttrs, VALID_BY_TYPE } from "./fixtures.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const http = httpAttrs;
const tcp = (o: Record<string, unknown> = {}) => ({ ...VALID_BY_TYPE.tcp, ...o });
const dns = (o: Record<string, unknown> = {}) => ({ ...VALID_BY_TYPE.dns, ...o });
const ssl = (o: Record<string, unknown> = {}) => ({ ...VALID_BY_TYPE.ssl, ...o });
const ping = (o: Record<string, unknown> = {}) => ({ ...VALID_BY_TYPE.ping, ...o });
const hb = (o: Record<string, unknown> = {}) => ({ ...VALID_BY_TYPE.heartbeat, ...o });
const without = (o: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));

/** [what, POST body, exact details → a fragment of the one expected message per key] (docs/monitors.md). */
const BAD_CREATES: [string, Record<string, unknown>, Record<string, string>][] = [
  ["name missing", without(http(), "name"), { name: "is required" }],
  ["name empty", http({ name: "" }), { name: "1 to 200 characters" }],
  ["name blank", http({ name: "   " }), { name: "must not be blank" }],
  ["name too long", http({ name: "x".repeat(201) }), { name: "1 to 200 characters" }],
  ["monitor_type missing", without(http(), "monitor_type"), { monitor_type: "is required" }],
  ["monitor_type unknown", http({ monitor_type: "ftp" }), { monitor_type: "must be one of http, tcp, dns, ssl, heartbeat, ping, websocket, grpc, smtp, postgres, mysql, redis, docker, domain" }],
  ["interval_sec missing", without(http(), "interval_sec"), { interval_sec: "is required" }],
  ["interval_sec below 10", http({ interval_sec: 9 }), { interval_sec: "must be an integer from 10 to 86400" }],
  ["interval_sec above 86400", http({ interval_sec: 86401 }), { interval_sec: "must be an integer from 10 to 86400" }],
  ["interval_sec fractional", http({ interval_sec: 60.5 }), { interval_sec: "must be an integer from 10 to 86400" }],
  ["interval_sec as text", http({ interval_sec: "60" }), { interval_sec: "must be an integer from 10 to 86400" }],
  ["timeout_ms missing", without(http(), "timeout_ms"), { timeout_ms: "is required" }],
  ["timeout_ms below 100", http({ timeout_ms: 99 }), { timeout_ms: "must be an integer from 100 to 60000" }],
  ["timeout_ms above 60000", http({ interval_sec: 3600, timeout_ms: 60001 }), { timeout_ms: "must be an integer from 100 to 60000" }],
  ["timeout_ms not below interval", http({ interval_sec: 10, timeout_ms: 10000 }), { timeout_ms: "must be below interval_sec × 1000 (10000 ms" }],
  ["http target missing", without(http(), "target"), { target: "is required for http monitors" }],
  ["http target not a URL", http({ target: "example.com" }), { target: "absolute http:// or https:// URL" }],
  ["http target ftp", http({ target: "ftp://example.com/" }), { target: "absolute http:// or https:// URL" }],
  ["tcp target without port", tcp({ target: "db.example.com" }), { target: "needs a port" }],
  ["tcp target bad port", tcp({ target: "db.example.com:99999" }), { target: "1 to 65535" }],
  ["tcp port out of range", tcp({ target: "db.example.com", port: 0 }), { port: "must be an integer from 1 to 65535" }],
  ["dns target a URL", dns({ target: "https://example.com" }), { target: "must be a hostname" }],
  ["dns target an IP", dns({ target: "192.0.2.1" }), { target: "must be a hostname" }],
  ["ssl target http URL", ssl({ target: "http://example.com" }), { target: "host[:port] or an https:// URL" }],
  ["ping target with port", ping({ target: "example.com:80" }), { target: "hostname or an IP address" }],
  ["method unknown", http({ method: "FETCH" }), { method: "must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS" }],
  ["expected_http_codes garbage", http({ expected_http_codes: "200,abc" }), { expected_http_codes: '"abc" is not a code, range (200-299) or class (2xx)' }],
  ["expected_http_codes inverted range", http({ expected_http_codes: "299-200" }), { expected_http_codes: '"299-200" is not a code' }],
  ["assertion op unknown", http({ api_json_assertions_json: [{ path: "a", op: "eq", value: "1" }] }), { api_json_assertions_json: "rule 1: op must be one of equals, not_equals" }],
  ["assertion value missing", http({ api_json_assertions_json: [{ path: "a", op: "equals" }] }), { api_json_assertions_json: "rule 1: value is required for op equals" }],
  ["assertion value on is_null", http({ api_json_assertions_json: [{ path: "a", op: "is_null", value: "x" }] }), { api_json_assertions_json: "rule 1: value must be omitted for op is_null" }],
  ["assertion regex does not compile", http({ api_json_assertions_json: [{ path: "a", op: "regex", value: "(" }] }), { api_json_assertions_json: "rule 1: value is not a pattern Vigil can run (RE2 syntax; no backreferences or lookarounds): missing closing )" }],
  // patterns run on a linear-time engine (README "Regular expressions"): what it cannot run is refused by name
  ["assertion regex with a backreference", http({ api_json_assertions_json: [{ path: "a", op: "regex", value: "^ok$" }, { path: "b", op: "equals", value: "1" }, { path: "c", op: "regex", value: "(a)\\1" }] }), { api_json_assertions_json: "rule 3: value is not a pattern Vigil can run (RE2 syntax; no backreferences or lookarounds): invalid escape sequence: `\\1`" }],
  ["assertion regex with a lookahead", http({ api_json_assertions_json: [{ path: "a", op: "regex", value: "^(?=x)" }] }), { api_json_assertions_json: "rule 1: value is not a pattern Vigil can run (RE2 syntax; no backreferences or lookarounds): invalid or unsupported Perl syntax: `(?=`" }],
  // compiling that one would hold the serving thread for about a second: refused from its text
  ["assertion regex whose repeats are too large", http({ api_json_assertions_json: [{ path: "a", op: "regex", value: "(?:ab|cd){1000}".repeat(66) }] }), { api_json_assertions_json: "rule 1: value makes the patterns too large: its repeats make about 792000 RE2 instructions" }],
  ["assertion regexes too large together", http({ api_json_assertions_json: Array.from({ length: 21 }, () => ({ path: "a", op: "regex", value: "[a-z]{1000}" })) }), { api_json_assertions_json: "rule 20: value makes the patterns too large: with those before it they compile to 20040 RE2 instructions, more than 20000" }],
  ["assertion path missing", http({ api_json_assertions_json: [{ op: "is_not_null" }] }), { api_json_assertions_json: "rule 1: path must be a dot path" }],
  ["assertions not a list", http({ api_json_assertions_json: { path: "a" } }), { api_json_assertions_json: "must be a list of rules" }],
  ["bearer without its secret", http({ api_auth_type: "bearer" }), { api_auth_bearer_token: "is required when api_auth_type is bearer" }],
  ["basic without user and password", http({ api_auth_type: "basic" }), { api_auth_basic_pass: "is required when api_auth_type is basic", api_auth_basic_user: "is required when api_auth_type is basic" }],
  ["api_key without value and header", http({ api_auth_type: "api_key" }), { api_auth_api_key_value: "is required when api_auth_type is api_key", api_auth_api_key_header: "is required when api_auth_type is api_key" }],
  ["secret of another auth type", http({ api_auth_type: "none", api_auth_bearer_token: "tok-abc" }), { api_auth_bearer_token: "is used only when api_auth_type is bearer" }],
  ["api_auth_type unknown", http({ api_auth_type: "oauth" }), { api_auth_type: "must be one of none, bearer, basic, api_key" }],
  ["headers with a bad name", http({ api_headers_json: { "Bad Header": "x" } }), { api_headers_json: 'header name "Bad Header" is not a valid HTTP header name' }],
  ["headers with a non-string value", http({ api_headers_json: { "X-N": 1 } }), { api_headers_json: 'the value of header "X-N" must be a string' }],
  ["synthetic enabled without steps", http({ synthetic_enabled: true }), { synthetic_steps_json: "is required when synthetic_enabled is true" }],
  ["synthetic steps empty", http({ synthetic_steps_json: { steps: [] } }), { synthetic_steps_json: "steps must be a list of 1 to 20 steps" }],
  ["synthetic step without url", http({ synthetic_steps_json: { steps: [{ name: "a" }] } }), { synthetic_steps_json: "step 1: url is required" }],
  ["synthetic step bad method", http({ synthetic_steps_json: { steps: [{ url: "/a", method: "FETCH" }] } }), { synthetic_steps_json: "step 1: method must be one of" }],
  ["synthetic unknown step key", http({ synthetic_steps_json: { steps: [{ url: "/a", wait: 5 }] } }), { synthetic_steps_json: 'step 1: "wait" is not allowed here' }],
  ["synthetic variable used before extraction", http({ synthetic_steps_json: { steps: [{ url: "/a/{{id}}" }] } }), { synthetic_steps_json: "step 1: variable {{id}} is not extracted by an earlier step" }],
  ["synthetic extract from unknown source", http({ synthetic_steps_json: { steps: [{ url: "/a", extract: [{ name: "x", from: "cookie", path: "a" }] }] } }), { synthetic_steps_json: "step 1: extract 1: from must be one of json, header, regex" }],
  ["synthetic extract regex does not compile", http({ synthetic_steps_json: { steps: [{ url: "/a", extract: [{ name: "x", from: "regex", path: "(" }] }] } }), { synthetic_steps_json: "step 1: extract 1: path is not a pattern Vigil can run (RE2 syntax; no backreferences or lookarounds): missing closing )" }],
  ["synthetic extract regex with a lookbehind", http({ synthetic_steps_json: { steps: [{ url: "/a" }, { url: "/b", extract: [{ name: "x", from: "json", path: "id" }, { name: "y", from: "regex", path: "(?<=id=)(\\d+)" }] }] } }), { synthetic_steps_json: "step 2: extract 2: path is not a pattern Vigil can run (RE2 syntax; no backreferences or lookarounds): invalid named capture" }],
  ["synthetic step assertion regex with a backreference", http({ synthetic_steps_json: { steps: [{ url: "/a", assertions: [{ path: "a", op: "is_not_null" }, { path: "b", op: "regex", value: "(x)\\1" }] }] } }), { synthetic_steps_json: "step 1: assertions: rule 2: value is not a pattern Vigil can run" }],
  ["synthetic step assertion op", http({ synthetic_steps_json: { steps: [{ url: "/a", assertions: [{ path: "a", op: "like", value: "x" }] }] } }), { synthetic_steps_json: "step 1: assertions: rule 1: op must be one of" }],
  ["synthetic step codes", http({ synthetic_steps_json: { steps: [{ url: "/a", expected_http_codes: "2zz" }] } }), { synthetic_steps_json: 'step 1: expected_http_codes "2zz" is not a code' }],
  ["trace body detail unknown", http({ synthetic_trace_body_detail: "some" }), { synthetic_trace_body_detail: "must be one of none, truncated, full" }],
  ["editor profile unknown", http({ editor_ui_profile: "fancy" }), { editor_ui_profile: "must be one of http_endpoint, api_full, api" }],
  ["api_max_latency_ms zero", http({ api_max_latency_ms: 0 }), { api_max_latency_ms: "must be an integer from 1 to 60000" }],
  ["ssl_expiry_warn_days out of range", ssl({ ssl_expiry_warn_days: 400 }), { ssl_expiry_warn_days: "must be an integer from 1 to 365" }],
  ["tls_verify not boolean", http({ tls_verify: "yes" }), { tls_verify: "must be true or false" }],
  ["is_paused not boolean", http({ is_paused: 1 }), { is_paused: "must be true or false" }],
  ["group_id negative", http({ group_id: -1 }), { group_id: "must be a positive integer" }],
  ["regions empty", http({ regions: [] }), { regions: "non-empty list of distinct region names" }],
  ["regions bad name", http({ regions: ["eu west"] }), { regions: "non-empty list of distinct region names" }],
  ["notification_channel_ids not ints", http({ notification_channel_ids: ["a"] }), { notification_channel_ids: "distinct notification channel ids" }],
  ["notification_channel_ids unknown", http({ notification_channel_ids: [424242] }), { notification_channel_ids: "channel 424242 does not exist in this account" }],
  ["dns record type unknown", dns({ dns_record_type: "SRV" }), { dns_record_type: "must be one of A, AAAA, CNAME, MX, TXT, NS" }],
  ["dns resolver not an IP", dns({ dns_resolver: "dns.google" }), { dns_resolver: "must be an IP address with an optional port" }],
  ["heartbeat period zero", hb({ heartbeat_period_sec: 0 }), { heartbeat_period_sec: "must be an integer of at least 1" }],
  ["heartbeat grace negative", hb({ heartbeat_grace_sec: -1 }), { heartbeat_grace_sec: "must be an integer of at least 0" }],
  ["heartbeat policy unknown", hb({ heartbeat_payload_policy: "json" }), { heartbeat_payload_policy: "must be one of none, status_ok" }],
  ["heartbeat status key with an empty segment", hb({ heartbeat_payload_status_key: "a..b" }), { heartbeat_payload_status_key: "dot notation" }],
  ["heartbeat schedule not cron", hb({ heartbeat_schedule: "every day" }), { heartbeat_schedule: "is not a valid cron expression" }],
  ["heartbeat schedule that never fires again (30 February)", hb({ heartbeat_schedule: "0 0 30 2 *" }), { heartbeat_schedule: "never fires again" }],
  ["heartbeat timezone unknown", hb({ heartbeat_timezone: "Mars/Olympus" }), { heartbeat_timezone: "must be an IANA time zone name" }],
  ["unknown attribute", http({ colour: "red" }), { colour: "is not a monitor attribute" }],
  // PostgreSQL's text cannot hold U+0000, so neither engine stores one (docs/api-rules.md "Text")
  ["a NUL in the name", http({ name: "Shop\u0000Front" }), { name: "must not contain the NUL character (U+0000)" }],
  ["a NUL in a header name", http({ api_headers_json: { "X-A\u0000": "1" } }), { api_headers_json: "must not contain the NUL character" }],
  ["a NUL in an assertion value", http({ api_json_assertions_json: [{ path: "a", op: "equals", value: "\u0000" }] }), { api_json_assertions_json: "must not contain the NUL character" }],
  ["a NUL in a secret", http({ api_auth_type: "bearer", api_auth_bearer_token: "tok\u0000" }), { api_auth_bearer_token: "must not contain the NUL character" }],
  ["http attribute on tcp", tcp({ keyword: "ok" }), { keyword: "does not apply to tcp monitors; it is for http monitors" }],
  ["heartbeat attribute on http", http({ heartbeat_period_sec: 60 }), { heartbeat_period_sec: "does not apply to http monitors" }],
  ["secret on a tcp monitor", tcp({ api_auth_bearer_token: "tok" }), { api_auth_bearer_token: "does not apply to tcp monitors" }],
  ["dns attribute on http", http({ dns_record_type: "A" }), { dns_record_type: "does not apply to http monitors" }],
  ["port on ssl", ssl({ port: 443 }), { port: "does not apply to ssl monitors" }],
  ["tls_verify on tcp", tcp({ tls_verify: false }), { tls_verify: "does not apply to tcp monitors" }],
  ["an expected redirect while following", http({ expected_http_codes: "302" }), { expected_http_codes: "never the answer while follow_redirects is true", follow_redirects: "set follow_redirects to false" }],
  ["follow_redirects on tcp", tcp({ follow_redirects: false }), { follow_redirects: "does not apply to tcp monitors" }],
  ["a keyword on HEAD", http({ method: "HEAD", keyword: "ok" }), { keyword: "can never be met on a HEAD request: the answer to HEAD has no body; use GET, or remove keyword", method: "is HEAD, whose answer has no body, so keyword can never be met; use GET, or remove it" }],
  [
    "body text and JSON assertions on HEAD", http({ method: "HEAD", api_expected_body_contains: "ok", api_json_assertions_json: [{ path: "a", op: "is_not_null" }] }),
    { api_expected_body_contains: "can never be met on a HEAD request", api_json_assertions_json: "can never be met on a HEAD request", method: "so api_expected_body_contains and api_json_assertions_json can never be met; use GET, or remove them" },
  ],
  ["a synthetic HEAD step with assertions", http({ synthetic_steps_json: { steps: [{ url: "/a", method: "HEAD", assertions: [{ path: "a", op: "is_null" }] }] } }), { synthetic_steps_json: "step 1: assertions can never be met on a HEAD request (its answer has no body); use GET" }],
  ["a synthetic HEAD step extracting from the body", http({ synthetic_steps_json: { steps: [{ url: "/a", method: "HEAD", extract: [{ name: "x", from: "json", path: "a" }] }] } }), { synthetic_steps_json: "step 1: extractions from the body can never be met on a HEAD request" }],
];

describe("POST validation: one row per rule, details name exactly the bad attributes", () => {
  scenarios(() => s, [
    ...BAD_CREATES.map(([name, body, details]): Scenario => ({ name, method: "POST", path: "/api/v1/monitors", body, status: 422, code: "validation_error", details })),
    {
      name: "every bad attribute is reported at once", method: "POST", path: "/api/v1/monitors", body: { name: "", monitor_type: "http", target: "nope", interval_sec: 1, timeout_ms: 5, method: "GOT" },
      status: 422, details: ["interval_sec", "method", "name", "target", "timeout_ms"], contains: { error: { message: expect.stringContaining("interval_sec") } },
    },
  ]);
});

test("valid edge values are accepted", async () => {
  const ok: Record<string, unknown>[] = [
    http({ interval_sec: 10, timeout_ms: 9999 }),
    http({ interval_sec: 86400, timeout_ms: 60000, name: "x".repeat(200) }),
    http({ expected_http_codes: "200-299,301,4xx", follow_redirects: false }),
    http({ expected_http_codes: "200-299,304" }),
    http({ api_json_assertions_json: [{ path: "a", op: "regex", value: "^ok$" }, { path: "b", op: "is_not_null" }, { path: "c", op: "greater_than", value: "3" }] }),
    tcp({ target: "db.example.com", port: 5432 }),
    tcp({ target: "[::1]:5432" }),
    dns({ target: "example.com.", dns_resolver: "127.0.0.1:5353", dns_record_type: "MX", dns_expected_answer: "10 mail.example.com" }),
    ssl({ target: "https://example.com:8443/" }),
    ssl({ target: "example.com" }),
    ping({ target: "::1" }),
    hb({ target: "nightly backup", heartbeat_period_sec: 1, heartbeat_grace_sec: 0, heartbeat_schedule: "0 3 * * 1-5", heartbeat_timezone: "Europe/Paris", heartbeat_payload_policy: "status_ok", heartbeat_payload_status_key: "result.state" }),
    http({ api_auth_type: "api_key", api_auth_api_key_header: "X-Api-Key", api_auth_api_key_value: "k-1" }),
    // what a HEAD answer has: its status, headers and content type
    http({ method: "HEAD", api_expected_content_type: "text/html", expected_http_codes: "200,204" }),
    http({ synthetic_steps_json: { steps: [{ url: "/a", method: "HEAD", extract: [{ name: "etag", from: "header", path: "etag" }] }, { url: "/b/{{etag}}" }] } }),
  ];
  for (const body of ok) {
    const res = await s.api("POST", "/api/v1/monitors", body);
    expect({ body, status: res.status, details: res.json.error?.details }).toEqual({ body, status: 201, details: undefined });
  }
});

describe("PATCH validation", () => {
  test("the same rules apply to the attributes sent", async () => {
    const id = await createMonitor(s);
    const res = await s.api("PATCH", `/api/v1/monitors/${id}`, { interval_sec: 5, heartbeat_grace_sec: 1, colour: "red" });
    expect(res.status).toBe(422);
    expect(Object.keys(res.json.error.details).sort()).toEqual(["colour", "heartbeat_grace_sec", "interval_sec"]);
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.interval_sec).toBe(60);
  });

  test("switching api_auth_type needs the new secret unless one is stored; PATCH without secrets keeps them", async () => {
    const id = await createMonitor(s, http({ api_auth_type: "bearer", api_auth_bearer_token: "tok-1" }));
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { name: "renamed" })).status).toBe(200);
    const sw = await s.api("PATCH", `/api/v1/monitors/${id}`, { api_auth_type: "basic", api_auth_basic_user: "u" });
    expect(sw.status).toBe(422);
    expect(Object.keys(sw.json.error.details)).toEqual(["api_auth_basic_pass"]);
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { api_auth_type: "basic", api_auth_basic_user: "u", api_auth_basic_pass: "p" })).status).toBe(200);
    // the bearer token the new auth type no longer uses was dropped
    const row = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(row.api_auth_bearer_token_enc).toBeNull();
    expect(row.api_auth_basic_pass_enc).not.toBeNull();
    const clear = await s.api("PATCH", `/api/v1/monitors/${id}`, { api_auth_basic_pass: null });
    expect(clear.status).toBe(422);
    expect(clear.json.error.details.api_auth_basic_pass[0]).toContain("is required when api_auth_type is basic");
  });

  test("a method turned to HEAD on a monitor with a keyword is refused, and the keyword may go with it", async () => {
    const id = await createMonitor(s, http({ keyword: "welcome" }));
    const bad = await s.api("PATCH", `/api/v1/monitors/${id}`, { method: "HEAD" });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.json.error.details).sort()).toEqual(["keyword", "method"]);
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.method).toBe("GET");
    const ok = await s.api("PATCH", `/api/v1/monitors/${id}`, { method: "HEAD", keyword: null });
    expect(ok.status).toBe(200);
    expect(ok.json.data.attributes).toMatchObject({ method: "HEAD", keyword: null });
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { keyword: "welcome" })).status).toBe(422);
  });

  test("a tcp port can move from the target to the port attribute", async () => {
    const id = await createMonitor(s, tcp({ target: "127.0.0.1:5432" }));
    const bad = await s.api("PATCH", `/api/v1/monitors/${id}`, { target: "127.0.0.1" });
    expect(bad.json.error.details.target[0]).toContain("needs a port");
    const ok = await s.api("PATCH", `/api/v1/monitors/${id}`, { target: "127.0.0.1", port: 5432 });
    expect(ok.status).toBe(200);
    expect(ok.json.data.attributes).toMatchObject({ target: "127.0.0.1", port: 5432 });
  });
});
