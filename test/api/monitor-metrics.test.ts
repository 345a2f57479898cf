/**
 * Issue 23 point 5: the per-monitor series of /metrics (README "Per-monitor metrics"). A real server
 * checks real loopback targets (http up, http down, TLS with a valid and a near-expiry certificate
 * from the test CA), beside a paused monitor, a heartbeat never pinged, a name that needs escaping and
 * a second account; /metrics is scraped with each account's token and its samples parsed back.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { readMonitorMetrics } from "../../src/services/monitor-metrics.ts";
import { certNotAfterOf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { parseSamples, samplesOf, type Sample } from "../helpers/prometheus.ts";
import { makeAccount, startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, startHttpsTarget, type HttpTarget } from "../helpers/targets.ts";
import { createMonitor } from "./fixtures.ts";

/** quotes, a backslash, a line feed and characters outside ASCII */
const ODD_NAME = 'Café "prod" \\ api\nline two ✓ 日本';
const OTHER_ACCOUNT = 'other "tenant"';

const certDir = tempDir("vigil-certs-");
let certs: TestCerts;
let s: TestServer;
let plain: HttpTarget;
let valid: HttpTarget;
let near: HttpTarget;
let other: { accountId: number; token: string };
const ids: Record<string, number> = {};
let samples: Sample[] = [];
let text = "";
let contentType = "";

const scrape = async (token: string) => {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return { text: await res.text(), contentType: res.headers.get("content-type") ?? "" };
};
const stateOf = async (id: number, token?: string) => (await s.api("GET", `/api/v1/monitors/${id}`, undefined, token ? { token } : {})).json.data.attributes.last_status;

beforeAll(async () => {
  certs = makeCerts(certDir);
  plain = await startHttpTarget({ "/ok": () => new Response("fine"), "/down": () => new Response("no", { status: 503 }) });
  valid = await startHttpsTarget(certs.certPath, certs.keyPath, { "/": () => new Response("tls") });
  near = await startHttpsTarget(certs.nearExpiryCertPath, certs.keyPath, { "/": () => new Response("tls") });
  // one failed check is enough for `down`, so the test need not wait an interval for a second
  s = await startTestServer(["--extra-ca", certs.caPath, "--confirmations", "1"]);
  const monitor = (name: string, attrs: Record<string, unknown>, token?: string) =>
    createMonitor(s, { name, interval_sec: 3600, timeout_ms: 3000, is_paused: false, ...attrs }, token);
  ids.up = await monitor("site", { monitor_type: "http", target: `${plain.url}/ok` });
  ids.down = await monitor("broken", { monitor_type: "http", target: `${plain.url}/down` });
  ids.cert = await monitor("cert", { monitor_type: "ssl", target: valid.url });
  // inside the 14-day warning window: degraded
  ids.near = await monitor("cert soon", { monitor_type: "ssl", target: near.url, ssl_expiry_warn_days: 14 });
  ids.odd = await monitor(ODD_NAME, { monitor_type: "http", target: `${plain.url}/ok` });
  ids.paused = await monitor("paused", { monitor_type: "http", target: `${plain.url}/ok`, is_paused: true });
  ids.job = await monitor("job", { monitor_type: "heartbeat" });
  other = await makeAccount(s.ctx, OTHER_ACCOUNT);
  ids.theirs = await monitor("theirs", { monitor_type: "http", target: `${plain.url}/ok` }, other.token);

  const expected: [number, string, string?][] = [[ids.up, "up"], [ids.down, "down"], [ids.cert, "up"], [ids.near, "degraded"], [ids.odd, "up"], [ids.theirs, "up", other.token]];
  const settled = await waitFor(async () => (await Promise.all(expected.map(async ([id, state, token]) => (await stateOf(id, token)) === state))).every(Boolean));
  expect(settled).toBe(true);
  ({ text, contentType } = await scrape(s.token));
  samples = parseSamples(text);
});
afterAll(async () => {
  await s?.stop();
  for (const t of [plain, valid, near]) await t?.close();
  rmSync(certDir, { recursive: true, force: true });
});

const byId = (name: string, from = samples) => new Map(samplesOf(from, name).map((x) => [Number(x.labels.id), x]));

