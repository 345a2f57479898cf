import { expect } from "bun:test";
import { waitFor, type TestServer } from "../helpers/server.ts";

/**
 * Monitors for API tests. Targets are loopback addresses, and monitors are created paused unless a
 * test needs otherwise, so no scheduler probes them and seeded states stay as the test set them.
 */
export const LOOPBACK_URL = "http://127.0.0.1:9/health"; // discard port: nothing listens there

export function httpAttrs(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "web", monitor_type: "http", target: LOOPBACK_URL, interval_sec: 60, timeout_ms: 5000, is_paused: true, ...over };
}

/** Minimal valid attributes per monitor type. */
export const VALID_BY_TYPE: Record<string, Record<string, unknown>> = {
  http: httpAttrs(),
  tcp: { name: "db", monitor_type: "tcp", target: "127.0.0.1:5432", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  dns: { name: "dns", monitor_type: "dns", target: "localhost", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  ssl: { name: "cert", monitor_type: "ssl", target: "127.0.0.1:443", interval_sec: 3600, timeout_ms: 5000, is_paused: true },
  ping: { name: "ping", monitor_type: "ping", target: "127.0.0.1", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  heartbeat: { name: "job", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  websocket: { name: "socket", monitor_type: "websocket", target: "ws://127.0.0.1:9/socket", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  grpc: { name: "grpc", monitor_type: "grpc", target: "127.0.0.1:50051", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  smtp: { name: "mail", monitor_type: "smtp", target: "127.0.0.1:25", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  postgres: { name: "pg", monitor_type: "postgres", target: "postgres://monitor@127.0.0.1:5432/app", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  mysql: { name: "maria", monitor_type: "mysql", target: "mysql://monitor@127.0.0.1:3306/app", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  redis: { name: "cache", monitor_type: "redis", target: "redis://127.0.0.1:6379/0", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  docker: { name: "container", monitor_type: "docker", target: "nextcloud", interval_sec: 60, timeout_ms: 5000, is_paused: true },
  domain: { name: "domain", monitor_type: "domain", target: "example.com", interval_sec: 3600, timeout_ms: 5000, is_paused: true },
};

/** Attributes of a channel of each type, every secret its type takes among them (no name, no channel_type). */
export const CHANNEL_BY_TYPE: Record<string, Record<string, unknown>> = {
  webhook: { url: "https://hooks.example.com/in/abc?key=k", secret: "signing-key" },
  slack: { url: "https://hooks.slack.com/services/T0/B0/XXXX" },
  discord: { url: "https://discord.com/api/webhooks/1/abc" },
  teams: { url: "https://example.webhook.office.com/webhookb2/x" },
  telegram: { telegram_chat_id: -100123, telegram_bot_token: "123:abc", url: "https://tg.example.com/bot" },
  ntfy: { url: "https://ntfy.example.com/alerts" },
  gotify: { url: "https://gotify.example.com", gotify_token: "AppTok" },
  pushover: { pushover_token: "app", pushover_user: "user" },
  email: { email_to: "ops@example.com", smtp_host: "smtp.example.com", smtp_user: "vigil", smtp_pass: "mail-pass", smtp_from: "Vigil <vigil@example.com>" },
  matrix: { url: "https://matrix.example.org", matrix_room_id: "!room:example.org", matrix_access_token: "syt" },
  mattermost: { url: "https://chat.example.com/hooks/abc" },
  rocketchat: { url: "https://rocket.example.com/hooks/id/token" },
  google_chat: { url: "https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t" },
  pagerduty: { pagerduty_routing_key: "pd-key" },
  opsgenie: { opsgenie_api_key: "og-key", url: "https://api.eu.opsgenie.com" },
  homeassistant: { url: "http://ha.example.com:8123", homeassistant_token: "ha", homeassistant_service: "notify.mobile_app_pixel" },
  signal: { url: "http://signal.example.com:8080", signal_number: "+4915112345678", signal_recipients: ["+4917612345678"] },
  apprise: { apprise_urls: "tgram://123:abc/987" },
};

/** Creates a monitor through the API and returns its id; fails the test on anything but 201. */
export async function createMonitor(s: TestServer, attrs: Record<string, unknown> = httpAttrs(), token?: string): Promise<number> {
  const res = await s.api("POST", "/api/v1/monitors", attrs, token ? { token } : {});
  if (res.status !== 201) throw new Error(`POST /api/v1/monitors answered ${res.status}: ${res.text}`);
  return Number(res.json.data.id);
}

export async function createStatusPage(s: TestServer, attrs: Record<string, unknown>, token?: string): Promise<number> {
  const res = await s.api("POST", "/api/v1/status-pages", attrs, token ? { token } : {});
  if (res.status !== 201) throw new Error(`POST /api/v1/status-pages answered ${res.status}: ${res.text}`);
  return Number(res.json.data.id);
}

/** The list envelope: data array, pagination of four integers, meta with request_id and rate_limit. */
export function expectListEnvelope(json: any, pagination: { page: number; per_page: number; total: number; total_pages: number }): void {
  expect(Array.isArray(json.data)).toBe(true);
  expect(json.pagination).toEqual(pagination);
  expect(typeof json.meta.request_id).toBe("string");
  expect(Object.keys(json.meta.rate_limit).sort()).toEqual(["limit", "remaining", "reset"]);
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Resumes a paused monitor until its first check is stored, pauses it again, and returns that check's attributes. */
export async function checkOnce(s: TestServer, id: number | string, token?: string) {
  const opts = token ? { token } : {};
  expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false }, opts)).status).toBe(200);
  const check = await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${id}/checks`, undefined, opts)).json.data[0]);
  expect(check).toBeTruthy();
  await s.api("PATCH", `/api/v1/monitors/${id}`, { is_paused: true }, opts);
  return check.attributes;
}
