import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AppEvents } from "../../src/context.ts";
import { insertCheck } from "../../src/store/checks.ts";
import { insertIncident } from "../../src/store/incidents.ts";
import { insertMonitorEvent } from "../../src/store/monitor-events.ts";
import { failed } from "../../src/domain/check-result.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, createStatusPage, httpAttrs, ISO_MS, VALID_BY_TYPE } from "./fixtures.ts";

let s: TestServer;
let other: { accountId: number; token: string };
let defaultAccountId: number;
const changes: AppEvents["monitor.changed"][] = [];

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
  s.ctx.events.on("monitor.changed", (e) => changes.push(e));
  defaultAccountId = (await s.ctx.db.selectFrom("accounts").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
});
afterAll(() => s.stop());

const COMMON = ["name", "external_id", "monitor_type", "target", "method", "interval_sec", "timeout_ms", "group_id", "is_paused", "is_in_maintenance", "last_status", "last_checked_at", "next_run_at", "created_at", "updated_at", "synthetic_trace_body_detail", "regions", "notification_channel_ids",
  "depends_on_ids", "alert_repeat_minutes", "escalation_channel_ids", "escalate_after_minutes"];
const HTTP_ONLY = ["editor_ui_profile", "expected_http_codes", "keyword", "api_expected_content_type", "api_expected_body_contains", "synthetic_enabled", "api_json_assertions_json", "api_headers_json", "api_body", "synthetic_steps_json", "api_auth_type", "api_auth_basic_user", "api_auth_api_key_header"];
const HEARTBEAT_ONLY = ["heartbeat_token", "heartbeat_period_sec", "heartbeat_grace_sec", "heartbeat_notify_on_late", "heartbeat_payload_policy", "heartbeat_payload_status_key", "heartbeat_last_ping_at", "heartbeat_schedule", "heartbeat_timezone"];
const DNS_ONLY = ["dns_record_type", "dns_resolver", "dns_expected_answer"];
const SECRETS = ["api_auth_bearer_token", "api_auth_basic_pass", "api_auth_api_key_value"];

