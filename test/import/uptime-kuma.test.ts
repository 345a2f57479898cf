/**
 * `vigil import uptime-kuma` end to end (README "Coming from Uptime Kuma"): a Kuma database built
 * from Kuma's own schema files (1.23 and 2.x), realistic rows of every kind, the command run as a
 * real child process on the data directory of a running server, and what it created read back
 * through that server's API. Also: --dry-run writes nothing, a second run creates nothing new, rows
 * still only in Kuma's WAL are read, and a running server checks the new monitors at once.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { runVigil } from "../helpers/process.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { buildKumaDatabase, type KumaVersion } from "../helpers/uptime-kuma.ts";
import { insertKumaRows, NOTIFICATIONS } from "./kuma-rows.ts";

const HEARTBEAT_URL = "https://ping.example.com";
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function kumaDatabase(version: KumaVersion, target: string): Promise<string> {
  const dir = tempDir("vigil-kuma-");
  dirs.push(dir);
  const file = join(dir, "kuma.db");
  await buildKumaDatabase(version, file);
  const db = new Database(file);
  insertKumaRows(db, version, target);
  db.close();
  return file;
}

const importKuma = (s: TestServer, file: string, ...extra: string[]) => runVigil(["import", "uptime-kuma", file, "--account", "default", "--data", s.dataDir, "--heartbeat-url", HEARTBEAT_URL, ...extra]);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Resource = { id: string; attributes: any };
async function all(s: TestServer, path: string): Promise<Map<string, Resource>> {
  const r = await s.api("GET", `${path}?per_page=100`);
  expect(r.status).toBe(200);
  return new Map((r.json.data as Resource[]).map((d) => [d.attributes.name, d]));
}

const lineOf = (out: string, kind: string, name: string) => out.split("\n").find((l) => l.includes(`${kind} "${name}" [`)) ?? `(no line for ${kind} "${name}")`;

describe.each(["1.23", "2.x"] as const)("Uptime Kuma %s", (version) => {
  let s: TestServer;
  let target: HttpTarget;
  let file: string;
  let out: string;

  beforeAll(async () => {
    target = await startHttpTarget({ "/health": () => new Response("ok") });
    s = await startTestServer();
    file = await kumaDatabase(version, target.url);
    const r = await importKuma(s, file);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    out = r.stdout;
  });
  afterAll(async () => {
    await s?.stop();
    await target?.close();
  });

  test("says what it read, one line per item, and a summary", () => {
    expect(out).toContain(`Uptime Kuma ${version === "1.23" ? "1.x" : "2.x"} database`);
    expect(out).toMatch(/uptime-kuma import done: \d+ created, \d+ skipped, 0 already in the account/);
    for (const name of ["API health", "Homepage", "Head check", "Status JSON", "Postgres port", "Router", "Mail DNS", "Nightly backup", "Web container", "Main DB", "Shop DB", "Cache", "gRPC", "Old API", "Short link", "Orders webhook", "Old shop", "Wide codes"]) {
      expect(lineOf(out, "monitor", name)).toStartWith("created");
    }
    expect(lineOf(out, "monitor", "Game server")).toContain("skipped");
    expect(lineOf(out, "monitor", "Game server")).toContain("Vigil has no steam monitor");
    expect(lineOf(out, "monitor", "Broker")).toContain("Vigil has no mqtt monitor");
    expect(lineOf(out, "monitor", "Must be down")).toContain("upside-down");
    expect(lineOf(out, "group", "Production")).toStartWith("created");
    expect(lineOf(out, "group", "Databases")).toContain(`inside group "Production" in Kuma: Vigil's groups are not nested`);
    expect(lineOf(out, "monitor", "API health")).toContain('tag "team#web" kept as "team-web"');
    expect(out).toContain("note: retries: Kuma marks a monitor down after its own number of retries (0 on");
  });

  test("monitors of each type arrive with their settings; secrets are sealed, not shown", async () => {
    const m = await all(s, "/api/v1/monitors");
    const ch = await all(s, "/api/v1/notification-channels");
    const api = m.get("API health")!.attributes;
    expect(api).toMatchObject({
      monitor_type: "http", target: `${target.url}/health`, method: "POST", interval_sec: 30, timeout_ms: 12_000, expected_http_codes: "200-299,301",
      tls_verify: false, follow_redirects: false, api_body: '{"probe":true}', api_headers_json: { "X-Env": "prod", "Content-Type": "application/json" },
      api_auth_type: "basic", api_auth_basic_user: "probe", is_paused: false,
    });
    expect(api.notification_channel_ids.sort()).toEqual([Number(ch.get("Ops Slack")!.id), Number(ch.get("On-call Telegram")!.id)].sort());
    expect(JSON.stringify(api)).not.toContain("basic-secret");
    // Kuma's resend every 10 checks of 2 minutes: a reminder every 20 minutes
    expect(m.get("Homepage")!.attributes).toMatchObject({ monitor_type: "http", keyword: "Welcome", interval_sec: 120, timeout_ms: 48_000, follow_redirects: true, expected_http_codes: null, alert_repeat_minutes: 20 });
    expect(api.alert_repeat_minutes).toBeNull();
    // a Kuma link to a notification Vigil has no channel for is named, not made
    expect(m.get("Homepage")!.attributes.notification_channel_ids).toEqual([]);
    expect(lineOf(out, "monitor", "Homepage")).toContain(`channels not imported, so not linked: "LINE" (notification`);
    expect(m.get("Status JSON")!.attributes.api_json_assertions_json).toEqual([{ path: "data.status", op: "equals", value: "ok" }]);
    // a HEAD answer has no body: the monitor comes without its keyword, said on its line
    expect(m.get("Head check")!.attributes).toMatchObject({ monitor_type: "http", method: "HEAD", keyword: null });
    expect(lineOf(out, "monitor", "Head check")).toContain('keyword "Welcome" not kept: the answer to a HEAD request has no body');
    expect(lineOf(out, "monitor", "Homepage")).toContain("follows up to 15 redirects (Kuma: 10)");
    expect(m.get("Postgres port")!.attributes).toMatchObject({ monitor_type: "tcp", target: "db.internal:5432" });
    expect(m.get("Router")!.attributes).toMatchObject({ monitor_type: "ping", target: "router.lan", interval_sec: 20 });
    expect(m.get("Mail DNS")!.attributes).toMatchObject({ monitor_type: "dns", target: "example.com", dns_record_type: "MX", dns_resolver: "1.1.1.1" });
    expect(m.get("Web container")!.attributes).toMatchObject({ monitor_type: "docker", target: "web", docker_host: "unix:///var/run/docker.sock" });
    expect(m.get("Main DB")!.attributes).toMatchObject({ monitor_type: "postgres", target: "postgres://app@db.internal:5432/app", db_tls: true, db_query: "SELECT 1" });
    expect(m.get("Shop DB")!.attributes).toMatchObject({ monitor_type: "mysql", target: "mysql://shop@mysql.internal:3306/shop" });
    expect(m.get("Cache")!.attributes).toMatchObject({ monitor_type: "redis", target: "redis://cache.internal:6379", redis_username: null });
    expect(m.get("gRPC")!.attributes).toMatchObject({ monitor_type: "grpc", target: "grpc.internal:50051", grpc_tls: false });
    expect(lineOf(out, "monitor", "gRPC")).toContain("Vigil asks grpc.health.v1.Health/Check");
    expect(m.get("Old API")!.attributes.is_paused).toBe(true);
    for (const name of ["Game server", "Broker", "Must be down", "Production"]) expect(m.has(name)).toBe(false);
    // group monitors are groups; Kuma's parent is the group a monitor is in; tags are name:value
    const g = await all(s, "/api/v1/groups");
    expect(g.get("Production")!.attributes).toMatchObject({ description: "customer-facing", monitor_count: 1 });
    expect(api.group_id).toBe(Number(g.get("Production")!.id));
    expect(m.get("Main DB")!.attributes.group_id).toBe(Number(g.get("Databases")!.id));
    expect(m.get("Router")!.attributes.group_id).toBeNull();
    expect(api.tags).toEqual(["env:prod", "team-web"]);
    expect(m.get("Homepage")!.attributes.tags).toEqual(["env:prod"]);
    expect((await s.api("GET", "/api/v1/monitors?tag=env:prod")).json.data.length).toBe(2);
    if (version === "2.x") {
      expect(m.get("Mail server")!.attributes).toMatchObject({ monitor_type: "smtp", target: "mail.example.com:587", smtp_security: "starttls" });
      expect(m.get("Socket")!.attributes).toMatchObject({ monitor_type: "websocket", target: "wss://ws.example.com/socket" });
      expect(m.get("Token API")!.attributes).toMatchObject({ monitor_type: "http", api_auth_type: "bearer" });
      // a 2.x DNS condition "record equals" is the expected answer; the resolver keeps its port
      expect(m.get("Web DNS")!.attributes).toMatchObject({ monitor_type: "dns", dns_resolver: "9.9.9.9:5353", dns_expected_answer: "93.184.215.14" });
    }
    // the passwords went in as write-only secrets: the dashboard's edit form says they are stored
    const rows = await s.ctx.db.selectFrom("monitors").select(["name", "db_password_enc", "api_auth_basic_pass_enc"]).execute();
    const byName = new Map(rows.map((r) => [r.name, r]));
    expect(byName.get("Main DB")!.db_password_enc).not.toBeNull();
    expect(byName.get("Cache")!.db_password_enc).not.toBeNull();
    expect(byName.get("API health")!.api_auth_basic_pass_enc).not.toBeNull();
    expect(String(byName.get("Main DB")!.db_password_enc)).not.toContain("s3cret");
  });

  test("a push monitor becomes a heartbeat with a new ping URL, printed, that the server accepts", async () => {
    const hb = (await all(s, "/api/v1/monitors")).get("Nightly backup")!.attributes;
    expect(hb).toMatchObject({ monitor_type: "heartbeat", heartbeat_period_sec: 86400 });
    expect(hb.heartbeat_token).not.toBe("kumaPushToken123");
    expect(lineOf(out, "monitor", "Nightly backup")).toContain(`new ping URL: ${HEARTBEAT_URL}/h/${hb.heartbeat_token}`);
    expect(out).toContain("push monitors became heartbeat monitors with new ping URLs");
    expect(out).not.toContain("the default: run again");
    const ping = await fetch(`${s.url}/h/${hb.heartbeat_token}`);
    expect(await ping.json()).toEqual({ result: "accepted" });
    expect(hb.notification_channel_ids).toHaveLength(1);
  });

  test("notification channels of every kind Vigil has; Kuma's default becomes default_for_new_monitors", async () => {
    const ch = await all(s, "/api/v1/notification-channels");
    for (const n of NOTIFICATIONS) {
      if (n.expect === null) {
        expect(ch.has(n.name)).toBe(false);
        expect(lineOf(out, "channel", n.name)).toStartWith("skipped");
      } else {
        expect(ch.get(n.name)?.attributes.channel_type).toBe(n.expect);
      }
    }
    expect(lineOf(out, "channel", "LINE")).toContain("Vigil has no LineNotify channel");
    expect(lineOf(out, "channel", "Private ntfy")).toContain("sends no credentials");
    expect(ch.get("Ops Slack")!.attributes.default_for_new_monitors).toBe(true);
    expect(ch.get("Ops Discord")!.attributes.default_for_new_monitors).toBe(false);
    expect(ch.get("Mail")!.attributes).toMatchObject({ email_to: "ops@example.com, boss@example.com", smtp_host: "smtp.example.com", smtp_port: 587, smtp_security: "starttls", smtp_user: "kuma" });
    expect(ch.get("On-call Telegram")!.attributes.telegram_chat_id).toBe("-100987654");
    expect(ch.get("Opsgenie")!.attributes.url).toStartWith("https://api.eu.opsgenie.com/");
    expect(ch.get("Home")!.attributes.homeassistant_service).toBe("notify.mobile_app_pixel");
    expect(ch.get("Signal")!.attributes).toMatchObject({ signal_number: "+4915112345678", signal_recipients: ["+4917612345678", "+4917612345679"] });
    expect(ch.get("Matrix")!.attributes.matrix_room_id).toBe("!room:example.org");
  });

  test("maintenances: one-off and cron windows; what a window cannot say is skipped with why", async () => {
    const w = await all(s, "/api/v1/maintenance-windows");
    const m = await all(s, "/api/v1/monitors");
    expect(w.get("DB upgrade")!.attributes).toMatchObject({
      timezone: "Europe/Berlin", starts_at: "2099-01-10T01:00:00.000Z", ends_at: "2099-01-10T03:00:00.000Z", description: "Postgres 17", monitor_ids: [Number(m.get("Main DB")!.id)],
    });
    expect(w.get("Weekly patching")!.attributes).toMatchObject({ schedule: "0 3 * * 1,3", duration_sec: 5400, timezone: "UTC", monitor_ids: [Number(m.get("API health")!.id)] });
    // SAME_AS_SERVER: the server's zone Kuma recorded
    expect(w.get("Nightly")!.attributes).toMatchObject({ schedule: "30 1 * * *", duration_sec: 1800, timezone: "Europe/Paris" });
    // a window linked to a status page holds the page's monitors
    expect(w.get("Status page work")!.attributes.monitor_ids.length).toBe(4);
    expect(lineOf(out, "maintenance window", "By hand")).toContain("manual maintenance");
    expect(lineOf(out, "maintenance window", "Every three days")).toContain("every 3 days");
    expect(lineOf(out, "maintenance window", "Last year")).toContain("it ended on 2020-01-01 02:00:00");
    expect(lineOf(out, "maintenance window", "Games only")).toContain("none of its monitors was imported");
    for (const name of ["By hand", "Every three days", "Last year", "Games only"]) expect(w.has(name)).toBe(false);
  });

  test("the status page with its monitors in Kuma's order, its slug, theme and domain", async () => {
    const p = (await all(s, "/api/v1/status-pages")).get("Public status")!.attributes;
    const m = await all(s, "/api/v1/monitors");
    expect(p).toMatchObject({ slug: "public", public_theme: "dark", description: "Our services", is_enabled: true, custom_domain: "status.example.com" });
    expect(p.monitor_ids).toEqual(["API health", "Homepage", "Orders webhook", "Postgres port"].map((n) => Number(m.get(n)!.id)));
    const line = lineOf(out, "status page", "Public status");
    expect(line).toContain("its 2 sections (Services, Infrastructure) not kept: a Vigil page shows its monitors by the group each is in");
    expect(line).toContain("footer not kept");
    // 1.23's google_analytics_tag_id and 2.x's analytics_id alike
    expect(line).toContain("analytics not kept");
    expect(line).toContain(`monitors not imported, so not linked: "Game server" (monitor`);
  });

  test("http monitors accepting 3xx codes are all imported, and stay on their window and status page", async () => {
    const m = await all(s, "/api/v1/monitors");
    // maxredirects 0: the redirect itself is judged
    expect(m.get("Short link")!.attributes).toMatchObject({ follow_redirects: false, expected_http_codes: "301" });
    expect(lineOf(out, "monitor", "Short link")).not.toContain("3xx");
    // Kuma follows redirects: the 3xx codes it accepts are never its answer, and are dropped
    expect(m.get("Orders webhook")!.attributes).toMatchObject({ method: "POST", follow_redirects: true, expected_http_codes: null });
    expect(lineOf(out, "monitor", "Orders webhook")).toContain("3xx codes dropped from the accepted status codes (200-299, 301 → 200-299)");
    expect(m.get("Old shop")!.attributes).toMatchObject({ follow_redirects: true, expected_http_codes: null });
    expect(lineOf(out, "monitor", "Old shop")).toContain("(301-399 → 200-299, the default)");
    expect(m.get("Wide codes")!.attributes).toMatchObject({ follow_redirects: true, expected_http_codes: "200-299,400-499" });
    expect(lineOf(out, "monitor", "Wide codes")).toContain("follows up to 15 redirects (Kuma: 5)");
    const orders = Number(m.get("Orders webhook")!.id);
    // a time zone Kuma stored JSON-encoded is read as its text
    const w = (await all(s, "/api/v1/maintenance-windows")).get("Office network window")!.attributes;
    expect(w).toMatchObject({ timezone: "Europe/Berlin", starts_at: "2099-04-01T20:00:00.000Z", ends_at: "2099-04-02T00:00:00.000Z", monitor_ids: [orders] });
    expect((await all(s, "/api/v1/status-pages")).get("Public status")!.attributes.monitor_ids).toContain(orders);
    if (version === "2.x") {
      expect(m.get("IMAP port")!.attributes).toMatchObject({ monitor_type: "tcp", target: "imap.example.com:993" });
      expect(lineOf(out, "monitor", "IMAP port")).toContain("SSL not kept: Vigil's tcp monitor only opens the connection");
    }
  });

  test("a second run creates nothing and says each item is already there", async () => {
    const before = (await all(s, "/api/v1/monitors")).size;
    const r = await importKuma(s, file);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/uptime-kuma import done: 0 created, \d+ skipped, \d+ already in the account/);
    expect(lineOf(r.stdout, "monitor", "API health")).toStartWith("exists");
    expect(lineOf(r.stdout, "monitor", "Nightly backup")).toContain(`its ping URL: ${HEARTBEAT_URL}/h/`);
    expect((await all(s, "/api/v1/monitors")).size).toBe(before);
  });

  test("the running server checks an imported monitor at once", async () => {
    // API health points at the test's target: the server learnt of it from the import
    expect(await waitFor(() => target.requests.some((q) => q.path === "/health"), { timeoutMs: 15_000 })).toBe(true);
    const q = target.requests.find((r) => r.path === "/health")!;
    expect(q.method).toBe("POST");
    expect(q.headers.authorization).toBe(`Basic ${btoa("probe:basic-secret")}`);
  });
});

describe("dry run and unusual files", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.stop());

  test("--dry-run writes nothing and says what would be created", async () => {
    const file = await kumaDatabase("2.x", "http://127.0.0.1:9");
    const r = await importKuma(s, file, "--dry-run");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("dry run: nothing will be written");
    expect(lineOf(r.stdout, "monitor", "API health")).toStartWith("would create");
    expect(lineOf(r.stdout, "monitor", "Nightly backup")).toContain("with a new ping URL");
    expect(lineOf(r.stdout, "monitor", "Game server")).toStartWith("skipped");
    expect(r.stdout).toMatch(/dry run of the uptime-kuma import: \d+ to create, \d+ skipped, 0 already in the account; nothing was written/);
    for (const path of ["/api/v1/monitors", "/api/v1/notification-channels", "/api/v1/maintenance-windows", "/api/v1/status-pages"]) {
      expect((await s.api("GET", path)).json.data).toEqual([]);
    }
  });

  test("rows Kuma has written only to its WAL so far are read, while Kuma holds the database open", async () => {
    const dir = tempDir("vigil-kuma-wal-");
    dirs.push(dir);
    const file = join(dir, "kuma.db");
    await buildKumaDatabase("2.x", file);
    // Kuma's connection: WAL, never checkpointed while it runs
    const kuma = new Database(file);
    try {
      kuma.run("PRAGMA journal_mode = WAL");
      kuma.run("PRAGMA wal_autocheckpoint = 0");
      kuma.run("INSERT INTO user (username, password, active) VALUES ('admin', 'x', 1)");
      kuma.run("INSERT INTO monitor (name, type, url, interval, user_id, active, accepted_statuscodes_json, maxredirects) VALUES ('Only in the WAL', 'http', 'https://wal.example.com/', 60, 1, 1, '[\"200-299\"]', 10)");
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
      // the main file alone does not have the row yet
      copyFileSync(file, join(dir, "main-only.db"));
      const mainOnly = new Database(join(dir, "main-only.db"), { readonly: true });
      expect(mainOnly.query("SELECT count(*) AS n FROM monitor").get()).toEqual({ n: 0 });
      mainOnly.close();
      const r = await importKuma(s, file, "--dry-run");
      expect(r.code).toBe(0);
      expect(lineOf(r.stdout, "monitor", "Only in the WAL")).toStartWith("would create");
      // Kuma's files are untouched: the WAL is still there, the row still in it
      expect(existsSync(`${file}-wal`)).toBe(true);
    } finally {
      kuma.close();
    }
  });

  // Kuma's data directory mounted read-only (a container given Kuma's volume with :ro): SQLite
  // cannot make the -shm index a WAL reader needs, so the import reads a copy of the database and
  // its WAL. Making a read-only mount takes root and a kernel that allows bind mounts here.
  const mountable = process.getuid?.() === 0 && Bun.spawnSync(["mount", "--version"]).exitCode === 0;
  test.skipIf(!mountable)("a database with WAL content on a read-only mount is read whole, from a copy", async () => {
    const dir = tempDir("vigil-kuma-ro-");
    const mnt = tempDir("vigil-kuma-mnt-");
    dirs.push(dir, mnt);
    const file = join(dir, "kuma.db");
    await buildKumaDatabase("1.23", file);
    const kuma = new Database(file);
    kuma.run("PRAGMA journal_mode = WAL");
    kuma.run("PRAGMA wal_autocheckpoint = 0");
    kuma.run("INSERT INTO monitor (name, type, url, interval, active, accepted_statuscodes_json, maxredirects) VALUES ('Read-only WAL', 'http', 'https://ro.example.com/', 60, 1, '[\"200-299\"]', 10)");
    // what a stopped Kuma leaves when it was killed: the WAL without its index
    copyFileSync(file, join(mnt, "kuma.db"));
    copyFileSync(`${file}-wal`, join(mnt, "kuma.db-wal"));
    kuma.close();
    const bind = Bun.spawnSync(["mount", "--bind", mnt, mnt]);
    if (bind.exitCode !== 0) return console.warn("skipped: bind mounts are not allowed here");
    try {
      expect(Bun.spawnSync(["mount", "-o", "remount,bind,ro", mnt]).exitCode).toBe(0);
      const r = await importKuma(s, join(mnt, "kuma.db"), "--dry-run");
      expect(r.stderr).toBe("");
      expect(lineOf(r.stdout, "monitor", "Read-only WAL")).toStartWith("would create");
    } finally {
      Bun.spawnSync(["umount", mnt]);
    }
  });

  test("a file that is not a Kuma database fails with a message and writes nothing", async () => {
    const dir = tempDir("vigil-kuma-bad-");
    dirs.push(dir);
    const file = join(dir, "other.db");
    new Database(file).run("CREATE TABLE t (x)");
    const r = await importKuma(s, file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not an Uptime Kuma database");
    const missing = await importKuma(s, join(dir, "nope.db"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("does not exist");
  });
});