test("vigil_monitor_status: every monitor of the token's account, its state as a code (0 down, 1 up, 2 degraded, 3 unknown, 4 paused, 5 maintenance)", () => {
  const status = byId("vigil_monitor_status");
  expect(Object.fromEntries([...status].map(([id, x]) => [id, x.value]))).toEqual({
    [ids.up!]: 1,
    [ids.down!]: 0,
    [ids.cert!]: 1,
    [ids.near!]: 2,
    [ids.odd!]: 1,
    [ids.paused!]: 4,
    [ids.job!]: 3,
  });
  // the other account's monitor is not in this account's scrape
  expect(status.has(ids.theirs!)).toBe(false);
  // the id is the series' identity; the names are on vigil_monitor_info
  expect(status.get(ids.down!)!.labels).toEqual({ id: String(ids.down), region: "" });
  expect(status.get(ids.job!)!.labels).toEqual({ id: String(ids.job), region: "" });
});

test("vigil_monitor_up: 1 up or degraded, 0 down; no sample while unknown or paused", () => {
  const up = byId("vigil_monitor_up");
  expect(Object.fromEntries([...up].map(([id, x]) => [id, x.value]))).toEqual({ [ids.up!]: 1, [ids.down!]: 0, [ids.cert!]: 1, [ids.near!]: 1, [ids.odd!]: 1 });
  expect(up.get(ids.cert!)!.labels).toEqual({ id: String(ids.cert), region: "" });
});

test("vigil_monitor_latency_seconds: the latency of the last check, in its region; none for a paused or heartbeat monitor", async () => {
  const latency = samplesOf(samples, "vigil_monitor_latency_seconds");
  expect(latency.map((x) => Number(x.labels.id)).sort((a, b) => a - b)).toEqual([ids.up!, ids.down!, ids.cert!, ids.near!, ids.odd!].sort((a, b) => a - b));
  for (const x of latency) {
    const [last] = (await s.api("GET", `/api/v1/monitors/${x.labels.id}/checks?per_page=1`)).json.data;
    expect({ id: x.labels.id, region: x.labels.region, seconds: x.value }).toEqual({ id: x.labels.id, region: last.attributes.region, seconds: last.attributes.latency_ms / 1000 });
    expect(x.labels.region).toBe("local");
  }
});

test("vigil_monitor_cert_expiry_timestamp_seconds: the notAfter of the certificate each TLS monitor saw, only for those", () => {
  const expiry = byId("vigil_monitor_cert_expiry_timestamp_seconds");
  expect(Object.fromEntries([...expiry].map(([id, x]) => [id, x.value]))).toEqual({
    [ids.cert!]: certNotAfterOf(certs.certPath) / 1000,
    [ids.near!]: certNotAfterOf(certs.nearExpiryCertPath) / 1000,
  });
  expect(expiry.get(ids.near!)!.labels).toEqual({ id: String(ids.near), region: "" });
});

test("a name with quotes, a backslash, a line feed and non-ASCII characters is escaped and reads back whole, in UTF-8", () => {
  expect(contentType).toContain("charset=utf-8");
  expect(byId("vigil_monitor_info").get(ids.odd!)!.labels.name).toBe(ODD_NAME);
  expect(text).toContain(`name="Café \\"prod\\" \\\\ api\\nline two ✓ 日本"`);
  // a line feed inside a name never starts a line of its own
  expect(text.split("\n").filter((l) => l.startsWith("line two"))).toEqual([]);
});

test("another account's token sees its own monitors only, its name escaped in the account label", async () => {
  const theirs = parseSamples((await scrape(other.token)).text);
  const status = samplesOf(theirs, "vigil_monitor_status");
  expect(status.map((x) => x.labels)).toEqual([{ id: String(ids.theirs), region: "" }]);
  expect(samplesOf(theirs, "vigil_monitor_info").map((x) => x.labels)).toEqual([{ account: OTHER_ACCOUNT, id: String(ids.theirs), name: "theirs", type: "http", group: "" }]);
  expect(status[0]!.value).toBe(1);
  expect(samplesOf(theirs, "vigil_monitor_latency_seconds").map((x) => x.labels.id)).toEqual([String(ids.theirs)]);
  // the instance's own figures are there as before
  expect(samplesOf(theirs, "vigil_checks_total").length).toBeGreaterThan(0);
});

