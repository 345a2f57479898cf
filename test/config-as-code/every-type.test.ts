/**
 * vigil export then vigil apply of the same file, on an account holding every notification channel
 * type and every monitor type (README "Configuration as code"): the real CLI as child processes
 * against a real server. Attributes the API reads back masked or never (a channel's URL, secrets)
 * are placeholders; an apply without --send-secrets leaves them as stored, with --send-secrets and
 * the variables set it writes them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CHANNEL_TYPES } from "../../src/domain/notification-channel-schema.ts";
import { MONITOR_TYPES } from "../../src/domain/monitor.ts";
import { channelSettings, openChannelSecrets } from "../../src/store/notification-channels.ts";
import { CHANNEL_BY_TYPE } from "../api/fixtures.ts";
import { runVigil } from "../helpers/process.ts";
import { apiClient, makeAccount, startTestServer, tempDir, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let token: string;
let api: TestServer["api"];
const dir = tempDir("vigil-cac-types-");

const base = { interval_sec: 60, timeout_ms: 5000, is_paused: true };
/** One monitor of each type, with the secrets it takes. */
const MONITORS: Record<string, Record<string, unknown>> = {
  http: { target: "https://api.example.com/health", api_auth_type: "bearer", api_auth_bearer_token: "tok", expected_http_codes: "200-299,301", follow_redirects: false },
  tcp: { target: "db.example.com:5432" },
  dns: { target: "example.com", dns_record_type: "MX", dns_resolver: "1.1.1.1" },
  ssl: { target: "example.com:443", ssl_expiry_warn_days: 20 },
  heartbeat: { heartbeat_grace_sec: 300 },
  ping: { target: "router.example.com" },
  websocket: { target: "wss://ws.example.com/socket", ws_send: "ping", ws_expect: "pong" },
  grpc: { target: "grpc.example.com:50051", grpc_tls: true },
  smtp: { target: "mail.example.com:587", smtp_security: "starttls" },
  postgres: { target: "postgres://app@db.example.com:5432/app", db_password: "pg-pass", db_tls: true },
  mysql: { target: "mysql://shop@mysql.example.com:3306/shop", db_password: "my-pass" },
  redis: { target: "redis://cache.example.com:6379", db_password: "redis-pass", redis_username: "app" },
  docker: { target: "web", docker_host: "tcp://docker.example.com:2375" },
  domain: { target: "example.com", domain_expiry_warn_days: 20 },
};

function vigil(args: string[], env: Record<string, string> = {}) {
  return runVigil([...args, "--server", server.url], { VIGIL_TOKEN: token, ...env });
}

async function snapshot(): Promise<string> {
  const out: unknown[] = [];
  for (const p of ["groups", "notification-channels", "monitors", "maintenance-windows", "status-pages"]) out.push((await api("GET", `/api/v1/${p}?per_page=100`)).json.data);
  return JSON.stringify(out);
}

let exported = "";
const file = join(dir, "own.yaml");