describe("create", () => {
  test("a flat body gives 201 with the single-record envelope and the defaults filled in", async () => {
    const res = await s.api("POST", "/api/v1/monitors", { name: "API", monitor_type: "http", target: "http://127.0.0.1:9/x", interval_sec: 60, timeout_ms: 5000, is_paused: true });
    expect(res.status).toBe(201);
    expect(Object.keys(res.json).sort()).toEqual(["data", "meta"]);
    expect(res.json.data.type).toBe("monitor");
    expect(res.json.data.id).toMatch(/^\d+$/);
    expect(typeof res.json.meta.request_id).toBe("string");
    expect(res.json.meta.request_id).toBe(res.headers.get("x-request-id"));
    expect(res.json.meta.rate_limit.limit).toBe(300);
    const a = res.json.data.attributes;
    expect(a).toMatchObject({
      method: "GET", api_auth_type: "none", synthetic_trace_body_detail: "truncated", tls_verify: true, synthetic_enabled: false,
      last_status: "unknown", last_checked_at: null, next_run_at: null, group_id: null, is_in_maintenance: false, regions: null,
      expected_http_codes: null, ssl_expiry_warn_days: null, notification_channel_ids: [],
      depends_on_ids: [], alert_repeat_minutes: null, escalation_channel_ids: [], escalate_after_minutes: null,
    });
    expect(a.created_at).toMatch(ISO_MS);
    expect(a.updated_at).toBe(a.created_at);
  });

  test("a JSON:API body {data: {type, attributes}} is accepted", async () => {
    const res = await s.api("POST", "/api/v1/monitors", { data: { type: "monitor", attributes: httpAttrs({ name: "jsonapi" }) } }, { headers: { "content-type": "application/vnd.api+json" } });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes.name).toBe("jsonapi");
  });

  test.each([
    [{ data: { type: "incident", attributes: httpAttrs() } }, "data.type"],
    [{ data: { type: "monitor" } }, "data.attributes"],
    [{ data: { type: "monitor", attributes: httpAttrs() }, name: "x" }, "name"],
    [{ data: "x" }, "data"],
  ])("a malformed JSON:API body is a 422 naming the member (%#)", async (body, key) => {
    const res = await s.api("POST", "/api/v1/monitors", body);
    expect(res.status).toBe(422);
    expect(Object.keys(res.json.error.details)).toContain(key);
  });

  // docs/monitors.md "Types and attributes": common fields always; the others only for their types.
  const fieldTable: [string, string[], string[]][] = [
    ["http", [...HTTP_ONLY, "port", "tls_verify", "ssl_expiry_warn_days", "ssl_expiry_last_not_after", "ssl_last_issuer", "api_max_latency_ms"], [...HEARTBEAT_ONLY, ...DNS_ONLY]],
    ["tcp", ["port", "api_max_latency_ms"], [...HTTP_ONLY, ...HEARTBEAT_ONLY, ...DNS_ONLY, "tls_verify", "ssl_expiry_warn_days", "ssl_last_issuer"]],
    ["dns", [...DNS_ONLY, "api_max_latency_ms"], [...HTTP_ONLY, ...HEARTBEAT_ONLY, "port", "tls_verify"]],
    ["ssl", ["ssl_expiry_warn_days", "ssl_expiry_last_not_after", "ssl_last_issuer", "tls_verify", "api_max_latency_ms"], [...HTTP_ONLY, ...HEARTBEAT_ONLY, ...DNS_ONLY, "port"]],
    ["ping", ["api_max_latency_ms"], [...HTTP_ONLY, ...HEARTBEAT_ONLY, ...DNS_ONLY, "port", "tls_verify", "ssl_expiry_warn_days"]],
    ["heartbeat", HEARTBEAT_ONLY, [...HTTP_ONLY, ...DNS_ONLY, "port", "tls_verify", "ssl_expiry_warn_days", "api_max_latency_ms"]],
  ];
  test.each(fieldTable)("a %s monitor returns the common fields, its own, and no others", async (type, present, absent) => {
    const res = await s.api("POST", "/api/v1/monitors", VALID_BY_TYPE[type]);
    expect(res.status).toBe(201);
    const keys = Object.keys(res.json.data.attributes);
    for (const k of [...COMMON, ...present]) expect(keys).toContain(k);
    for (const k of [...absent, ...SECRETS]) expect(keys).not.toContain(k);
    const got = await s.api("GET", `/api/v1/monitors/${res.json.data.id}`);
    expect(Object.keys(got.json.data.attributes).sort()).toEqual([...keys].sort());
  });

  test("type defaults: dns record A, ssl tls_verify true, heartbeat policy none and timezone UTC", async () => {
    const dns = await s.api("POST", "/api/v1/monitors", VALID_BY_TYPE.dns);
    expect(dns.json.data.attributes).toMatchObject({ dns_record_type: "A", dns_resolver: null, dns_expected_answer: null });
    const ssl = await s.api("POST", "/api/v1/monitors", VALID_BY_TYPE.ssl);
    expect(ssl.json.data.attributes.tls_verify).toBe(true);
    const hb = await s.api("POST", "/api/v1/monitors", VALID_BY_TYPE.heartbeat);
    expect(hb.json.data.attributes).toMatchObject({ heartbeat_payload_policy: "none", heartbeat_timezone: "UTC", heartbeat_notify_on_late: false, heartbeat_period_sec: null, heartbeat_grace_sec: null, heartbeat_payload_status_key: null, heartbeat_last_ping_at: null, target: null });
    const tz = await s.api("POST", "/api/v1/monitors", { ...VALID_BY_TYPE.heartbeat, heartbeat_timezone: "Asia/Tokyo" });
    expect(tz.json.data.attributes.heartbeat_timezone).toBe("Asia/Tokyo");
    const back = await s.api("PATCH", `/api/v1/monitors/${tz.json.data.id}`, { heartbeat_timezone: null });
    expect(back.json.data.attributes.heartbeat_timezone).toBe("UTC");
  });

  test("heartbeat tokens are generated: URL-safe, at least 128 random bits, distinct", async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await s.api("POST", "/api/v1/monitors", { ...VALID_BY_TYPE.heartbeat, name: `hb${i}` });
      const t = res.json.data.attributes.heartbeat_token as string;
      expect(t).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(t, "base64url").length).toBeGreaterThanOrEqual(16);
      tokens.add(t);
    }
    expect(tokens.size).toBe(3);
  });

  test("every accepted attribute is stored and returned", async () => {
    const group = await s.api("POST", "/api/v1/groups", { name: "full's group" });
    const attrs = httpAttrs({
      name: "full", method: "POST", group_id: Number(group.json.data.id), tags: ["env:prod", "team/web"], is_in_maintenance: true, synthetic_trace_body_detail: "full", regions: ["eu-west", "us_east"],
      editor_ui_profile: "api_full", port: 8080, expected_http_codes: "200,3xx", follow_redirects: false, keyword: "ok", api_expected_content_type: "application/json",
      api_expected_body_contains: "healthy", api_max_latency_ms: 800, api_json_assertions_json: [{ path: "status", op: "equals", value: "ok" }, { path: "error", op: "is_null" }],
      api_headers_json: { "X-Trace": "1" }, api_body: '{"ping":true}', api_auth_type: "basic", api_auth_basic_user: "bob", api_auth_basic_pass: "pw-123456",
      tls_verify: false, ssl_expiry_warn_days: 30, synthetic_enabled: true, synthetic_steps_json: { steps: [{ name: "login", method: "POST", url: "/login", extract: [{ name: "tok", from: "json", path: "token" }] }, { url: "/me", headers: { Authorization: "Bearer {{tok}}" }, assertions: [{ path: "id", op: "is_not_null" }] }] },
    });
    const res = await s.api("POST", "/api/v1/monitors", attrs);
    expect(res.status).toBe(201);
    const { api_auth_basic_pass, ...visible } = attrs;
    expect(res.json.data.attributes).toMatchObject(visible);
    expect(res.json.data.attributes.api_auth_basic_pass).toBeUndefined();
  });
});

