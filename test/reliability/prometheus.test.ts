/**
 * Issue 19 point 7: /metrics as Prometheus accepts it. A real server after http checks, heartbeat
 * pings (one /fail: an incident opens) and two alert deliveries (one receiver takes it, one refuses
 * it for good): Debian's `promtool check metrics` passes on the text (skipped loudly when promtool
 * is not installed: `apt-get install prometheus`, as .ci/run does), no gauge or histogram carries
 * the counters' `_total` suffix, and the series added for the issue are there with their types and
 * values: heartbeat checks in vigil_checks_total, open incidents, alert deliveries by result,
 * skipped runs as a counter, the saturation figures. Issue 23 point 5: the per-monitor series are in
 * the same text, of every account's monitors (--metrics-public), promtool accepting names with
 * quotes, backslashes, line feeds, tabs, non-ASCII characters and a lone UTF-16 surrogate.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parseSamples, samplesOf } from "../helpers/prometheus.ts";
import { makeAccount, startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
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
  for (const f of ["vigil_monitor_up", "vigil_monitor_status", "vigil_monitor_latency_seconds", "vigil_monitor_cert_expiry_timestamp_seconds"]) expect(t.get(f)).toBe("gauge");
  const samples = parseSamples(text);
  const status = samplesOf(samples, "vigil_monitor_status");
  expect(status.map((x) => x.labels.account).sort()).toEqual(["default", "default", "default", "second"]);
  expect(samplesOf(samples, "vigil_monitor_status", { id: String(ids.theirs) }).map((x) => [x.labels, x.value])).toEqual([[{ account: "second", id: String(ids.theirs), name: "theirs", type: "http", region: "" }, 4]]);
  expect(samplesOf(samples, "vigil_monitor_up", { id: String(ids.odd) }).map((x) => [x.labels.name, x.value])).toEqual([[ODD_NAME.replace("\ud800", "\ufffd"), 1]]);
});
