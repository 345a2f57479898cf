/**
 * Scraping /metrics with its per-monitor series (README "Per-monitor metrics"):
 *   npm run bench -- metrics [--monitors 1000,10000,100000] [--scrapes N] [--engine sqlite|postgres]
 *
 * For each count, a fresh store seeded with bun:sqlite (statuses mixed: 80% up, 8% down, 4% degraded,
 * 4% unknown, 4% paused; one in five an ssl monitor with a certificate; a region view with a latency
 * for each monitor checked; one name in a hundred needing escapes), moved into a PostgreSQL this
 * bench starts by `vigil migrate` with `--engine postgres`. The monitors are due in a day, so the
 * server checks nothing meanwhile. `vigil serve --metrics-public` runs on it; once its start-up work
 * settles, /metrics is scraped `scrapes` times one after the other, as Prometheus does: time until the
 * whole body is read (p50, p99), its bytes, the server's CPU per scrape and its RSS (before, at its
 * peak, and 10 s after the last scrape), and /healthz asked every 5 ms meanwhile from another process
 * (how long a scrape holds the server's event loop; the same for a second with nothing else asked,
 * before the scrapes, for comparison). References in the same run:
 * - a bare Bun.serve answering the same body (what moving those bytes costs on this box);
 * - prom-client itself with the same series as Gauge children (the design left aside: a child per
 *   monitor and family, set on every check): its registry.metrics() time, bytes and RSS, and the cost
 *   of one child's set(), which every check would pay.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/database.ts";
import { fmt, percentile } from "./lib/load.ts";
import { cpuSeconds, machine, rssBytes, spawnUntil, startVigil, waitIdle } from "./lib/proc.ts";
import { seedAccount } from "./lib/seed.ts";
import { parseEngine, startBenchEngine, type EngineName } from "./lib/bench-engine.ts";

interface Options {
  monitors: number[];
  scrapes: number;
  engine: EngineName;
}

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: [1000, 10_000, 100_000], scrapes: 30, engine: "sqlite" };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--monitors") o.monitors = args[++i]!.split(",").map(Number);
    else if (a === "--scrapes") o.scrapes = Math.min(Number(args[++i]), 1000);
    else if (a === "--engine") o.engine = parseEngine(args[++i]);
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const STATUSES = [...Array(20).fill("up"), "down", "down", "degraded", "unknown", "paused"] as const;
const WORDS = ["billing", "checkout", "search", "auth", "cdn", "mail", "payments", "reports", "gateway", "static"];

/** The fixture: `n` monitors of one account, with their region views. */
async function seed(dir: string, n: number): Promise<void> {
  const store = openStore(dir);
  const account = seedAccount(store);
  const now = Date.now();
  const dueIn = now + 86_400_000;
  const monitor = store.sqlite.prepare(
    `INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at, is_paused, last_status, last_checked_at, next_run_at, state_changed_at, ssl_expiry_last_not_after)
     VALUES (?, ?, ?, ?, 86400, 5000, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  );
  const view = store.sqlite.prepare("INSERT INTO monitor_region_states (monitor_id, region, last_status, last_checked_at, consecutive_down, last_check_id, last_latency_ms) VALUES (?, 'local', ?, ?, 0, NULL, ?)");
  for (let i = 0; i < n; i += 1000) {
    store.sqlite.transaction(() => {
      for (let j = i; j < Math.min(n, i + 1000); j++) {
        const status = STATUSES[j % STATUSES.length]!;
        const ssl = j % 5 === 0;
        const word = WORDS[j % WORDS.length]!;
        const name = j % 100 === 7 ? `Café "${word}" \\ ${j} ✓` : `${word} service ${j}`;
        // loopback targets nothing listens on: the monitors are not due during the bench anyway
        const target = ssl ? `127.0.0.1:${10_000 + (j % 50_000)}` : `http://127.0.0.1:9/${word}/${j}`;
        const paused = status === "paused";
        const { id } = monitor.get(account, name, ssl ? "ssl" : "http", target, now, now, paused ? 1 : 0, paused ? "up" : status, now, dueIn, now, ssl ? now + (30 + (j % 300)) * 86_400_000 : null) as { id: number };
        if (status !== "unknown") view.run(id, paused ? "up" : status, now, 5 + ((j * 7) % 400));
      }
    })();
  }
  store.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  await store.close();
}

