/**
 * Issue 19 point 7: /metrics as Prometheus accepts it. A real server after http checks, heartbeat
 * pings (one /fail: an incident opens) and two alert deliveries (one receiver takes it, one refuses
 * it for good): Debian's `promtool check metrics` passes on the text (skipped loudly when promtool
 * is not installed: `apt-get install prometheus`, as .ci/run does), no gauge or histogram carries
 * the counters' `_total` suffix, and the series added for the issue are there with their types and
 * values: heartbeat checks in vigil_checks_total, open incidents, alert deliveries by result,
 * skipped runs as a counter, the saturation figures. Issue 23 point 5: the per-monitor series are in
 * the same text, of every account's monitors (--metrics-public), promtool accepting names with
 * quotes, backslashes, line feeds, tabs, non-ASCII characters and a lone UTF-16 surrogate. Issue 33
 * point 6: the names are on vigil_monitor_info, every family has a sample, the runtime's figures are
 * Bun's, and the README's alert rules pass `promtool test rules` on this scrape's series, a rename
 * while the down alert is pending included.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseSamples, samplesOf } from "../helpers/prometheus.ts";
import { makeAccount, startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";

const PROMTOOL = Bun.which("promtool");
if (!PROMTOOL) console.error("\n!!! promtool check metrics SKIPPED: promtool is not installed (apt-get install prometheus) !!!\n");

let s: TestServer;
let target: HttpTarget;
let taker: Receiver;
let refuser: Receiver;
let text = "";
/** what a name may hold that the text format must escape or carry as UTF-8; the surrogate becomes U+FFFD */
const ODD_NAME = 'Café "prod" \\ api\nline two\t✓ 日本 \ud800';
const ids: Record<string, number> = {};

