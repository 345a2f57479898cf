/**
 * vigil export and vigil apply as people run them: the real CLI as a child process against a real
 * server on loopback, two accounts of one instance (README "Configuration as code").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { webhookSignature } from "../../src/notify/channels/webhook.ts";
import { runVigil } from "../helpers/process.ts";
import { apiClient, makeAccount, startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

let server: TestServer;
let target: HttpTarget;
let first: { token: string; api: TestServer["api"] };
let second: { token: string; api: TestServer["api"] };
const dir = tempDir("vigil-cac-");

/** The environment the placeholders of the exports name, with these values. */
const SECRETS: Record<string, string> = {};

async function account(name: string) {
  const { token } = await makeAccount(server.ctx, name, "enterprise");
  return { token, api: apiClient(server.url, token) };
}

async function made(api: TestServer["api"], path: string, body: Record<string, unknown>): Promise<number> {
  const r = await api("POST", `/api/v1/${path}`, body);
  if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
  return Number(r.json.data.id);
}

/** Every resource of the account as the API lists it (updated_at included). */
async function snapshot(api: TestServer["api"]): Promise<string> {
  const out: unknown[] = [];
  for (const p of ["groups", "notification-channels", "monitors", "maintenance-windows", "status-pages"]) out.push((await api("GET", `/api/v1/${p}?per_page=100`)).json.data);
  return JSON.stringify(out);
}

function vigil(args: string[], token: string, env: Record<string, string> = {}) {
  return runVigil([...args, "--server", server.url], { VIGIL_TOKEN: token, ...SECRETS, ...env });
}

