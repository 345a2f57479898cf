/**
 * Operations (issue 10 point 4): after real checks, pings and API calls, /metrics has every family
 * the issue names with samples (checks by status, scheduler lateness, queue depths, ping rate, HTTP
 * latency); /readyz turns 503 when the scheduler is stopped (the store-not-writable case is in
 * disk-full.test.ts). The instance is assembled as `vigil serve` does, so its services are at hand.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { bootstrapIfEmpty } from "../../src/auth/bootstrap.ts";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox, type AppContext } from "../../src/context.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { buildHttpApp, listen, type RunningServer } from "../../src/server.ts";
import type { Service } from "../../src/lib/service.ts";
import { startServices } from "../../src/start-services.ts";
import { openTestStore } from "../helpers/engine.ts";
import { tempDir, waitFor } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

let ctx: AppContext;
let services: Service[];
let server: RunningServer;
let target: HttpTarget;
let token: string;
const dataDir = tempDir("vigil-ops-");

beforeAll(async () => {
  target = await startHttpTarget({ "/ok": () => new Response("fine"), "/down": () => new Response("no", { status: 503 }) });
  const config = loadConfig(["--data", dataDir, "--host", "127.0.0.1", "--port", "0", "--metrics-public"], {});
  const store = await openTestStore(dataDir);
  ctx = buildContext({ config, store, log: createLogger("silent"), clock: systemClock, secrets: loadSecretBox(dataDir, null) });
  await bootstrapIfEmpty(ctx.db, dataDir, Date.now(), ctx.log);
  token = (await Bun.file(`${dataDir}/bootstrap-token`).text()).trim();
  services = await startServices(ctx);
  server = listen(ctx, buildHttpApp(ctx, { services, plugins: services.flatMap((s) => (s.plugin ? [s.plugin] : [])) }));
});
afterAll(async () => {
  await server?.stop();
  for (const s of [...(services ?? [])].reverse()) await s.stop(1000);
  await ctx?.store.close();
  await target?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const api = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
  return { status: r.status, json: (await r.json()) as any };
};

/** Sample lines of one metric name (with or without labels) and their values. */
function samples(text: string, name: string): { labels: string; value: number }[] {
  const out: { labels: string; value: number }[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name) out.push({ labels: m[2] ?? "", value: Number(m[3]) });
  }
  return out;
}

test("/metrics after checks, pings and API calls: every family the issue names, with samples", async () => {
  for (const [name, path] of [["up", "/ok"], ["down", "/down"]]) {
    expect((await api("POST", "/api/v1/monitors", { name, monitor_type: "http", target: `${target.url}${path}`, interval_sec: 10, timeout_ms: 2000 })).status).toBe(201);
  }
  const hb = await api("POST", "/api/v1/monitors", { name: "job", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000 });
  for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/h/${hb.json.data.attributes.heartbeat_token}`)).status).toBe(200);
  expect((await fetch(`${server.url}/h/nonexistent-token-123`)).status).toBe(404);
  expect(await waitFor(async () => (await ctx.db.selectFrom("checks").select("status").distinct().execute()).length >= 2)).toBe(true);

  const res = await fetch(server.url + "/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  const text = await res.text();
  const sum = (name: string, filter = "") => samples(text, name).filter((s) => s.labels.includes(filter)).reduce((a, s) => a + s.value, 0);

  // checks by status
  expect(sum("vigil_checks_total", 'status="up"')).toBeGreaterThan(0);
  expect(sum("vigil_checks_total", 'status="down"')).toBeGreaterThan(0);
  // scheduler lateness: a histogram with one observation per run
  expect(sum("vigil_scheduler_lateness_seconds_count")).toBeGreaterThan(0);
  expect(samples(text, "vigil_scheduler_lateness_seconds_bucket").length).toBeGreaterThan(5);
  // queue depths: gauges, present even when empty
  for (const g of ["vigil_write_queue_length", "vigil_heartbeat_queue_length", "vigil_scheduler_checks_waiting", "vigil_scheduler_checks_in_flight", "vigil_check_results_held"]) {
    expect({ gauge: g, samples: samples(text, g).length }).toEqual({ gauge: g, samples: 1 });
  }
  expect(sum("vigil_check_results_dropped_total")).toBe(0);
  expect(sum("vigil_scheduler_monitors")).toBe(2);
  expect(sum("vigil_heartbeat_deadlines")).toBe(1);
  // ping rate, by result
  expect(sum("vigil_heartbeat_pings_total", 'result="accepted"')).toBe(3);
  expect(sum("vigil_heartbeat_pings_total", 'result="not_found"')).toBe(1);
  // HTTP latency of the API, by route and status
  expect(sum("vigil_http_request_duration_seconds_count", 'route="/api/v1/monitors",status="201"')).toBe(3);
  expect(sum("vigil_http_request_duration_seconds_sum")).toBeGreaterThan(0);
  // and the process itself
  expect(sum("vigil_process_resident_memory_bytes")).toBeGreaterThan(0);
});

test("/readyz: ready while everything runs, 503 naming the scheduler once it is stopped; /healthz stays 200", async () => {
  const before = await fetch(server.url + "/readyz");
  expect(before.status).toBe(200);
  expect(await before.json()).toMatchObject({ status: "ready", problems: [] });
  await services.find((s) => s.name === "scheduler")!.stop(1000);
  const after = await fetch(server.url + "/readyz");
  expect(after.status).toBe(503);
  expect(await after.json()).toMatchObject({ status: "not_ready", problems: ["scheduler not ready"] });
  expect((await fetch(server.url + "/healthz")).status).toBe(200);
});