test("each family has one HELP and one TYPE line, before its samples, which follow each other", () => {
  const families = ["vigil_monitor_info", "vigil_monitor_up", "vigil_monitor_status", "vigil_monitor_latency_seconds", "vigil_monitor_cert_expiry_timestamp_seconds"];
  const lines = text.split("\n");
  for (const f of families) {
    expect(lines.filter((l) => l === `# TYPE ${f} gauge`).length).toBe(1);
    expect(lines.filter((l) => l.startsWith(`# HELP ${f} `)).length).toBe(1);
    const at = lines.flatMap((l, i) => (l.startsWith(`${f}{`) ? [i] : []));
    const type = lines.indexOf(`# TYPE ${f} gauge`);
    expect(at[0]).toBe(type + 1);
    expect(at[at.length - 1]! - at[0]!).toBe(at.length - 1);
  }
});

test("read a few monitors at a time, every account's monitors come out once each, as in one read", async () => {
  const whole = await readMonitorMetrics(s.ctx, null);
  const paged = await readMonitorMetrics(s.ctx, null, 2);
  expect(paged).toEqual(whole);
  expect(whole.ids.length).toBe(8);
  expect(whole.info.filter((l) => l.includes(`id="${ids.theirs}"`))).toEqual([`account="other \\"tenant\\"",id="${ids.theirs}",name="theirs",type="http",group=""`]);
});

test("a region silent for 3 of the monitor's intervals (out of its quorum) has no latency series; the state and certificate stay", async () => {
  const read = (later: number) => readMonitorMetrics({ ...s.ctx, clock: { now: () => Date.now() + later } }, null);
  // the monitors check every hour: 3 hours on, each last check still counts; a minute more, none does
  expect((await read(3 * 3600_000 - 60_000)).latencies.length).toBe(6);
  const silent = await read(3 * 3600_000 + 60_000);
  expect(silent.latencies).toEqual([]);
  expect(silent.status).toEqual((await read(0)).status);
  expect(silent.certExpiry.filter((t) => !Number.isNaN(t)).length).toBe(2);
});

test("vigil_monitor_info: value 1 per monitor, with its account, name, type and group (empty when in none)", () => {
  const info = byId("vigil_monitor_info");
  expect([...info.keys()].sort((a, b) => a - b)).toEqual([ids.up!, ids.down!, ids.cert!, ids.near!, ids.odd!, ids.paused!, ids.job!].sort((a, b) => a - b));
  expect([...info.values()].every((x) => x.value === 1)).toBe(true);
  expect(info.get(ids.down!)!.labels).toEqual({ account: "default", id: String(ids.down), name: "broken", type: "http", group: "" });
  expect(info.get(ids.job!)!.labels).toEqual({ account: "default", id: String(ids.job), name: "job", type: "heartbeat", group: "" });
});

test("a rename or a move to a group keeps the monitor's series (same labels); only its vigil_monitor_info changes", async () => {
  const before = parseSamples((await scrape(s.token)).text);
  const group = (await s.api("POST", "/api/v1/groups", { name: "Shop" })).json.data.id;
  expect((await s.api("PATCH", `/api/v1/monitors/${ids.down}`, { name: "broken, renamed", group_id: Number(group) })).status).toBe(200);
  const after = parseSamples((await scrape(s.token)).text);
  const series = (from: Sample[]) => from.filter((x) => x.name !== "vigil_monitor_info" && x.name.startsWith("vigil_monitor_") && x.labels.id === String(ids.down)).map((x) => ({ name: x.name, labels: x.labels }));
  expect(series(after)).toEqual(series(before));
  expect(series(after).map((x) => x.name).sort()).toEqual(["vigil_monitor_latency_seconds", "vigil_monitor_status", "vigil_monitor_up"]);
  expect(byId("vigil_monitor_info", after).get(ids.down!)!.labels).toEqual({ account: "default", id: String(ids.down), name: "broken, renamed", type: "http", group: "Shop" });
});

test("a scrape is admitted outside the API's rate limit: an account whose API clients used up their window still scrapes (200)", async () => {
  const busy = await makeAccount(s.ctx, "busy", "pro");
  await createMonitor(s, { name: "busy one", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 3000 }, busy.token);
  // the account's API window: pro's limit, every call counted, until one is refused
  let refused = false;
  for (let i = 0; i < 200 && !refused; i++) refused = (await s.api("GET", "/api/v1/monitors", undefined, { token: busy.token })).status === 429;
  expect(refused).toBe(true);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${busy.token}` } });
    expect(res.status).toBe(200);
    expect(samplesOf(parseSamples(await res.text()), "vigil_monitor_info").map((x) => x.labels.name)).toEqual(["busy one"]);
  }
  // and the scrapes took nothing from the API's window, which stays spent
  expect((await s.api("GET", "/api/v1/monitors", undefined, { token: busy.token })).status).toBe(429);
});