describe("read", () => {
  test("GET one, and 404 for an unknown, malformed or foreign id", async () => {
    const id = await createMonitor(s, httpAttrs({ name: "readable" }));
    const res = await s.api("GET", `/api/v1/monitors/${id}`);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: String(id), type: "monitor", attributes: { name: "readable" } });
    for (const path of ["/api/v1/monitors/999999", "/api/v1/monitors/abc", "/api/v1/monitors/0"]) {
      const miss = await s.api("GET", path);
      expect(miss.status).toBe(404);
      expect(miss.json.error.code).toBe("not_found");
    }
    expect((await s.api("GET", `/api/v1/monitors/${id}`, undefined, { token: other.token })).status).toBe(404);
  });
});

describe("update", () => {
  test("PATCH changes only the attributes sent", async () => {
    const id = await createMonitor(s, httpAttrs({ name: "before", keyword: "alive", interval_sec: 120 }));
    const res = await s.api("PATCH", `/api/v1/monitors/${id}`, { name: "after" });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ name: "after", keyword: "alive", interval_sec: 120, target: httpAttrs().target });
  });

  test("read-only attributes are ignored, so a client can send back what it read", async () => {
    const id = await createMonitor(s, VALID_BY_TYPE.heartbeat);
    const read = await s.api("GET", `/api/v1/monitors/${id}`);
    const sentBack = { ...read.json.data.attributes, id: "123", name: "renamed", last_status: "down", heartbeat_token: "forged", created_at: "2000-01-01T00:00:00.000Z", heartbeat_last_ping_at: "2000-01-01T00:00:00.000Z" };
    const res = await s.api("PATCH", `/api/v1/monitors/${id}`, sentBack);
    expect(res.status).toBe(200);
    expect(res.json.data.id).toBe(String(id));
    expect(res.json.data.attributes).toMatchObject({ name: "renamed", last_status: "unknown", heartbeat_token: read.json.data.attributes.heartbeat_token, created_at: read.json.data.attributes.created_at, heartbeat_last_ping_at: null });
  });

  test("monitor_type cannot change (422); sending the same type is fine", async () => {
    const id = await createMonitor(s);
    const bad = await s.api("PATCH", `/api/v1/monitors/${id}`, { monitor_type: "tcp", target: "127.0.0.1:1" });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details.monitor_type[0]).toContain("cannot be changed");
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.monitor_type).toBe("http");
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { monitor_type: "http" })).status).toBe(200);
  });

  test("PATCH takes a JSON:API body; its id must match the path", async () => {
    const id = await createMonitor(s);
    const ok = await s.api("PATCH", `/api/v1/monitors/${id}`, { data: { type: "monitor", id: String(id), attributes: { name: "via-jsonapi" } } });
    expect(ok.status).toBe(200);
    expect(ok.json.data.attributes.name).toBe("via-jsonapi");
    const bad = await s.api("PATCH", `/api/v1/monitors/${id}`, { data: { type: "monitor", id: "999", attributes: { name: "x" } } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details["data.id"]).toBeDefined();
  });

  test("a PATCH is validated against the stored values (timeout below the new interval)", async () => {
    const id = await createMonitor(s, httpAttrs({ interval_sec: 60, timeout_ms: 30000 }));
    const res = await s.api("PATCH", `/api/v1/monitors/${id}`, { interval_sec: 20 });
    expect(res.status).toBe(422);
    expect(res.json.error.details.timeout_ms[0]).toContain("20000 ms");
  });

  test("pausing clears next_run_at; resuming restarts the state at unknown", async () => {
    const id = await createMonitor(s, httpAttrs({ is_paused: true }));
    await s.ctx.db.updateTable("monitors").set({ last_status: "down" }).where("id", "=", id).execute();
    const resumed = await s.api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false, interval_sec: 3600, timeout_ms: 1000 });
    expect(resumed.status).toBe(200);
    expect(resumed.json.data.attributes).toMatchObject({ is_paused: false, last_status: "unknown" });
    await s.ctx.db.updateTable("monitors").set({ next_run_at: Date.now() + 3_600_000 }).where("id", "=", id).execute();
    const paused = await s.api("PATCH", `/api/v1/monitors/${id}`, { is_paused: true });
    expect(paused.json.data.attributes).toMatchObject({ is_paused: true, next_run_at: null });
  });

  test("notification_channel_ids: own channels only, defaults linked on create, replaced on PATCH", async () => {
    const now = Date.now();
    const mk = (accountId: number, name: string, dflt: number) =>
      s.ctx.db.insertInto("notification_channels").values({ account_id: accountId, name, channel_type: "webhook", is_enabled: 1, default_for_new_monitors: dflt, config_json: "{}", secrets_enc: null, created_at: now, updated_at: now }).returning("id").executeTakeFirstOrThrow();
    const mine = await mk(defaultAccountId, "ops", 0);
    const dflt = await mk(defaultAccountId, "oncall", 1);
    const foreign = await mk(other.accountId, "theirs", 0);
    const a = await s.api("POST", "/api/v1/monitors", httpAttrs());
    expect(a.json.data.attributes.notification_channel_ids).toEqual([dflt.id]);
    const b = await s.api("POST", "/api/v1/monitors", httpAttrs({ notification_channel_ids: [mine.id] }));
    expect(b.json.data.attributes.notification_channel_ids).toEqual([mine.id]);
    const bad = await s.api("POST", "/api/v1/monitors", httpAttrs({ notification_channel_ids: [mine.id, foreign.id] }));
    expect(bad.status).toBe(422);
    expect(bad.json.error.details.notification_channel_ids[0]).toBe(`channel ${foreign.id} does not exist in this account`);
    const cleared = await s.api("PATCH", `/api/v1/monitors/${b.json.data.id}`, { notification_channel_ids: [] });
    expect(cleared.json.data.attributes.notification_channel_ids).toEqual([]);
    const got = await s.api("GET", `/api/v1/monitors/${a.json.data.id}`);
    expect(got.json.data.attributes.notification_channel_ids).toEqual([dflt.id]);
  });
});

