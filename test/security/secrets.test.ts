/**
 * Secrets (docs/api-rules.md "Read-only and write-only attributes": write-only, encrypted at rest,
 * never in any response, log line or error message), all kinds at once: the three monitor
 * credentials and every channel secret. A target that echoes its request headers back is checked,
 * so the secret travels to it and back into Vigil; then every GET endpoint of apiRoutes, the answers
 * to writes, validation errors with the secret in the bad input, the channel test, the OpenAPI
 * document, /metrics, the whole log, and the raw database files are searched for each secret.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { apiRoutes } from "../../src/api/routes.ts";
import { insertIncident } from "../../src/store/incidents.ts";
import { databaseAtRest } from "../helpers/engine.ts";
import { defaultAccountId } from "../helpers/heartbeat.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

// random, so that any 8 characters of one found anywhere can only be a leak
const rnd = (_kind: string) => randomBytes(18).toString("base64url");
const S = {
  bearer: rnd("bearer"),
  basicPass: rnd("basic"),
  apiKey: rnd("apikey"),
  webhook: rnd("webhook"),
  telegram: rnd("telegram"),
  gotify: rnd("gotify"),
  pushoverToken: rnd("potoken"),
  pushoverUser: rnd("pouser"),
  smtpPass: rnd("smtp"),
  matrix: rnd("matrix"),
  pagerduty: rnd("pagerduty"),
  opsgenie: rnd("opsgenie"),
  homeassistant: rnd("homeassistant"),
  appriseCommand: rnd("apprise-command"),
  appriseServer: rnd("apprise-server"),
};
const SECRETS = Object.values(S);
const basicHeader = Buffer.from(`bob:${S.basicPass}`).toString("base64");

/** Every 8-character piece of a secret: a secret cut short by truncation still leaks its start. */
function leaked(text: string, secret: string): string | null {
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) return secret.slice(i, i + 8);
  return null;
}

let s: TestServer;
let target: HttpTarget;
const responses: string[] = [];
const monitorIds: string[] = [];
const channelIds: string[] = [];
const pageIds: string[] = [];
const incidentIds: string[] = [];
const windowIds: string[] = [];
const groupIds: string[] = [];
const updateIds: string[] = [];

async function record(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await s.api(method, path, body);
  responses.push(`${method} ${path} ${res.status} ${JSON.stringify(Object.fromEntries(res.headers))} ${res.text}`);
  return res;
}