beforeAll(async () => {
  server = await startTestServer();
  ({ token } = await makeAccount(server.ctx, "every-type", "enterprise"));
  api = apiClient(server.url, token);
  for (const type of CHANNEL_TYPES) {
    const r = await api("POST", "/api/v1/notification-channels", { name: `${type} channel`, channel_type: type, ...CHANNEL_BY_TYPE[type] });
    if (r.status !== 201) throw new Error(`${type}: ${r.status} ${r.text}`);
  }
  for (const type of MONITOR_TYPES) {
    const r = await api("POST", "/api/v1/monitors", { name: `${type} monitor`, monitor_type: type, ...base, ...MONITORS[type], notification_channel_ids: [] });
    if (r.status !== 201) throw new Error(`${type}: ${r.status} ${r.text}`);
  }
  const r = await vigil(["export"]);
  if (r.code !== 0) throw new Error(r.stderr);
  // the secrets the API does not say are there are hints in comments: taken up, so they are sent too
  exported = r.stdout.replace(/# if it has one \(the API does not say\): /g, "");
  writeFileSync(file, exported);
});

afterAll(async () => {
  await server?.stop();
});

test("export writes a placeholder for every masked URL and secret, never what the API shows", () => {
  expect(exported).not.toContain("***");
  for (const type of CHANNEL_TYPES) expect(`${type}: ${exported.includes(`name: ${type} channel`)}`).toBe(`${type}: true`);
  for (const type of MONITOR_TYPES) expect(`${type}: ${exported.includes(`name: ${type} monitor`)}`).toBe(`${type}: true`);
  // a URL whose path is hidden is a secret; one the API shows whole is written as it is
  expect(exported).toMatch(/channel_type: webhook\n {4}url: \$\{VIGIL_CHANNEL_CHANNEL_\d+_URL\}/);
  expect(exported).toContain("url: https://gotify.example.com/\n");
});

test("applying the export without its variables changes nothing: each masked URL and secret is left as stored", async () => {
  const before = await snapshot();
  for (const args of [["apply", "-f", file, "--plan"], ["apply", "-f", file]]) {
    const r = await vigil(args);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("no changes");
  }
  expect(await snapshot()).toBe(before);
}, 60_000);

test("--send-secrets needs the variables, and writes their values", async () => {
  const before = await snapshot();
  const refused = await vigil(["apply", "-f", file, "--send-secrets"]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("nothing was changed");
  expect(refused.stderr).toMatch(/own\.yaml:\d+: notification_channels\.channel-\d+\.url: needs the environment variable VIGIL_CHANNEL_CHANNEL_\d+_URL, which is not set/);
  expect(await snapshot()).toBe(before);

  // each URL keeps its scheme and host (what the API shows) and gets a new path; each secret a new value
  const env: Record<string, string> = {};
  const channels = (await api("GET", "/api/v1/notification-channels?per_page=100")).json.data as { id: string; attributes: { url?: string } }[];
  for (const name of new Set(exported.match(/(?<=\$\{)VIGIL_[A-Z0-9_]+(?=\})/g))) {
    const id = /^VIGIL_CHANNEL_CHANNEL_(\d+)_URL$/.exec(name)?.[1];
    if (id) env[name] = `${channels.find((c) => c.id === id)!.attributes.url!.replace("/***", "/")}rotated/${id}`;
    else env[name] = name.endsWith("_APPRISE_URLS") ? "tgram://999:rotated/1" : `rotated-${name.toLowerCase()}`;
  }
  const r = await vigil(["apply", "-f", file, "--send-secrets"], env);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);

  const { ctx } = server;
  for (const row of await ctx.db.selectFrom("notification_channels").selectAll().where("name", "like", "% channel").execute()) {
    const secrets = openChannelSecrets(row, ctx.secrets);
    const url = channelSettings(row).url as string | undefined;
    const wanted = Object.entries(env).filter(([n]) => n.startsWith(`VIGIL_CHANNEL_CHANNEL_${row.id}_`));
    for (const [n, v] of wanted) {
      const field = n.slice(`VIGIL_CHANNEL_CHANNEL_${row.id}_`.length).toLowerCase();
      expect(`${row.channel_type}.${field}: ${field === "url" ? url : secrets[field]}`).toBe(`${row.channel_type}.${field}: ${v}`);
    }
  }
  const monitors = new Map((await ctx.db.selectFrom("monitors").selectAll().execute()).map((m) => [m.monitor_type, m]));
  expect(ctx.secrets.open(monitors.get("http")!.api_auth_bearer_token_enc!)).toStartWith("rotated-");
  for (const type of ["postgres", "mysql", "redis"]) expect(ctx.secrets.open(monitors.get(type)!.db_password_enc!)).toStartWith("rotated-");

  // and with the same variables, without --send-secrets, nothing is sent again
  const again = await vigil(["apply", "-f", file], env);
  expect(again.stdout.trim()).toBe("no changes");
}, 60_000);