beforeAll(async () => {
  target = await startHttpTarget({ "/ok": () => new Response("fine") });
  taker = startReceiver();
  refuser = startReceiver(() => new Response("no such hook", { status: 404 }));
  s = await startTestServer(["--metrics-public"]);
  const channel = async (name: string, url: string) => Number((await s.api("POST", "/api/v1/notification-channels", { name, channel_type: "webhook", url })).json.data.id);
  const channels = [await channel("takes it", `${taker.url}/hook`), await channel("refuses it", `${refuser.url}/hook`)];
  expect((await s.api("POST", "/api/v1/monitors", { name: "site", monitor_type: "http", target: `${target.url}/ok`, interval_sec: 60, timeout_ms: 2000 })).status).toBe(201);
  ids.odd = Number((await s.api("POST", "/api/v1/monitors", { name: ODD_NAME, monitor_type: "http", target: `${target.url}/ok`, interval_sec: 60, timeout_ms: 2000 })).json.data.id);
  const other = await makeAccount(s.ctx, "second");
  ids.theirs = Number((await s.api("POST", "/api/v1/monitors", { name: "theirs", monitor_type: "http", target: `${target.url}/ok`, interval_sec: 60, timeout_ms: 2000, is_paused: true }, { token: other.token })).json.data.id);
  const hb = (await s.api("POST", "/api/v1/monitors", { name: "job", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, notification_channel_ids: channels })).json.data;
  ids.job = Number(hb.id);
  const token = hb.attributes.heartbeat_token as string;
  for (const suffix of ["", "", "/fail"]) expect((await fetch(`${s.url}/h/${token}${suffix}`, { method: "POST" })).status).toBe(200);
  // both attempts recorded: the alert rows have left 'pending' and 'sending'
  expect(await waitFor(async () => {
    const rows = await s.ctx.db.selectFrom("alerts").select("status").execute();
    return rows.length === 2 && rows.every((r) => r.status === "delivered" || r.status === "failed");
  })).toBe(true);
  expect(await waitFor(async () => (await s.ctx.db.selectFrom("checks").select("id").where("monitor_id", "!=", Number(hb.id)).execute()).length > 0)).toBe(true);
  expect(await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${ids.odd}`)).json.data.attributes.last_status === "up")).toBe(true);
  const res = await fetch(`${s.url}/metrics`);
  expect(res.status).toBe(200);
  text = await res.text();
});
afterAll(async () => {
  await s?.stop();
  await target?.close();
  await taker?.stop();
  await refuser?.stop();
});

const types = () => new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
const value = (series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test.skipIf(!PROMTOOL)("promtool check metrics accepts the whole text", () => {
  const run = Bun.spawnSync([PROMTOOL!, "check", "metrics"], { stdin: new TextEncoder().encode(text) });
  const out = `${run.stdout.toString()}${run.stderr.toString()}`;
  expect({ exit: run.exitCode, out }).toEqual({ exit: 0, out: "" });
});

test("only counters end in _total", () => {
  const wrong = [...types()].filter(([name, type]) => name.endsWith("_total") && type !== "counter");
  expect(wrong).toEqual([]);
  expect(types().has("vigil_scheduler_runs_skipped")).toBe(false);
});

test("the series added for issue 19, with their types and values", () => {
  const t = types();
  expect({
    skipped: t.get("vigil_scheduler_runs_skipped_total"),
    deliveries: t.get("vigil_alert_deliveries_total"),
    incidents: t.get("vigil_incidents_open"),
    saturated: t.get("vigil_scheduler_saturated"),
    lateness: t.get("vigil_scheduler_recent_lateness_p99_seconds"),
    wait: t.get("vigil_scheduler_oldest_wait_seconds"),
    notJudged: t.get("vigil_checks_latency_not_judged_total"),
  }).toEqual({ skipped: "counter", deliveries: "counter", incidents: "gauge", saturated: "gauge", lateness: "gauge", wait: "gauge", notJudged: "counter" });

  // heartbeat checks are checks: two pings (up) and a /fail (down)
  expect(value('vigil_checks_total{status="up",type="heartbeat",region="local"}')).toBe(2);
  expect(value('vigil_checks_total{status="down",type="heartbeat",region="local"}')).toBe(1);
  expect(value('vigil_checks_total{status="up",type="http",region="local"}')).toBeGreaterThanOrEqual(1);
  expect(value("vigil_incidents_open")).toBe(1);
  expect(value('vigil_alert_deliveries_total{result="delivered"}')).toBe(1);
  expect(value('vigil_alert_deliveries_total{result="failed"}')).toBe(1);
  expect(value('vigil_alert_deliveries_total{result="retry"}')).toBe(0);
  expect(value("vigil_scheduler_runs_skipped_total")).toBe(0);
  expect(value("vigil_scheduler_saturated")).toBe(0);
});

test("the per-monitor series: every account's monitors with --metrics-public, a name needing escapes read back whole", () => {
  const t = types();
  for (const f of ["vigil_monitor_info", "vigil_monitor_up", "vigil_monitor_status", "vigil_monitor_latency_seconds"]) expect(t.get(f)).toBe("gauge");
  const samples = parseSamples(text);
  const info = samplesOf(samples, "vigil_monitor_info");
  expect(info.map((x) => x.labels.account).sort()).toEqual(["default", "default", "default", "second"]);
  expect(samplesOf(samples, "vigil_monitor_info", { id: String(ids.theirs) }).map((x) => [x.labels, x.value])).toEqual([[{ account: "second", id: String(ids.theirs), name: "theirs", type: "http", group: "" }, 1]]);
  expect(samplesOf(samples, "vigil_monitor_status", { id: String(ids.theirs) }).map((x) => [x.labels, x.value])).toEqual([[{ id: String(ids.theirs), region: "" }, 4]]);
  expect(samplesOf(samples, "vigil_monitor_info", { id: String(ids.odd) }).map((x) => x.labels.name)).toEqual([ODD_NAME.replace("\ud800", "\ufffd")]);
  expect(samplesOf(samples, "vigil_monitor_up", { id: String(ids.odd) }).map((x) => x.value)).toEqual([1]);
});

test("every family has a sample: no HELP and TYPE alone", () => {
  const families = [...text.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1]!);
  const sampled = new Set(parseSamples(text).map((x) => x.name.replace(/_(bucket|sum|count)$/, "")));
  expect(families.filter((f) => !sampled.has(f))).toEqual([]);
  expect(families.length).toBeGreaterThan(20);
});

test("the runtime's figures are Bun's: its version, its heap within the resident memory, no Node.js families", () => {
  const samples = parseSamples(text);
  expect(samplesOf(samples, "vigil_bun_version_info").map((x) => [x.labels.version, x.value])).toEqual([[process.versions.bun!, 1]]);
  expect([...types().keys()].filter((f) => f.includes("nodejs") || f === "vigil_process_heap_bytes")).toEqual([]);
  const one = (name: string) => samplesOf(samples, name).map((x) => x.value)[0]!;
  const heap = one("vigil_bun_heap_size_bytes"), extra = one("vigil_bun_heap_extra_memory_bytes"), rss = one("vigil_process_resident_memory_bytes");
  expect(heap).toBeGreaterThan(0);
  expect(extra).toBeLessThanOrEqual(heap);
  expect(heap).toBeLessThan(rss);
  expect(one("vigil_process_cpu_seconds_total")).toBeGreaterThan(0);
  expect(one("vigil_process_start_time_seconds")).toBeLessThanOrEqual(Date.now() / 1000);
  for (const f of ["vigil_event_loop_delay_p99_seconds", "vigil_event_loop_delay_max_seconds"]) expect(samplesOf(samples, f).length).toBe(1);
});

/** The README's alert rules (README "Per-monitor metrics"), as a rule file. */
function readmeRules(): string {
  const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");
  const block = /```yaml\n# Prometheus alert rules\n([\s\S]*?)```/.exec(readme);
  expect(block).not.toBeNull();
  return block![1]!;
}

test.skipIf(!PROMTOOL)("the README's alert rules pass promtool and fire on this scrape's down monitor, named, its for: kept across a rename", () => {
  const dir = tempDir("vigil-rules-");
  try {
    const rules = join(dir, "rules.yaml");
    writeFileSync(rules, readmeRules());
    const check = Bun.spawnSync([PROMTOOL!, "check", "rules", rules]);
    expect({ exit: check.exitCode, err: check.stderr.toString() }).toEqual({ exit: 0, err: "" });

    // the scrape's own vigil_monitor_up and vigil_monitor_info lines as series held for 10 minutes;
    // the heartbeat monitor (down since its /fail) is renamed at minute 3: its old info goes stale
    // as Prometheus marks a series a scrape no longer has
    // (but for the name holding U+FFFD, which PromQL's lexer, reading the test's series, refuses)
    const lines = text.split("\n").filter((l) => (l.startsWith("vigil_monitor_up{") || l.startsWith("vigil_monitor_info{")) && !l.includes("\ufffd"));
    const seriesOf = (l: string) => ({ series: l.slice(0, l.lastIndexOf(" ")), value: l.slice(l.lastIndexOf(" ") + 1) });
    const input = lines.map(seriesOf).flatMap(({ series, value }) =>
      series.startsWith("vigil_monitor_info{") && series.includes(`id="${ids.job}"`)
        ? [{ series, values: `${value} ${value} ${value} stale` }, { series: series.replace('name="job"', 'name="nightly job"'), values: `_ _ _ ${value}x7` }]
        : [{ series, values: `${value}x10` }],
    );
    expect(input.filter((i) => i.series.startsWith("vigil_monitor_up{")).map((i) => i.values).sort()).toEqual(["0x10", "1x10", "1x10"]);
    const tests = {
      rule_files: [rules],
      evaluation_interval: "1m",
      tests: [
        {
          interval: "1m",
          input_series: input,
          alert_rule_test: [
            {
              eval_time: "6m",
              alertname: "VigilMonitorDown",
              // firing since minute 5, the rename at minute 3 notwithstanding, and named as it is now
              exp_alerts: [{ exp_labels: { id: String(ids.job) }, exp_annotations: { summary: "nightly job is down" } }],
            },
            { eval_time: "6m", alertname: "VigilCertificateExpiring", exp_alerts: [] },
          ],
        },
      ],
    };
    const file = join(dir, "tests.yaml");
    // JSON is YAML: every string escaped once, as promtool reads it
    writeFileSync(file, JSON.stringify(tests));
    const run = Bun.spawnSync([PROMTOOL!, "test", "rules", file]);
    expect({ exit: run.exitCode, out: `${run.stdout}${run.stderr}` }).toMatchObject({ exit: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