interface ScrapeRun {
  p50: number;
  p99: number;
  bytes: number;
  body: string;
}

/** `scrapes` GETs one after the other, each timed until its whole body is read. */
async function scrapeLoop(url: string, scrapes: number): Promise<ScrapeRun> {
  const times: number[] = [];
  let body = "";
  for (let i = 0; i < scrapes; i++) {
    const t = performance.now();
    const res = await fetch(url);
    const text = await res.text();
    times.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
    body = text;
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), bytes: Buffer.byteLength(body), body };
}

/**
 * /healthz every 5 ms from a process of its own (the scraping client's work on a 33 MB body must not
 * count as the server's delay), and the server's RSS peak meanwhile; SIGTERM ends it with its figures.
 */
const HEALTH = `
const { readFileSync } = require("node:fs");
const lat = [];
let rssPeak = 0;
let running = true;
process.on("SIGTERM", () => { running = false; });
// this process's own first requests are slow (its start, the connection): not the server's
for (let i = 0; i < 50; i++) await (await fetch(process.env.URL + "/healthz")).text();
console.log("health ready");
while (running) {
  const t = performance.now();
  await (await fetch(process.env.URL + "/healthz")).text();
  lat.push(performance.now() - t);
  rssPeak = Math.max(rssPeak, Number(readFileSync("/proc/" + process.env.PID + "/statm", "utf8").split(" ")[1]) * 4096);
  await Bun.sleep(5);
}
lat.sort((a, b) => a - b);
console.log("health " + JSON.stringify({ p99: lat[Math.min(lat.length - 1, Math.ceil(0.99 * lat.length) - 1)], max: lat[lat.length - 1], rssPeak, n: lat.length }));
`;

async function healthProbe(url: string, pid: number) {
  let result: { p99: number; max: number; rssPeak: number } | null = null;
  const child = await spawnUntil([process.execPath, "-e", HEALTH], (l) => l === "health ready", {
    env: { URL: url, PID: String(pid) },
    onLine: (l) => {
      if (l.startsWith("health {")) result = JSON.parse(l.slice(7));
    },
  });
  return {
    async stop() {
      child.proc.kill("SIGTERM");
      await child.proc.exited;
      for (let i = 0; i < 100 && !result; i++) await Bun.sleep(10);
      if (!result) throw new Error("the /healthz prober printed no figures");
      return result as { p99: number; max: number; rssPeak: number };
    },
  };
}

const BARE = `
const body = await Bun.file(process.env.BARE_BODY_FILE).text();
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(body, { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } }) });
console.log("bare " + server.url.href.replace(/\\/$/, ""));
`;