describe("delete", () => {
  test("answers the documented shape, then the monitor is gone", async () => {
    const id = await createMonitor(s);
    const res = await s.api("DELETE", `/api/v1/monitors/${id}`);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ id: String(id), type: "monitor", attributes: { deleted: true } });
    expect(typeof res.json.meta.request_id).toBe("string");
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).status).toBe(404);
    expect((await s.api("DELETE", `/api/v1/monitors/${id}`)).status).toBe(404);
  });

  test("cascades to checks, incidents, events, region states and status-page links", async () => {
    const id = await createMonitor(s);
    const keep = await createMonitor(s, httpAttrs({ name: "kept" }));
    const { db } = s.ctx;
    const now = Date.now();
    const checkId = await insertCheck(db, id, "local", failed(now, "http_error", "HTTP 500", { http_code: 500 }));
    await insertIncident(db, { accountId: defaultAccountId, monitorId: id, startedAt: now, rootCheckId: checkId, errorCode: "http_error", errorMessage: "HTTP 500", httpCode: 500, failureCount: 1 });
    await insertMonitorEvent(db, { monitorId: id, kind: "transition", at: now, fromState: "up", toState: "down" });
    await db.insertInto("monitor_region_states").values({ monitor_id: id, region: "local", last_status: "down", last_checked_at: now, consecutive_down: 1, last_check_id: checkId }).execute();
    const pageId = await createStatusPage(s, { name: "cascade page", monitor_ids: [keep, id] });

    expect((await s.api("DELETE", `/api/v1/monitors/${id}`)).status).toBe(200);
    const count = async (table: "checks" | "incidents" | "monitor_events" | "monitor_region_states" | "status_page_monitors") =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as("n")).where("monitor_id", "=", id).executeTakeFirstOrThrow()).n);
    for (const table of ["checks", "incidents", "monitor_events", "monitor_region_states", "status_page_monitors"] as const) expect(await count(table)).toBe(0);
    const page = await s.api("GET", `/api/v1/status-pages/${pageId}`);
    expect(page.json.data.attributes.monitor_ids).toEqual([keep]);
  });
});

test("every monitor write announces monitor.changed with the monitor and account", async () => {
  changes.length = 0;
  const id = await createMonitor(s);
  await s.api("PATCH", `/api/v1/monitors/${id}`, { name: "x" });
  await s.api("DELETE", `/api/v1/monitors/${id}`);
  expect(changes).toEqual([
    { monitorId: id, accountId: defaultAccountId },
    { monitorId: id, accountId: defaultAccountId },
    { monitorId: id, accountId: defaultAccountId, deleted: true },
  ]);
  // refused writes announce nothing
  await s.api("PATCH", `/api/v1/monitors/${id}`, { name: "y" });
  await s.api("POST", "/api/v1/monitors", { name: "bad" });
  expect(changes.length).toBe(3);
});
