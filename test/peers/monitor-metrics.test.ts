/**
 * Issue 23 point 5 with several regions (README "Per-monitor metrics"): a leader (region "local")
 * and a probe (region "eu", in this process, its own data directory) check one loopback target.
 * The leader's /metrics has one latency series per region that checked a monitor, and the state as
 * one series over all regions (region=""); the probe's /metrics has no per-monitor series (the
 * leader's database holds them).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startInstance, type Instance } from "../../src/cli/serve.ts";
import { createMonitor } from "../api/fixtures.ts";
import { engineArgs } from "../helpers/engine.ts";
import { parseSamples, samplesOf, type Sample } from "../helpers/prometheus.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { makePeer } from "./helpers.ts";

let leader: TestServer;
let probe: Instance;
let target: HttpTarget;
const probeDir = tempDir("vigil-probe-");
const ids: Record<string, number> = {};
let leaderSamples: Sample[] = [];

const checkedIn = async (id: number, region: string) => (await leader.api("GET", `/api/v1/monitors/${id}/checks?region=${region}`)).json.pagination.total >= 1;

beforeAll(async () => {
  target = await startHttpTarget({ "/ok": () => new Response("fine") });
  leader = await startTestServer(["--metrics-public"]);
  const monitor = (name: string, regions: string[] | null) =>
    createMonitor(leader, { name, monitor_type: "http", target: `${target.url}/ok`, interval_sec: 3600, timeout_ms: 3000, is_paused: false, regions });
  ids.everywhere = await monitor("everywhere", null);
  ids.euOnly = await monitor("eu only", ["eu"]);
  const eu = await makePeer(leader.ctx, "eu");
  const args = ["--role", "probe", "--leader", leader.url, "--peer-token", eu.token, "--region", "eu", "--data", probeDir, "--host", "127.0.0.1", "--port", "0", "--metrics-public"];
  probe = await startInstance([...args, ...(await engineArgs(args))], {}, { logSink: () => {} });
  const checked = await waitFor(async () => (await checkedIn(ids.everywhere!, "local")) && (await checkedIn(ids.everywhere!, "eu")) && (await checkedIn(ids.euOnly!, "eu")));
  expect(checked).toBe(true);
  leaderSamples = parseSamples(await (await fetch(`${leader.url}/metrics`)).text());
}, 30_000);

afterAll(async () => {
  await probe?.shutdown();
  await leader?.stop();
  await target?.close();
  rmSync(probeDir, { recursive: true, force: true });
});

test("latency: one series per region that checked the monitor, each that region's last check", async () => {
  const latency = (id: number) =>
    samplesOf(leaderSamples, "vigil_monitor_latency_seconds", { id: String(id) })
      .map((x) => [x.labels.region, x.value])
      .sort();
  const lastIn = async (id: number, region: string) => (await leader.api("GET", `/api/v1/monitors/${id}/checks?region=${region}&per_page=1`)).json.data[0].attributes.latency_ms / 1000;
  expect(latency(ids.everywhere!)).toEqual([
    ["eu", await lastIn(ids.everywhere!, "eu")],
    ["local", await lastIn(ids.everywhere!, "local")],
  ]);
  expect(latency(ids.euOnly!)).toEqual([["eu", await lastIn(ids.euOnly!, "eu")]]);
});

test("the state is the monitor's, over all its regions: one series with region=\"\"", () => {
  for (const f of ["vigil_monitor_status", "vigil_monitor_up"]) {
    const series = samplesOf(leaderSamples, f).map((x) => ({ id: Number(x.labels.id), region: x.labels.region, value: x.value }));
    expect(series.sort((a, b) => a.id - b.id)).toEqual([
      { id: ids.everywhere!, region: "", value: 1 },
      { id: ids.euOnly!, region: "", value: 1 },
    ]);
  }
});

test("a probe's /metrics has its own figures but no per-monitor series", async () => {
  const res = await fetch(`${probe.url}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(samplesOf(parseSamples(text), "vigil_probe_leader_reachable").map((x) => x.value)).toEqual([1]);
  expect(text).not.toContain("vigil_monitor_");
});

test("a region taken out of the monitor's regions loses its latency series at once", async () => {
  expect((await leader.api("PATCH", `/api/v1/monitors/${ids.everywhere}`, { regions: ["eu"] })).status).toBe(200);
  const samples = parseSamples(await (await fetch(`${leader.url}/metrics`)).text());
  expect(samplesOf(samples, "vigil_monitor_latency_seconds", { id: String(ids.everywhere) }).map((x) => x.labels.region)).toEqual(["eu"]);
});