beforeAll(async () => {
  // echoes the credential so that a 100-character quote of the body would cut it after 12
  // characters, then every header: whatever quotes the body must hide all of it, not just whole copies
  const echo = (req: Request) => {
    const credential = (req.headers.get("authorization") ?? "").replace(/^\S+ /, "") || (req.headers.get("x-api-key") ?? "");
    return "x".repeat(88) + credential + " " + JSON.stringify(Object.fromEntries(req.headers));
  };
  target = await startHttpTarget({ "/echo": (req) => new Response(echo(req)) });
  s = await startTestServer();
  const http = (name: string, extra: Record<string, unknown>) => ({ name, monitor_type: "http", target: `${target.url}/echo`, interval_sec: 60, timeout_ms: 2000, api_expected_body_contains: "never there", ...extra });
  for (const body of [
    http("bearer", { api_auth_type: "bearer", api_auth_bearer_token: S.bearer }),
    http("basic", { api_auth_type: "basic", api_auth_basic_user: "bob", api_auth_basic_pass: S.basicPass }),
    http("key", { api_auth_type: "api_key", api_auth_api_key_header: "X-Api-Key", api_auth_api_key_value: S.apiKey }),
    http("key in body", { api_auth_type: "api_key", api_auth_api_key_header: "X-Api-Key", api_auth_api_key_value: S.apiKey, api_expected_body_contains: null, api_json_assertions_json: [{ path: "a", op: "equals", value: "b" }] }),
  ]) {
    const r = await record("POST", "/api/v1/monitors", body);
    expect(r.status).toBe(201);
    monitorIds.push(r.json.data.id);
  }
  for (const body of [
    { name: "hook", channel_type: "webhook", url: `${target.url}/hook`, secret: S.webhook },
    { name: "tg", channel_type: "telegram", telegram_chat_id: -100123, telegram_bot_token: S.telegram },
    { name: "gotify", channel_type: "gotify", url: `${target.url}/gotify`, gotify_token: S.gotify },
    { name: "po", channel_type: "pushover", pushover_token: S.pushoverToken, pushover_user: S.pushoverUser },
    { name: "mail", channel_type: "email", email_to: "ops@example.com", smtp_host: "127.0.0.1", smtp_port: 9, smtp_user: "vigil", smtp_pass: S.smtpPass, smtp_from: "vigil@example.com" },
    { name: "matrix", channel_type: "matrix", url: target.url, matrix_room_id: "!room:example.org", matrix_access_token: S.matrix },
    { name: "pd", channel_type: "pagerduty", url: `${target.url}/echo`, pagerduty_routing_key: S.pagerduty },
    { name: "og", channel_type: "opsgenie", url: target.url, opsgenie_api_key: S.opsgenie },
    { name: "ha", channel_type: "homeassistant", url: target.url, homeassistant_token: S.homeassistant, homeassistant_service: "notify.notify" },
    // the command gets a 404 from the target; the server mode POSTs the URLs to a path with no route
    { name: "apprise command", channel_type: "apprise", apprise_urls: `json://vigil:${S.appriseCommand}@${target.url.slice(7)}/nope` },
    { name: "apprise server", channel_type: "apprise", url: target.url, apprise_urls: `tgram://${S.appriseServer}/12345` },
  ]) {
    const r = await record("POST", "/api/v1/notification-channels", body);
    expect(r.status).toBe(201);
    channelIds.push(r.json.data.id);
  }
  pageIds.push((await record("POST", "/api/v1/status-pages", { name: "Status", monitor_ids: monitorIds.map(Number) })).json.data.id);
  groupIds.push((await record("POST", "/api/v1/groups", { name: "Group" })).json.data.id);
  updateIds.push((await record("POST", `/api/v1/status-pages/${pageIds[0]}/updates`, { title: "Update", kind: "info", affected_monitor_ids: [Number(monitorIds[0])] })).json.data.id);
  const incident = await insertIncident(s.ctx.db, { accountId: await defaultAccountId(s.ctx), monitorId: Number(monitorIds[0]), startedAt: Date.now(), rootCheckId: null, errorCode: "http_error", errorMessage: "HTTP 500", httpCode: 500, failureCount: 1 });
  incidentIds.push(String(incident.id));
  windowIds.push((await record("POST", "/api/v1/maintenance-windows", { name: "Patching", monitor_ids: monitorIds.map(Number), schedule: "0 3 * * 0", duration_sec: 3600 })).json.data.id);
  // the checks ran: each monitor's request carried its credential to the echoing target
  const checked = await waitFor(async () => (await s.ctx.db.selectFrom("checks").select("monitor_id").distinct().execute()).length >= monitorIds.length, { timeoutMs: 15_000 });
  expect(checked).toBe(true);
});
afterAll(async () => {
  await s?.stop();
  await target?.close();
});

test("the credentials did reach the target (so the search below can find them if they leak)", () => {
  const auth = target.requests.map((r) => `${r.headers.authorization ?? ""} ${r.headers["x-api-key"] ?? ""}`).join(" ");
  expect(auth).toContain(S.bearer);
  expect(auth).toContain(basicHeader);
  expect(auth).toContain(S.apiKey);
});