/** prom-client with the series as Gauge children, in a process of its own (its RSS is its own). */
const PROM_CLIENT = `
import { Gauge, Registry } from "prom-client";
const counts = JSON.parse(process.env.SERIES);
const renders = Number(process.env.RENDERS);
const registry = new Registry();
const labelNames = ["account", "id", "name", "type", "region"];
const rss0 = process.memoryUsage().rss;
const gauges = Object.keys(counts).map((name) => new Gauge({ name, help: name, labelNames, registers: [registry] }));
let t = performance.now();
let sets = 0;
gauges.forEach((g, f) => {
  for (let i = 0; i < counts[g.name]; i++, sets++) g.set({ account: "default", id: String(i + 1), name: "billing service " + i, type: "http", region: f === 2 ? "local" : "" }, i % 2);
});
const setUs = ((performance.now() - t) * 1000) / sets;
// a check's update once every child exists: what every recorded check would pay
t = performance.now();
const n = 100000;
for (let k = 0; k < n; k++) gauges[1].set({ account: "default", id: String((k % counts[gauges[1].name]) + 1), name: "billing service " + (k % counts[gauges[1].name]), type: "http", region: "" }, k % 5);
const updateUs = ((performance.now() - t) * 1000) / n;
const times = [];
let bytes = 0;
for (let i = 0; i < renders; i++) {
  const t0 = performance.now();
  const text = await registry.metrics();
  times.push(performance.now() - t0);
  bytes = Buffer.byteLength(text);
}
times.sort((a, b) => a - b);
const pick = (p) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)];
console.log("result " + JSON.stringify({ p50: pick(50), p99: pick(99), bytes, setUs, updateUs, rssMiB: (process.memoryUsage().rss - rss0) / 1048576 }));
`;

