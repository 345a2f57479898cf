/**
 * `vigil import gatus` end to end (README "Coming from Gatus"): a configuration with every kind of
 * endpoint and condition, alerting providers, alerts with an override, external endpoints and
 * maintenance, imported by the real command into a running server's account and read back
 * through its API. Conditions Vigil cannot express are named on the endpoint's line.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runVigil } from "../helpers/process.ts";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.ts";

const CONFIG = `
alerting:
  slack:
    webhook-url: "\${SLACK_WEBHOOK}"
  discord:
    webhook-url: "https://discord.com/api/webhooks/1/abc"
  pagerduty:
    integration-key: "pd-key"
  telegram:
    token: "123456:ABC"
    id: "-100123"
  email:
    from: "gatus@example.com"
    username: "gatus"
    password: "mail-pass"
    host: "smtp.example.com"
    port: 465
    to: "ops@example.com"
  custom:
    url: "https://hooks.example.com/gatus"
    method: "POST"
    body: '{"text": "[ALERT_DESCRIPTION]"}'
  twilio:
    sid: "x"
    token: "y"
    from: "+1"
    to: "+2"

maintenance:
  start: "23:00"
  duration: 1h
  timezone: "Europe/Amsterdam"
  every: [Monday, Thursday]

endpoints:
  - name: front-end
    group: core
    url: "https://example.org/"
    interval: 5m
    conditions:
      - "[STATUS] == 200"
      - "[RESPONSE_TIME] < 300"
      - "[BODY] == pat(*Example Domain*)"
      - "[CERTIFICATE_EXPIRATION] > 48h"
      - "[IP] == 93.184.215.14"
    alerts:
      - type: slack
        send-on-resolved: true
        minimum-reminder-interval: 30m
      - type: pagerduty
        failure-threshold: 5
      - type: twilio
  - name: api
    url: "https://api.example.org/v1/health"
    method: POST
    body: '{"ping": true}'
    headers:
      Content-Type: application/json
    interval: 30s
    client:
      timeout: 5s
      insecure: true
    conditions:
      - "[STATUS] >= 200"
      - "[STATUS] < 300"
      - "[BODY].status == UP"
      - "[BODY].checks[0].ok == true"
      - "[BODY].version == pat(2.*)"
      - "len([BODY].items) < 5"
      - "has([BODY].errors) == false"
    alerts:
      - type: discord
        provider-override:
          webhook-url: "https://discord.com/api/webhooks/2/override"
    maintenance-windows:
      - start: "07:30"
        duration: 40m
        timezone: "Europe/Berlin"
  - name: head-only
    url: "https://head.example.org/"
    method: HEAD
    conditions:
      - "[STATUS] == 200"
      - "[BODY] == pat(*ready*)"
      - "[BODY].status == UP"
  - name: redis
    url: "tcp://10.0.0.5:6379"
    interval: 30s
    conditions:
      - "[CONNECTED] == true"
      - "[RESPONSE_TIME] <= 50"
  - name: router
    url: "icmp://192.0.2.1"
    conditions:
      - "[CONNECTED] == true"
    alerts:
      - type: email
  - name: dns-check
    url: "8.8.8.8"
    dns:
      query-name: "example.com"
      query-type: "A"
    conditions:
      - "[BODY] == 93.184.215.14"
      - "[DNS_RCODE] == NOERROR"
  - name: ldaps
    url: "tls://ldap.example.com:636"
    interval: 30m
    conditions:
      - "[CONNECTED] == true"
      - "[CERTIFICATE_EXPIRATION] > 240h"
  - name: grpc
    url: "grpcs://grpc.example.com:443"
    conditions:
      - "[CONNECTED] == true"
      - "[BODY].status == SERVING"
  - name: socket
    url: "wss://echo.example.com/"
    body: "status"
    conditions:
      - "[CONNECTED] == true"
      - "[BODY] == pat(*served by*)"
  - name: mail
    url: "starttls://smtp.example.com:587"
    conditions:
      - "[CONNECTED] == true"
      - "[CERTIFICATE_EXPIRATION] > 72h"
    alerts:
      - type: custom
  - name: ssh-box
    url: "ssh://example.com:22"
    ssh:
      username: "u"
      password: "p"
    conditions:
      - "[CONNECTED] == true"
  - name: disabled
    enabled: false
    url: "https://disabled.example.org/"
    conditions:
      - "[STATUS] == 200"

external-endpoints:
  - name: nightly-job
    group: jobs
    token: "gatus-push-token"
    heartbeat:
      interval: 24h
    alerts:
      - type: telegram
`;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function configFile(text: string): string {
  const dir = tempDir("vigil-gatus-");
  dirs.push(dir);
  const file = join(dir, "config.yaml");
  writeFileSync(file, text);
  return file;
}

const importGatus = (s: TestServer, file: string, ...extra: string[]) =>
  runVigil(["import", "gatus", file, "--account", "default", "--data", s.dataDir, "--heartbeat-url", "https://ping.example.com", "--env", "SLACK_WEBHOOK", ...extra], { SLACK_WEBHOOK: "https://hooks.slack.com/services/T/B/FROM-ENV" });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Resource = { id: string; attributes: any };
async function all(s: TestServer, path: string): Promise<Map<string, Resource>> {
  const r = await s.api("GET", `${path}?per_page=100`);
  return new Map((r.json.data as Resource[]).map((d) => [d.attributes.name, d]));
}
const lineOf = (out: string, kind: string, name: string) => out.split("\n").find((l) => l.includes(`${kind} "${name}" [`)) ?? `(no line for ${kind} "${name}")`;

describe("a Gatus configuration with every kind of endpoint and condition", () => {
  let s: TestServer;
  let out: string;
  beforeAll(async () => {
    s = await startTestServer();
    const r = await importGatus(s, configFile(CONFIG));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    out = r.stdout;
  });
  afterAll(() => s?.stop());

  test("endpoints become monitors of the matching type with their conditions mapped", async () => {
    const m = await all(s, "/api/v1/monitors");
    expect(m.get("front-end")!.attributes).toMatchObject({
      monitor_type: "http", target: "https://example.org/", interval_sec: 300, timeout_ms: 10_000, expected_http_codes: "200",
      api_max_latency_ms: 299, api_expected_body_contains: "Example Domain", ssl_expiry_warn_days: 2, alert_repeat_minutes: 30,
    });
    expect(m.get("api")!.attributes).toMatchObject({
      monitor_type: "http", method: "POST", api_body: '{"ping": true}', api_headers_json: { "Content-Type": "application/json" }, interval_sec: 30, timeout_ms: 5000, tls_verify: false, expected_http_codes: "200-299",
      api_json_assertions_json: [
        { path: "status", op: "equals", value: "UP" },
        { path: "checks[0].ok", op: "equals", value: "true" },
        { path: "version", op: "regex", value: "^2\\..*$" },
        { path: "errors", op: "is_null" },
      ],
    });
    expect(m.get("head-only")!.attributes).toMatchObject({ monitor_type: "http", method: "HEAD", expected_http_codes: "200", api_expected_body_contains: null, api_json_assertions_json: null });
    expect(m.get("redis")!.attributes).toMatchObject({ monitor_type: "tcp", target: "10.0.0.5:6379", api_max_latency_ms: 50 });
    expect(m.get("router")!.attributes).toMatchObject({ monitor_type: "ping", target: "192.0.2.1", interval_sec: 60 });
    expect(m.get("dns-check")!.attributes).toMatchObject({ monitor_type: "dns", target: "example.com", dns_record_type: "A", dns_resolver: "8.8.8.8", dns_expected_answer: "93.184.215.14" });
    expect(m.get("ldaps")!.attributes).toMatchObject({ monitor_type: "ssl", target: "ldap.example.com:636", ssl_expiry_warn_days: 10, interval_sec: 1800 });
    expect(m.get("grpc")!.attributes).toMatchObject({ monitor_type: "grpc", target: "grpc.example.com:443", grpc_tls: true });
    expect(m.get("socket")!.attributes).toMatchObject({ monitor_type: "websocket", target: "wss://echo.example.com/", ws_send: "status", ws_expect: "served by" });
    expect(m.get("mail")!.attributes).toMatchObject({ monitor_type: "smtp", target: "smtp.example.com:587", smtp_security: "starttls", ssl_expiry_warn_days: 3 });
    expect(m.get("disabled")!.attributes.is_paused).toBe(true);
    const g = await all(s, "/api/v1/groups");
    expect(m.get("front-end")!.attributes.group_id).toBe(Number(g.get("core")!.id));
    expect(m.get("nightly-job")!.attributes.group_id).toBe(Number(g.get("jobs")!.id));
    expect(m.get("api")!.attributes.group_id).toBeNull();
    expect(m.has("ssh-box")).toBe(false);
    expect(lineOf(out, "monitor", "ssh-box")).toContain("Vigil has no ssh monitor");
  });

  test("conditions Vigil cannot express are named on the endpoint's line, not dropped", () => {
    expect(lineOf(out, "monitor", "front-end")).toStartWith("created");
    expect(lineOf(out, "monitor", "front-end")).toContain('conditions not kept: "[IP] == 93.184.215.14" (Vigil does not check the resolved address)');
    expect(lineOf(out, "monitor", "api")).toContain('"len([BODY].items) < 5" (Vigil has no length comparison)');
    expect(lineOf(out, "monitor", "front-end")).toContain("slower answers make the monitor degraded, not down");
    expect(lineOf(out, "group", "core")).toStartWith("created");
    // a HEAD answer has no body: its body conditions go, said, and the monitor comes
    expect(lineOf(out, "monitor", "head-only")).toStartWith("created");
    expect(lineOf(out, "monitor", "head-only")).toContain('body text "ready" not kept: the answer to a HEAD request has no body');
    expect(lineOf(out, "monitor", "head-only")).toContain("JSON check not kept: the answer to a HEAD request has no body");
  });

  test("alerting providers become channels, alerts link them, an override is a channel of its own", async () => {
    const ch = await all(s, "/api/v1/notification-channels");
    const m = await all(s, "/api/v1/monitors");
    expect(ch.get("Gatus slack")!.attributes.channel_type).toBe("slack");
    expect(ch.get("Gatus discord")!.attributes.channel_type).toBe("discord");
    expect(ch.get("Gatus pagerduty")!.attributes.channel_type).toBe("pagerduty");
    expect(ch.get("Gatus telegram")!.attributes).toMatchObject({ channel_type: "telegram", telegram_chat_id: "-100123" });
    expect(ch.get("Gatus email")!.attributes).toMatchObject({ channel_type: "email", smtp_port: 465, smtp_security: "tls", smtp_user: "gatus", email_to: "ops@example.com" });
    expect(ch.get("Gatus custom")!.attributes.channel_type).toBe("webhook");
    expect(ch.get("Gatus discord (api)")!.attributes.channel_type).toBe("discord");
    expect(lineOf(out, "channel", "Gatus twilio")).toContain("Vigil has no twilio channel");
    const id = (n: string) => Number(ch.get(n)!.id);
    expect(m.get("front-end")!.attributes.notification_channel_ids.sort()).toEqual([id("Gatus slack"), id("Gatus pagerduty")].sort());
    expect(lineOf(out, "monitor", "front-end")).toContain("twilio alert not linked");
    expect(m.get("api")!.attributes.notification_channel_ids).toEqual([id("Gatus discord (api)")]);
    expect(m.get("router")!.attributes.notification_channel_ids).toEqual([id("Gatus email")]);
    // an endpoint without alerts gets none, not the account's defaults
    expect(m.get("redis")!.attributes.notification_channel_ids).toEqual([]);
    expect(out).toContain("note: alert thresholds (failure/success: 5/2) are per alert in Gatus");
  });

  test("the environment fills ${VAR} named with --env, as Gatus does", async () => {
    // the slack URL came from SLACK_WEBHOOK; only its scheme and host are shown
    const slack = (await all(s, "/api/v1/notification-channels")).get("Gatus slack")!;
    expect(slack.attributes.url).toStartWith("https://hooks.slack.com/");
    const row = await s.ctx.db.selectFrom("notification_channels").select("config_json").where("id", "=", Number(slack.id)).executeTakeFirstOrThrow();
    expect(row.config_json).toContain("FROM-ENV");
  });

  test("external endpoints become heartbeat monitors with new ping URLs", async () => {
    const hb = (await all(s, "/api/v1/monitors")).get("nightly-job")!.attributes;
    expect(hb).toMatchObject({ monitor_type: "heartbeat", heartbeat_period_sec: 86400 });
    expect(lineOf(out, "monitor", "nightly-job")).toContain(`new ping URL: https://ping.example.com/h/${hb.heartbeat_token}`);
    expect(out).toContain("external endpoints became heartbeat monitors with new ping URLs");
  });

  test("maintenance: the global one holds every endpoint, an endpoint's own holds it", async () => {
    const w = await all(s, "/api/v1/maintenance-windows");
    const m = await all(s, "/api/v1/monitors");
    expect(w.get("Gatus maintenance")!.attributes).toMatchObject({ schedule: "0 23 * * 1,4", duration_sec: 3600, timezone: "Europe/Amsterdam" });
    expect(w.get("Gatus maintenance")!.attributes.monitor_ids.length).toBe(11);
    expect(w.get("api maintenance")!.attributes).toMatchObject({ schedule: "30 7 * * *", duration_sec: 2400, timezone: "Europe/Berlin", monitor_ids: [Number(m.get("api")!.id)] });
  });

  test("a second run creates nothing", async () => {
    const r = await importGatus(s, configFile(CONFIG));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/gatus import done: 0 created, \d+ skipped, \d+ already in the account/);
  });
});

describe("dry run and bad files", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.stop());

  test("--dry-run writes nothing", async () => {
    const r = await importGatus(s, configFile(CONFIG), "--dry-run");
    expect(r.code).toBe(0);
    expect(lineOf(r.stdout, "monitor", "front-end")).toStartWith("would create");
    expect(r.stdout).toContain("nothing was written");
    expect((await s.api("GET", "/api/v1/monitors")).json.data).toEqual([]);
    expect((await s.api("GET", "/api/v1/notification-channels")).json.data).toEqual([]);
  });

  test.each([
    [["import"], "Usage"],
    [["import", "nagios", "f"], 'unknown import source "nagios"'],
    [["import", "gatus"], "needs the FILE"],
    [["import", "gatus", "config.yaml"], "needs --account NAME"],
    [["import", "uptime-kuma", "kuma.db", "--account", "a", "--heartbeat-url", "not a url"], "--heartbeat-url"],
  ])("usage error %p exits 2 and says %p", async (args, message) => {
    const r = await runVigil(args, { VIGIL_DATA: s.dataDir });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toContain(message);
  });

  test("an unknown account fails with exit 1 and writes nothing", async () => {
    const r = await runVigil(["import", "gatus", configFile(CONFIG), "--account", "nobody", "--data", s.dataDir, "--env", "SLACK_WEBHOOK"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no account named "nobody"');
    expect((await s.api("GET", "/api/v1/monitors")).json.data).toEqual([]);
  });

  test("ping URLs printed with the default address say how to see them as they will be used", async () => {
    const file = configFile("external-endpoints:\n  - name: job\n    token: t\n    heartbeat:\n      interval: 1h\n");
    const r = await runVigil(["import", "gatus", file, "--account", "default", "--data", s.dataDir]);
    expect(r.code).toBe(0);
    expect(lineOf(r.stdout, "monitor", "job")).toContain("new ping URL: http://localhost:8080/h/");
    expect(r.stdout).toContain("note: the ping URLs above start with http://localhost:8080, the default: run again with --heartbeat-url");
  });

  test("a file reading variables not named with --env is refused whole, naming them and how to allow them", async () => {
    // the operator's environment holds a secret the tenant's file asks for
    const operator = { OPERATOR_SECRET: "operator-secret-7f3a9c", HOOK_HOST: "hooks.example.com" };
    const text = "alerting:\n  custom:\n    url: \"https://${HOOK_HOST}/h?k=$OPERATOR_SECRET\"\nendpoints:\n  - name: leaky\n    url: \"https://example.org/?s=${OPERATOR_SECRET}&p=$$x\"\n";
    const file = configFile(text);
    const run = (...extra: string[]) => runVigil(["import", "gatus", file, "--account", "default", "--data", s.dataDir, ...extra], operator);
    const names = async (path: string) => (await s.api("GET", path)).json.data.map((x: Resource) => x.attributes.name).sort();
    const before = { monitors: await names("/api/v1/monitors"), channels: await names("/api/v1/notification-channels") };
    for (const r of [await run(), await run("--dry-run"), await run("--env", "HOOK_HOST")]) {
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).not.toContain("operator-secret-7f3a9c");
      expect(r.stderr).toContain("--env");
    }
    const none = await run();
    expect(none.stderr).toContain("it reads ${HOOK_HOST}, ${OPERATOR_SECRET} from the environment, and vigil import reads only the variables named with --env: run it again with --env HOOK_HOST,OPERATOR_SECRET to read them");
    expect((await run("--env", "HOOK_HOST")).stderr).toContain("it reads ${OPERATOR_SECRET} from the environment");
    expect({ monitors: await names("/api/v1/monitors"), channels: await names("/api/v1/notification-channels") }).toEqual(before);

    // named, comma-separated or repeated, they are read ($$ stays a dollar)
    const r = await run("--env", "HOOK_HOST,OPERATOR_SECRET");
    expect(r.code).toBe(0);
    const m = (await s.api("GET", "/api/v1/monitors")).json.data.find((x: Resource) => x.attributes.name === "leaky");
    expect(m.attributes.target).toBe("https://example.org/?s=operator-secret-7f3a9c&p=$x");
    expect((await runVigil(["import", "gatus", file, "--account", "default", "--data", s.dataDir, "--env", "HOOK_HOST", "--env", "OPERATOR_SECRET"], operator)).code).toBe(0);
  });

  test("--env takes variable names, and only for gatus", async () => {
    const bad = await runVigil(["import", "gatus", configFile(CONFIG), "--account", "default", "--data", s.dataDir, "--env", "NOT-A-NAME"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--env takes variable names (letters, digits and _), not "NOT-A-NAME"');
    const kuma = await runVigil(["import", "uptime-kuma", "kuma.db", "--account", "default", "--data", s.dataDir, "--env", "HOME"]);
    expect(kuma.code).toBe(2);
    expect(kuma.stderr).toContain("--env is for import gatus");
  });

  test("a file that is not YAML fails with a message", async () => {
    const r = await importGatus(s, configFile("endpoints: [unclosed\n  - : :"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not valid YAML");
  });
});