function fileOf(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

beforeAll(async () => {
  server = await startTestServer();
  target = await startHttpTarget({ "/health": () => new Response("ok"), "/hook": () => new Response("ok") });
  first = await account("first");
  second = await account("second");
  const { api } = first;
  const web = await made(api, "groups", { name: "Web", sort_order: 10, external_id: "web" });
  await made(api, "groups", { name: "Back office", description: "no external id" });
  const hook = await made(api, "notification-channels", { name: "Hook", channel_type: "webhook", url: `${target.url}/hook?key=abc`, secret: "s3cret", external_id: "hook" });
  const tg = await made(api, "notification-channels", { name: "Telegram", channel_type: "telegram", telegram_chat_id: -100123, telegram_bot_token: "123:abc" });
  const db = await made(api, "monitors", { name: "Database", monitor_type: "tcp", target: "127.0.0.1:5432", interval_sec: 60, timeout_ms: 5000, external_id: "db", is_paused: true, notification_channel_ids: [] });
  const site = await made(api, "monitors", {
    name: "Site", monitor_type: "http", target: `${target.url}/health`, interval_sec: 30, timeout_ms: 2000, external_id: "site", group_id: web, tags: ["env:prod", "team/web"],
    notification_channel_ids: [hook, tg], escalation_channel_ids: [tg], escalate_after_minutes: 15, depends_on_ids: [db], api_auth_type: "bearer", api_auth_bearer_token: "tok",
    api_headers_json: { "X-One": "1", "X-Two": "2" }, expected_http_codes: "200-299", is_paused: true,
  });
  const beat = await made(api, "monitors", { name: "Nightly job", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, heartbeat_grace_sec: 300, depends_on_ids: [site], notification_channel_ids: [] });
  await made(api, "maintenance-windows", { name: "Sunday patching", monitor_ids: [db, site], schedule: "0 3 * * 0", duration_sec: 3600, timezone: "Europe/Berlin", external_id: "sunday" });
  await made(api, "maintenance-windows", { name: "Move", monitor_ids: [beat], starts_at: "2030-01-01T02:00:00Z", ends_at: "2030-01-01T04:00:00Z" });
  await made(api, "status-pages", { name: "Public", slug: "cac-public", monitor_ids: [beat, db, site], headline: "All systems", is_token_protected: true, external_id: "public" });
});

afterAll(async () => {
  await server?.stop();
  await target?.close();
});

/** The variables an export's header names, set to values the tests know. */
function learnSecrets(yaml: string): void {
  const line = yaml.split("\n").find((l) => l.startsWith("# Secrets come from the environment: "));
  for (const name of line?.slice(line.indexOf(": ") + 2).split(", ") ?? []) SECRETS[name] ??= name.endsWith("_URL") ? `${target.url}/hook?key=abc` : `value-of-${name.toLowerCase()}`;
}

test("export prints every kind keyed by external_id, generated keys for the rest, secrets as placeholders", async () => {
  const r = await vigil(["export"], first.token);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const text = r.stdout;
  expect(text.split("\n")[0]).toBe(`# yaml-language-server: $schema=${server.url}/api/v1/config-schema.json`);
  for (const key of ["web:", "hook:", "db:", "site:", "sunday:", "public:"]) expect(text).toContain(`  ${key}\n`);
  expect(text).toMatch(/\n {2}group-\d+:\n {4}name: Back office\n/);
  expect(text).toMatch(/\n {2}channel-\d+:\n {4}name: Telegram\n/);
  expect(text).toContain("api_auth_bearer_token: ${VIGIL_MONITOR_SITE_API_AUTH_BEARER_TOKEN}");
  expect(text).toContain("url: ${VIGIL_CHANNEL_HOOK_URL}");
  expect(text).not.toContain("tok\n");
  expect(text).not.toContain("s3cret");
  learnSecrets(text);
}, 60_000);

test("applying an account's own fresh export changes nothing, and no updated_at moves", async () => {
  const exported = (await vigil(["export"], first.token)).stdout;
  learnSecrets(exported);
  const before = await snapshot(first.api);
  const r = await vigil(["apply", "-f", fileOf("own.yaml", exported)], first.token);
  expect(r.stderr).toBe("");
  expect(r.stdout.trim()).toBe("no changes");
  expect(await snapshot(first.api)).toBe(before);
}, 60_000);

test("export then apply on an empty account reproduces the first; a second apply prints no change and writes nothing", async () => {
  const exported = (await vigil(["export"], first.token)).stdout;
  learnSecrets(exported);
  // slugs are unique across the instance: the one thing that must differ
  const file = fileOf("copy.yaml", exported.replace("slug: cac-public", "slug: cac-public-copy"));
  const r = await vigil(["apply", "-f", file], second.token);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("+ create group web\n");
  expect(r.stdout).toContain("+ create monitor site\n");
  expect(r.stdout.indexOf("+ create monitor db")).toBeLessThan(r.stdout.indexOf("+ create monitor site"));
  expect(r.stdout).toContain("+ create status page public\n");
  expect(r.stdout.trim().split("\n").pop()).toBe("10 created, 0 updated, 0 deleted");

  const again = (await vigil(["export"], second.token)).stdout;
  expect(again).toBe(exported.replace("slug: cac-public", "slug: cac-public-copy"));

  const page = (await second.api("GET", "/api/v1/status-pages")).json.data[0].attributes;
  const names = new Map<number, string>(((await second.api("GET", "/api/v1/monitors")).json.data as { id: string; attributes: { name: string } }[]).map((m) => [Number(m.id), m.attributes.name]));
  expect(page.monitor_ids.map((id: number) => names.get(id))).toEqual(["Nightly job", "Database", "Site"]);

  const before = await snapshot(second.api);
  const twice = await vigil(["apply", "-f", file], second.token);
  expect(twice.stdout.trim()).toBe("no changes");
  expect(await snapshot(second.api)).toBe(before);
}, 60_000);

test("--plan prints the changes and makes none", async () => {
  const exported = (await vigil(["export"], first.token)).stdout;
  const changed = exported.replace("interval_sec: 30", "interval_sec: 45");
  const withNew = changed.replace("\nmaintenance_windows:", "\n  api:\n    name: API\n    monitor_type: tcp\n    target: 127.0.0.1:9\n    interval_sec: 60\n    timeout_ms: 1000\n    group: web\nmaintenance_windows:");
  const before = await snapshot(first.api);
  const r = await vigil(["apply", "-f", fileOf("plan.yaml", withNew), "--plan"], first.token);
  expect(r.stderr).toBe("");
  expect(r.stdout).toContain("~ update monitor site: interval_sec\n");
  expect(r.stdout).toContain("+ create monitor api\n");
  expect(r.stdout.trim().split("\n").pop()).toBe("1 would be created, 1 would be updated, 0 would be deleted");
  expect(await snapshot(first.api)).toBe(before);
}, 60_000);

test("--prune deletes what the file lacks, and without it nothing is deleted", async () => {
  const { api, token } = await account("third");
  await made(api, "groups", { name: "Kept", external_id: "kept" });
  await made(api, "groups", { name: "Extra", external_id: "extra" });
  await made(api, "monitors", { name: "Stray", monitor_type: "tcp", target: "127.0.0.1:9", interval_sec: 60, timeout_ms: 1000, notification_channel_ids: [] });
  const file = fileOf("prune.yaml", "groups:\n  kept:\n    name: Kept\n");
  const plain = await vigil(["apply", "-f", file], token);
  expect(plain.stdout.trim()).toBe("no changes");
  expect((await api("GET", "/api/v1/groups")).json.data).toHaveLength(2);
  const pruned = await vigil(["apply", "-f", file, "--prune"], token);
  expect(pruned.stderr).toBe("");
  expect(pruned.stdout).toMatch(/^- delete monitor monitor-\d+ \(Stray\)\n- delete group extra \(Extra\)\n0 created, 0 updated, 2 deleted\n$/);
  expect((await api("GET", "/api/v1/groups")).json.data.map((g: { attributes: { name: string } }) => g.attributes.name)).toEqual(["Kept"]);
  expect((await api("GET", "/api/v1/monitors")).json.data).toHaveLength(0);
}, 60_000);

test("secrets come from the environment: a channel's URL and signing key, a monitor's bearer token", async () => {
  const { api, token } = await account("fourth");
  const file = fileOf(
    "secrets.yaml",
    [
      "notification_channels:",
      "  hook:",
      "    name: Hook",
      "    channel_type: webhook",
      "    url: ${HOOK_URL}",
      "    secret: ${HOOK_SECRET}",
      "monitors:",
      "  site:",
      "    name: Site",
      "    monitor_type: http",
      "    target: ${SITE_URL}/health",
      "    interval_sec: 10",
      "    timeout_ms: 2000",
      "    api_auth_type: bearer",
      "    api_auth_bearer_token: ${SITE_TOKEN}",
      "    notification_channels: [hook]",
      "",
    ].join("\n"),
  );
  const env = { HOOK_URL: `${target.url}/hook?from=env`, HOOK_SECRET: "signing-key-from-env", SITE_URL: target.url, SITE_TOKEN: "bearer-from-env" };
  const r = await vigil(["apply", "-f", file], token, env);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const seen = await waitFor(() => target.requests.find((q) => q.path === "/health" && q.headers.authorization === "Bearer bearer-from-env"), { timeoutMs: 25_000 });
  expect(seen).toBeDefined();
  const channel = (await api("GET", "/api/v1/notification-channels")).json.data[0];
  expect((await api("POST", `/api/v1/notification-channels/${channel.id}/test`)).status).toBe(200);
  const hook = await waitFor(() => target.requests.find((q) => q.path === "/hook?from=env"));
  expect(hook!.headers["x-vigil-signature"]).toBe(webhookSignature("signing-key-from-env", hook!.body));
  expect((await vigil(["apply", "-f", file], token, env)).stdout.trim()).toBe("no changes");
}, 60_000);