test("no response of any GET endpoint, write, validation error or channel test carries a secret", async () => {
  const params: Record<string, string[]> = {};
  for (const def of apiRoutes.filter((r) => r.method === "GET")) {
    const ids = def.path.includes("/notification-channels")
      ? channelIds
      : def.path.includes("/status-pages")
        ? pageIds
        : def.path.includes("/incidents")
          ? incidentIds
          : def.path.includes("/maintenance-windows")
            ? windowIds
            : def.path.includes("/groups")
              ? groupIds
              : monitorIds;
    const paths = def.path.includes(":id") ? ids.map((id) => def.path.replace(":id", id).replace(":updateId", updateIds[0]!)) : [def.path + "?per_page=100"];
    params[def.path] = paths;
    for (const p of paths) expect((await record("GET", p)).status).toBe(200);
  }
  expect(Object.keys(params).length).toBeGreaterThanOrEqual(8);
  // writes answer with the record: a rename, a secret rotation, and validation errors holding secrets
  await record("PATCH", `/api/v1/monitors/${monitorIds[0]}`, { name: "renamed", api_auth_bearer_token: S.bearer });
  await record("PATCH", `/api/v1/notification-channels/${channelIds[0]}`, { secret: S.webhook, name: "renamed" });
  await record("POST", "/api/v1/monitors", { name: "bad", monitor_type: "http", target: "nope", interval_sec: 1, timeout_ms: 1, api_auth_type: "bearer", api_auth_bearer_token: S.bearer, api_auth_api_key_value: S.apiKey });
  await record("POST", "/api/v1/monitors", { name: "bad", monitor_type: "http", target: `${target.url}/echo`, interval_sec: 60, timeout_ms: 1000, api_auth_type: "basic", api_auth_basic_pass: [S.basicPass], api_headers_json: { [S.apiKey]: S.apiKey, "X-Ok": { v: S.bearer } } });
  await record("POST", "/api/v1/notification-channels", { name: "bad", channel_type: "webhook", url: S.webhook, secret: { s: S.webhook }, smtp_pass: S.smtpPass });
  await record("POST", "/api/v1/notification-channels", { name: "bad", channel_type: "telegram", telegram_bot_token: 5, telegram_chat_id: S.telegram });
  await record("POST", "/api/v1/notification-channels", { name: "bad", channel_type: "apprise", apprise_urls: `not a url ${S.appriseCommand}`, matrix_access_token: S.matrix });
  await record("POST", "/api/v1/notification-channels", { name: "bad", channel_type: "pagerduty", pagerduty_routing_key: [S.pagerduty], opsgenie_api_key: S.opsgenie, homeassistant_token: S.homeassistant });
  await record("PATCH", `/api/v1/monitors/${monitorIds[0]}`, `{"api_auth_bearer_token": "${S.bearer}", oops}`);
  const tests: Record<string, { ok: boolean; error: string | null }> = {};
  for (const [i, id] of channelIds.entries()) tests[i] = (await record("POST", `/api/v1/notification-channels/${id}/test`)).json.data.attributes;
  // the new kinds did send: the pager event reached the echo, the command ran and met a 404
  expect(tests[6]!.ok).toBe(true);
  if (Bun.which("apprise")) expect(tests[9]!.error).toContain("error=404");
  for (const path of ["/api/v1/openapi.json"]) responses.push(await (await fetch(s.url + path)).text());
  responses.push(await (await fetch(s.url + "/metrics", { headers: { authorization: `Bearer ${s.token}` } })).text());

  const all = responses.join("\n");
  expect(all).toContain("renamed"); // the search covers real answers
  for (const secret of [...SECRETS, basicHeader]) expect({ secret, found: leaked(all, secret) }).toEqual({ secret, found: null });
});

test("the checks the echoing target answered hold no secret in error_message or anywhere else", async () => {
  const rows = await s.ctx.db.selectFrom("checks").selectAll().execute();
  expect(rows.length).toBeGreaterThanOrEqual(monitorIds.length);
  expect(rows.some((r) => r.error_code === "body_mismatch" || r.error_code === "http_error")).toBe(true);
  const text = JSON.stringify(rows);
  for (const secret of [...SECRETS, basicHeader]) expect({ secret, found: leaked(text, secret) }).toEqual({ secret, found: null });
});

test("no log line holds a secret", () => {
  const log = s.logText();
  expect(log).toContain("monitor created");
  for (const secret of [...SECRETS, basicHeader]) expect({ secret, found: leaked(log, secret) }).toEqual({ secret, found: null });
});

test("the database files hold every secret only encrypted", async () => {
  await s.ctx.writes.flush();
  const { text } = await databaseAtRest(s.dataDir);
  expect(text.includes("never there")).toBe(true); // the files searched hold the monitors' rows
  for (const secret of [...SECRETS, basicHeader]) expect({ secret, found: leaked(text, secret) }).toEqual({ secret, found: null });
});
