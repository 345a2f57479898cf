/**
 * /api/v1/notification-channels on a real server: CRUD, envelopes, validation, write-only secrets
 * (absent from responses and logs), tenancy, scopes, the test endpoint and default channels.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { issueApiToken } from "../../src/auth/api-tokens.ts";
import { scenarios } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, type ApiResult, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "./helpers.ts";
import { PRIVATE_REPLY } from "../../src/notify/http-post.ts";

let s: TestServer;
let r: Receiver;
const BASE = "/api/v1/notification-channels";
const SECRETS = [
  "whsec-Q1w2E3r4T5y6", "987654:TG-token-Zx9", "gotify-A1b2C3", "po-token-K8l9", "po-user-M7n6", "smtp-pass-P0o9",
  "syt_matrix_Tok3n_Aa1", "pd-routing-R0ut1ngK3y", "og-api-key-5c3f9e", "ha-long-lived-T0k3n", "tgram://apprise-B0tT0ken/4242",
];

beforeAll(async () => {
  s = await startTestServer();
  r = startReceiver();
});
afterAll(async () => {
  await s.stop();
  await r.stop();
});

const create = (body: Record<string, unknown>) => s.api("POST", BASE, body);

describe("notification channels API", () => {
  test("a channel's URL is shown without its path and query, which hold a webhook's credential; the masked value written back keeps it", async () => {
    const url = `${r.url}/services/T000/B000/XXXXsecretpartXXXX?token=query-credential`;
    const id = (await create({ name: "masked", channel_type: "slack", url })).json.data.id;
    // a read-only token of the same account reads the channel, never the credential in its URL
    const { token: reader } = await issueApiToken(s.ctx.db, { accountId: 1, scopes: ["monitors:read"], label: "reader", now: Date.now() });
    for (const token of [undefined, reader]) {
      for (const res of [await s.api("GET", `${BASE}/${id}`, undefined, { token }), await s.api("GET", BASE, undefined, { token })]) {
        expect(res.status).toBe(200);
        expect(res.text).not.toContain("XXXXsecretpartXXXX");
        expect(res.text).not.toContain("query-credential");
      }
    }
    expect((await s.api("GET", `${BASE}/${id}`, undefined, { token: reader })).json.data.attributes.url).toBe(`${r.url}/***`);
    // a client that sends back what it read keeps the stored URL: the test send still reaches it
    const back = await s.api("PATCH", `${BASE}/${id}`, { url: `${r.url}/***`, name: "masked 2" });
    expect(back.status).toBe(200);
    const sent = await s.api("POST", `${BASE}/${id}/test`);
    expect(sent.json.data.attributes.ok).toBe(true);
    expect(r.requests.at(-1)!.path).toBe("/services/T000/B000/XXXXsecretpartXXXX");
    expect(r.requests.at(-1)!.search.get("token")).toBe("query-credential");
    // a real new URL replaces it
    expect((await s.api("PATCH", `${BASE}/${id}`, { url: `${r.url}/other` })).status).toBe(200);
    await s.api("POST", `${BASE}/${id}/test`);
    expect(r.requests.at(-1)!.path).toBe("/other");
  });

  test("create, read, list, update and delete with the monitor envelopes", async () => {
    const c = await create({ name: "  Ops hook ", channel_type: "webhook", url: `${r.url}/hook`, secret: SECRETS[0] });
    expect(c.status).toBe(201);
    const id = c.json.data.id;
    expect(c.json.data).toEqual({
      id,
      type: "notification_channel",
      attributes: {
        name: "Ops hook",
        channel_type: "webhook",
        is_enabled: true,
        default_for_new_monitors: false,
        external_id: null,
        url: `${r.url}/***`,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.stringMatching(/Z$/),
      },
    });
    expect(c.json.meta.request_id).toBe(c.headers.get("x-request-id"));

    const got = await s.api("GET", `${BASE}/${id}`);
    expect(got.status).toBe(200);
    expect(got.json.data).toEqual(c.json.data);

    const patched = await s.api("PATCH", `${BASE}/${id}`, { data: { type: "notification_channel", id, attributes: { is_enabled: false, name: "Renamed", created_at: "ignored" } } });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes.is_enabled).toBe(false);
    expect(patched.json.data.attributes.name).toBe("Renamed");
    expect(patched.json.data.attributes.url).toBe(`${r.url}/***`);

    const del = await s.api("DELETE", `${BASE}/${id}`);
    expect(del.status).toBe(200);
    expect(del.json.data).toEqual({ id, type: "notification_channel", attributes: { deleted: true } });
    expect((await s.api("GET", `${BASE}/${id}`)).status).toBe(404);
    expect((await s.api("DELETE", `${BASE}/${id}`)).status).toBe(404);
  });

  test("every channel type is accepted with its own attributes; write-only secrets never come back", async () => {
    const bodies: Record<string, unknown>[] = [
      { name: "slack", channel_type: "slack", url: "https://hooks.slack.com/services/T/B/X" },
      { name: "discord", channel_type: "discord", url: "https://discord.com/api/webhooks/1/x" },
      { name: "teams", channel_type: "teams", url: "https://example.webhook.office.com/x" },
      { name: "tg", channel_type: "telegram", telegram_chat_id: -1001234, telegram_bot_token: SECRETS[1] },
      { name: "ntfy", channel_type: "ntfy", url: "https://ntfy.sh/vigil" },
      { name: "gotify", channel_type: "gotify", url: "https://gotify.example.com", gotify_token: SECRETS[2] },
      { name: "po", channel_type: "pushover", pushover_token: SECRETS[3], pushover_user: SECRETS[4] },
      { name: "mail", channel_type: "email", email_to: "ops@example.com", smtp_host: "smtp.example.com", smtp_user: "vigil", smtp_pass: SECRETS[5], smtp_from: "vigil@example.com" },
      { name: "matrix", channel_type: "matrix", url: "https://matrix.example.org", matrix_room_id: "!OpsRoom:example.org", matrix_access_token: SECRETS[6] },
      { name: "mattermost", channel_type: "mattermost", url: "https://chat.example.com/hooks/abc" },
      { name: "rocketchat", channel_type: "rocketchat", url: "https://rocket.example.com/hooks/a/b" },
      { name: "google chat", channel_type: "google_chat", url: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t" },
      { name: "pd", channel_type: "pagerduty", pagerduty_routing_key: SECRETS[7] },
      { name: "og", channel_type: "opsgenie", url: "https://api.eu.opsgenie.com", opsgenie_api_key: SECRETS[8] },
      { name: "ha", channel_type: "homeassistant", url: "https://ha.example.com:8123", homeassistant_token: SECRETS[9], homeassistant_service: "notify.mobile_app_pixel" },
      { name: "signal", channel_type: "signal", url: "https://signal-api.example.com", signal_number: "+4915100000001", signal_recipients: [" +4917600000002 ", "group.ZmFtaWx5"] },
      { name: "apprise", channel_type: "apprise", apprise_urls: `${SECRETS[10]}\n\n  mailto://ops:pw@example.com  \n` },
    ];
    for (const b of bodies) {
      const res = await create(b);
      expect({ type: b.channel_type, status: res.status }).toEqual({ type: b.channel_type, status: 201 });
    }
    const tg = (await s.api("GET", `${BASE}?per_page=100`)).json.data.find((d: { attributes: { channel_type: string } }) => d.attributes.channel_type === "telegram");
    expect(Object.keys(tg.attributes).sort()).toEqual(["channel_type", "created_at", "default_for_new_monitors", "external_id", "is_enabled", "name", "telegram_chat_id", "updated_at", "url"]);
    expect(tg.attributes.telegram_chat_id).toBe("-1001234");
    const mail = (await s.api("GET", `${BASE}?per_page=100`)).json.data.find((d: { attributes: { channel_type: string } }) => d.attributes.channel_type === "email");
    expect(mail.attributes).toMatchObject({ email_to: "ops@example.com", smtp_host: "smtp.example.com", smtp_port: null, smtp_security: "starttls", smtp_user: "vigil", smtp_from: "vigil@example.com" });
    expect("smtp_pass" in mail.attributes).toBe(false);
    const byType = async (type: string) => (await s.api("GET", `${BASE}?per_page=100`)).json.data.find((d: { attributes: { channel_type: string } }) => d.attributes.channel_type === type).attributes;
    const common = ["channel_type", "created_at", "default_for_new_monitors", "external_id", "is_enabled", "name", "updated_at"];
    expect(Object.keys(await byType("matrix")).sort()).toEqual([...common, "matrix_room_id", "url"].sort());
    expect(Object.keys(await byType("pagerduty")).sort()).toEqual([...common, "url"].sort());
    expect(Object.keys(await byType("apprise")).sort()).toEqual([...common, "url"].sort());
    expect(await byType("pagerduty")).toMatchObject({ url: null });
    expect(await byType("homeassistant")).toMatchObject({ url: "https://ha.example.com:8123/", homeassistant_service: "notify.mobile_app_pixel" });
    expect(await byType("signal")).toMatchObject({ signal_number: "+4915100000001", signal_recipients: ["+4917600000002", "group.ZmFtaWx5"] });
    expect(await byType("google_chat")).toMatchObject({ url: "https://chat.googleapis.com/***" });

    const everything = (await s.api("GET", `${BASE}?per_page=100`)).text;
    for (const secret of SECRETS) {
      expect(everything).not.toContain(secret);
      expect(s.logText()).not.toContain(secret);
    }
    // and they are sealed at rest
    const raw = await s.ctx.db.selectFrom("notification_channels").select(["config_json", "secrets_enc"]).execute();
    for (const secret of SECRETS) expect(JSON.stringify(raw)).not.toContain(secret);
  });

  describe("validation: 422 details per attribute; unknown and other-type attributes refused; channel_type fixed", () => {
    let gotify = "";
    beforeAll(async () => void (gotify = (await create({ name: "g", channel_type: "gotify", url: "https://g.example.com", gotify_token: "tok-1" })).json.data.id));
    const firstDetail = (key: string, fragment: string) => (res: ApiResult) => expect(res.json.error.details[key][0]).toContain(fragment);
    scenarios(() => s, [
      {
        name: "every bad attribute is named", method: "POST", path: BASE, body: { channel_type: "webhook", url: "ftp://x", secret: 5, smtp_host: "x", color: "red", is_enabled: "yes" },
        status: 422, code: "validation_error", details: ["color", "is_enabled", "name", "secret", "smtp_host", "url"], check: firstDetail("smtp_host", "does not apply to webhook channels"),
      },
      {
        name: "channel_type missing", method: "POST", path: BASE, body: { name: "x" }, status: 422,
        contains: { error: { details: { channel_type: ["is required: one of webhook, slack, discord, teams, telegram, ntfy, gotify, pushover, email, matrix, mattermost, rocketchat, google_chat, pagerduty, opsgenie, homeassistant, signal, apprise"] } } },
      },
      { name: "matrix without its room and token", method: "POST", path: BASE, body: { name: "m", channel_type: "matrix", url: "https://matrix.example.org" }, status: 422, details: ["matrix_access_token", "matrix_room_id"] },
      {
        name: "matrix: an alias is not a room id", method: "POST", path: BASE, body: { name: "m", channel_type: "matrix", url: "https://m.example.org", matrix_room_id: "#ops:example.org", matrix_access_token: "t0k3n" }, status: 422,
        details: { matrix_room_id: "must be the room's id (!AbCdEf:example.org), not an alias: room settings, Advanced, show it" },
      },
      { name: "pagerduty and opsgenie need their keys, not a url", method: "POST", path: BASE, body: { name: "p", channel_type: "pagerduty", url: "nope" }, status: 422, details: ["pagerduty_routing_key", "url"] },
      { name: "a key of another type", method: "POST", path: BASE, body: { name: "o", channel_type: "opsgenie", opsgenie_api_key: "k3y-1234", pagerduty_routing_key: "x" }, status: 422, check: firstDetail("pagerduty_routing_key", "does not apply to opsgenie channels; it is for pagerduty channels") },
      {
        name: "homeassistant: a service is domain.service", method: "POST", path: BASE, body: { name: "h", channel_type: "homeassistant", url: "https://ha.example.com", homeassistant_token: "t", homeassistant_service: "mobile_app_pixel" }, status: 422,
        details: { homeassistant_service: "must be a service such as notify.mobile_app_pixel (domain.service, lower case)" },
      },
      {
        name: "signal: the number and every recipient are checked", method: "POST", path: BASE, body: { name: "s", channel_type: "signal", url: "https://s.example.com", signal_number: "0151 000", signal_recipients: ["+4917600000002", "bob"] }, status: 422,
        details: { signal_number: "must be a phone number in international format, such as +4915112345678", signal_recipients: "must be a list of 1 to 50 recipients: phone numbers (+4915112345678), group ids (group.…) or account UUIDs; not one: bob" },
      },
      { name: "signal: no recipients", method: "POST", path: BASE, body: { name: "s", channel_type: "signal", url: "https://s.example.com", signal_number: "+4915100000001", signal_recipients: [] }, status: 422, details: ["signal_recipients"] },
      {
        name: "apprise: a line that is not a URL is named by its number, not quoted", method: "POST", path: BASE, body: { name: "a", channel_type: "apprise", apprise_urls: "tgram://tok/1\nnot-a-url-secret" }, status: 422,
        details: { apprise_urls: "must hold one Apprise URL (service://…) per line; not one: line 2 of the non-empty lines" },
        notContains: ["not-a-url-secret"],
      },
      { name: "apprise: required", method: "POST", path: BASE, body: { name: "a", channel_type: "apprise" }, status: 422, details: ["apprise_urls"] },
      { name: "channel_type unknown", method: "POST", path: BASE, body: { name: "x", channel_type: "pager" }, status: 422, contains: { error: { details: { channel_type: expect.anything() } } } },
      { name: "telegram without chat and token", method: "POST", path: BASE, body: { name: "tg", channel_type: "telegram" }, status: 422, details: ["telegram_bot_token", "telegram_chat_id"] },
      {
        name: "email with a bad address, port and security", method: "POST", path: BASE, body: { name: "m", channel_type: "email", email_to: "not-an-address", smtp_host: "h", smtp_from: "v@example.com", smtp_port: 70000, smtp_security: "ssl" },
        status: 422, details: ["email_to", "smtp_port", "smtp_security"],
      },
      { name: "PATCH: channel_type cannot change", method: "PATCH", path: () => `${BASE}/${gotify}`, body: { channel_type: "webhook" }, status: 422, check: firstDetail("channel_type", "cannot be changed") },
      { name: "PATCH: a required secret cannot be dropped", method: "PATCH", path: () => `${BASE}/${gotify}`, body: { gotify_token: null }, status: 422, contains: { error: { details: { gotify_token: expect.anything() } } } },
      { name: "PATCH: a bad URL", method: "PATCH", path: () => `${BASE}/${gotify}`, body: { url: "nope" }, status: 422 },
      // PostgreSQL's text cannot hold U+0000, so neither engine stores one (docs/api-rules.md "Text")
      { name: "a NUL in the name and in a secret", method: "POST", path: BASE, body: { name: "n\u0000", channel_type: "gotify", url: "https://gotify.example.com", gotify_token: "t\u0000k" }, status: 422, details: { name: "must not contain the NUL character (U+0000)", gotify_token: "must not contain the NUL character (U+0000)" } },
      { name: "PATCH: a body that is not an object", method: "PATCH", path: () => `${BASE}/${gotify}`, body: "[1]", status: 400 },
    ]);
  });

  test("pagination by id ascending with page/per_page and totals", async () => {
    const a = await makeAccount(s.ctx, "pager-acct", "pro");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.api("POST", BASE, { name: `n${i}`, channel_type: "ntfy", url: "https://ntfy.sh/x" }, { token: a.token })).json.data.id);
    const p2 = await s.api("GET", `${BASE}?page=2&per_page=2`, undefined, { token: a.token });
    expect(p2.json.pagination).toEqual({ page: 2, per_page: 2, total: 5, total_pages: 3 });
    expect(p2.json.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(2, 4));
    expect((await s.api("GET", `${BASE}?page=9`, undefined, { token: a.token })).json.data).toEqual([]);
    expect((await s.api("GET", `${BASE}?per_page=0`, undefined, { token: a.token })).status).toBe(422);
  });

  test("tenancy and scopes: another account's channel is a 404; reads need monitors:read, writes monitors:write", async () => {
    const mine = (await create({ name: "mine", channel_type: "ntfy", url: "https://ntfy.sh/mine" })).json.data.id;
    const other = await makeAccount(s.ctx, "other-acct", "pro");
    for (const [method, path, body] of [["GET", `${BASE}/${mine}`], ["PATCH", `${BASE}/${mine}`, { name: "x" }], ["DELETE", `${BASE}/${mine}`], ["POST", `${BASE}/${mine}/test`]] as const) {
      expect((await s.api(method, path, body, { token: other.token })).status).toBe(404);
    }
    expect((await s.api("GET", BASE, undefined, { token: other.token })).json.data).toEqual([]);
    expect((await s.api("GET", `${BASE}/${mine}`)).json.data.attributes.name).toBe("mine");

    const reader = await makeAccount(s.ctx, "reader-acct", "pro", ["monitors:read"]);
    expect((await s.api("GET", BASE, undefined, { token: reader.token })).status).toBe(200);
    const denied = await s.api("POST", BASE, { name: "x", channel_type: "ntfy", url: "https://ntfy.sh/x" }, { token: reader.token });
    expect([denied.status, denied.json.error.code]).toEqual([403, "insufficient_scope"]);
    const none = await makeAccount(s.ctx, "status-acct", "pro", ["status_pages:read"]);
    expect((await s.api("GET", BASE, undefined, { token: none.token })).status).toBe(403);
    const free = await makeAccount(s.ctx, "free-acct", "free");
    expect((await s.api("GET", BASE, undefined, { token: free.token })).json.error.code).toBe("plan_feature_disabled");
  });

  test("POST /:id/test sends a signed sample synchronously and returns the outcome", async () => {
    const id = (await create({ name: "t", channel_type: "webhook", url: `${r.url}/test-hook`, secret: "test-signing-key" })).json.data.id;
    const before = r.requests.length;
    const res = await s.api("POST", `${BASE}/${id}/test`);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ id, type: "notification_channel", attributes: { ok: true, status_code: 200, error: null } });
    const got = r.requests.slice(before);
    expect(got.length).toBe(1);
    expect(got[0]!.headers.get("x-vigil-event")).toBe("test");
    expect(got[0]!.headers.get("x-vigil-signature")).toBe("sha256=" + createHmac("sha256", "test-signing-key").update(got[0]!.body).digest("hex"));
    const body = JSON.parse(got[0]!.body);
    expect(body.event).toBe("test");
    expect(Object.keys(body)).toEqual(["event", "occurred_at", "monitor", "state", "previous_state", "incident", "error_code", "error_message", "regions"]);

    const failing = startReceiver(() => new Response("bad token", { status: 401 }));
    const id2 = (await create({ name: "t2", channel_type: "gotify", url: failing.url, gotify_token: "gotify-secret-77" })).json.data.id;
    const res2 = await s.api("POST", `${BASE}/${id2}/test`);
    await failing.stop();
    expect(res2.json.data.attributes).toEqual({ ok: false, status_code: 401, error: `HTTP 401 ${PRIVATE_REPLY}` });
    expect(failing.requests[0]!.search.get("token")).toBe("gotify-secret-77");
    expect(s.logText()).not.toContain("gotify-secret-77");
    expect((await s.api("POST", `${BASE}/999999/test`)).status).toBe(404);
  });

  test("default_for_new_monitors: linked to monitors created without notification_channel_ids", async () => {
    const acct = await makeAccount(s.ctx, "defaults-acct", "pro");
    const api = (m: string, p: string, b?: unknown) => s.api(m, p, b, { token: acct.token });
    const def = (await api("POST", BASE, { name: "d", channel_type: "ntfy", url: "https://ntfy.sh/d", default_for_new_monitors: true })).json.data.id;
    await api("POST", BASE, { name: "not default", channel_type: "ntfy", url: "https://ntfy.sh/n" });
    const monitor = { name: "hb", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000 };
    const m1 = await api("POST", "/api/v1/monitors", monitor);
    expect(m1.status).toBe(201);
    expect(m1.json.data.attributes.notification_channel_ids).toEqual([Number(def)]);
    const m2 = await api("POST", "/api/v1/monitors", { ...monitor, notification_channel_ids: [] });
    expect(m2.json.data.attributes.notification_channel_ids).toEqual([]);
  });
});