/** Series per family in a scrape's text. */
function seriesCounts(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of ["vigil_monitor_up", "vigil_monitor_status", "vigil_monitor_latency_seconds", "vigil_monitor_cert_expiry_timestamp_seconds"]) out[f] = 0;
  for (const line of text.split("\n")) {
    const name = line.slice(0, line.indexOf("{"));
    if (name in out) out[name]!++;
  }
  return out;
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  console.log(`metrics bench: ${o.monitors.map((n) => fmt(n)).join(", ")} monitors, ${o.scrapes} scrapes each, one after the other`);
  console.log(`machine: ${machine()}`);
  const engine = await startBenchEngine(o.engine);
  console.log(`store: ${engine.describe}`);
  const rows: string[] = [];
  try {
    for (const n of o.monitors) {
      const dir = mkdtempSync(join(tmpdir(), "vigil-bench-metrics-"));
      try {
        const seeded = performance.now();
        await seed(dir, n);
        const adopted = await engine.adopt(dir);
        console.log(`\n${fmt(n)} monitors: seeded in ${fmt((performance.now() - seeded) / 1000, 1)} s${o.engine === "postgres" ? ` (vigil migrate ${fmt(adopted.seconds, 1)} s)` : ""}`);
        const vigil = await startVigil(dir, ["--metrics-public", ...adopted.flags]);
        try {
          await waitIdle(vigil.pid);
          // one scrape first: the statements' plans and caches, as on a server scraped for a while
          await (await fetch(`${vigil.url}/metrics`)).text();
          // the same prober with nothing else asked: the server's delay at rest, for comparison
          const resting = await healthProbe(vigil.url, vigil.pid);
          await Bun.sleep(1000);
          const idle = await resting.stop();
          const rssBefore = rssBytes(vigil.pid);
          const cpu0 = cpuSeconds(vigil.pid);
          const dbCpu0 = engine.cpuSeconds();
          const health = await healthProbe(vigil.url, vigil.pid);
          const run = await scrapeLoop(`${vigil.url}/metrics`, o.scrapes);
          const h = await health.stop();
          const cpuMs = ((cpuSeconds(vigil.pid) - cpu0) * 1000) / o.scrapes;
          const dbCpuMs = ((engine.cpuSeconds() - dbCpu0) * 1000) / o.scrapes;
          // does the memory a scrape takes come back once the scrapes stop
          await Bun.sleep(10_000);
          const rssAfter = rssBytes(vigil.pid);
          const counts = seriesCounts(run.body);
          const perMonitor = Object.values(counts).reduce((a, b) => a + b, 0);
          const monitorBytes = Buffer.byteLength(run.body.slice(run.body.indexOf("# HELP vigil_monitor_up ")));
          console.log(`vigil: ${fmt(run.bytes)} bytes (${fmt(monitorBytes)} of them the ${fmt(perMonitor)} per-monitor series: ${Object.entries(counts).map(([k, v]) => `${k.replace("vigil_monitor_", "")} ${fmt(v)}`).join(", ")})`);
          console.log(`vigil: scrape p50 ${fmt(run.p50, 1)} ms, p99 ${fmt(run.p99, 1)} ms; server CPU ${fmt(cpuMs, 1)} ms a scrape${o.engine === "postgres" ? ` (+ PostgreSQL's ${fmt(dbCpuMs, 1)} ms)` : ""}; /healthz meanwhile p99 ${fmt(h.p99, 1)} ms, max ${fmt(h.max, 1)} ms (at rest ${fmt(idle.p99, 1)} / ${fmt(idle.max, 1)} ms); RSS ${fmt(rssBefore / 1048576)} MiB before, peak ${fmt(h.rssPeak / 1048576)} MiB, ${fmt(rssAfter / 1048576)} MiB 10 s after`);

          const bodyFile = join(dir, "body.txt");
          await Bun.write(bodyFile, run.body);
          const bare = await spawnUntil([process.execPath, "-e", BARE], (l) => l.startsWith("bare "), { env: { BARE_BODY_FILE: bodyFile } });
          let bareRun: ScrapeRun;
          try {
            await (await fetch(bare.line.slice(5).trim())).text();
            bareRun = await scrapeLoop(bare.line.slice(5).trim(), o.scrapes);
          } finally {
            bare.proc.kill("SIGTERM");
            await bare.proc.exited;
          }
          console.log(`reference, bare Bun.serve with the same body: p50 ${fmt(bareRun.p50, 1)} ms, p99 ${fmt(bareRun.p99, 1)} ms`);

          const prom = await spawnUntil([process.execPath, "-e", PROM_CLIENT], (l) => l.startsWith("result "), { env: { SERIES: JSON.stringify(counts), RENDERS: String(o.scrapes) }, timeoutMs: 300_000 });
          await prom.proc.exited;
          const pc = JSON.parse(prom.line.slice(7)) as { p50: number; p99: number; bytes: number; setUs: number; updateUs: number; rssMiB: number };
          console.log(
            `reference, prom-client with the same series as Gauge children: registry.metrics() p50 ${fmt(pc.p50, 1)} ms, p99 ${fmt(pc.p99, 1)} ms, ${fmt(pc.bytes)} bytes of them; children ${fmt(pc.rssMiB)} MiB RSS; set() ${fmt(pc.updateUs, 2)} µs per update`,
          );
          rows.push(
            `| ${fmt(n)} | ${fmt(perMonitor)} | ${fmt(run.bytes)} | **${fmt(run.p50, 1)} / ${fmt(run.p99, 1)}** | ${fmt(cpuMs, 1)}${o.engine === "postgres" ? ` + ${fmt(dbCpuMs, 1)}` : ""} | ${fmt(h.p99, 1)} / ${fmt(h.max, 1)} (at rest ${fmt(idle.p99, 1)} / ${fmt(idle.max, 1)}) | ${fmt(rssBefore / 1048576)} / ${fmt(h.rssPeak / 1048576)} / ${fmt(rssAfter / 1048576)} | ${fmt(bareRun.p50, 1)} / ${fmt(bareRun.p99, 1)} | ${fmt(pc.p50, 1)} / ${fmt(pc.p99, 1)} (${fmt(pc.rssMiB)} MiB, set ${fmt(pc.updateUs, 2)} µs) |`,
          );
        } finally {
          await vigil.stop();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await engine.stop();
  }
  console.log(`\n| monitors | per-monitor series | bytes | scrape p50 / p99 ms | server CPU ms a scrape${o.engine === "postgres" ? " + PostgreSQL's" : ""} | /healthz p99 / max ms during | RSS before / peak / 10 s after, MiB | bare Bun.serve, same body, p50 / p99 ms | prom-client children: metrics() p50 / p99 ms |`);
  console.log(`|---|---|---|---|---|---|---|---|---|`);
  for (const r of rows) console.log(r);
  return 0;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
