/**
 * How many checks a second one box starts on time, beside blackbox_exporter in the same run:
 *   npm run bench -- saturation [--rates 1000,2000,3000,4000,5000,6000] [--interval S] [--warmup S]
 *                               [--duration S] [--blackbox-duration S] [--connections 4,16,64]
 *                               [--addresses N] [--max-latency MS] [--max-concurrent N] [--keep-going]
 *
 * Local HTTP targets (a child process, answering "ok" at once) on 127.0.0.2.. × 4 ports. First
 * blackbox_exporter is driven by wrk (one thread; each of --connections in turn, so its rate is
 * seen both where its probe durations stay near the target's and at its most) against /probe over
 * those targets for --blackbox-duration s: its sustained probes/s, CPU per probe and the probe
 * durations it measured. Then, for each asked rate R, a fresh `vigil serve` with R × --interval http monitors
 * over the same targets (api_max_latency_ms --max-latency, 0 for none; due times spread over one interval) runs
 * --warmup s, then --duration s are measured: checks stored per second against R, Vigil's CPU per
 * check, start lateness p99, the saturation verdict (the share of 1 s samples of
 * vigil_scheduler_saturated at 1, and the warnings logged), and the latency Vigil recorded for a
 * target that answers at once (p50/p99 of latency_ms over the window, from the store), with how
 * many checks were degraded and how many had their latency set aside as not judged. The rates stop
 * after two saturated ones unless --keep-going. Last, blackbox_exporter again, so the reference
 * brackets the Vigil runs. Everything stays on loopback; every phase is bounded in time; only the
 * processes it starts are stopped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { DATABASE_FILE, openStore } from "../../src/store/database.ts";
import { BLACKBOX, bucketQuantile, driveBlackbox, DURATION_BUCKETS_MS, startBlackbox, type ProbeRun } from "./lib/blackbox.ts";
import { fmt, hasWrk, percentile } from "./lib/load.ts";
import { histogramQuantile, scrape, total, type Scrape } from "./lib/metrics.ts";
import { cpuSeconds, loadAverage, machine, startVigil } from "./lib/proc.ts";
import { seedAccount, seedMonitors } from "./lib/seed.ts";
import { startTargets } from "./scheduler.ts";
import type { TargetList } from "./lib/targets.ts";

interface Options {
  rates: number[];
  interval: number;
  warmup: number;
  duration: number;
  blackboxDuration: number;
  connections: number[];
  addresses: number;
  maxLatency: number;
  maxConcurrent: number | null;
  keepGoing: boolean;
}

function parseArgs(args: string[]): Options {
  const o: Options = { rates: [1000, 2000, 3000, 4000, 5000, 6000], interval: 10, warmup: 20, duration: 30, blackboxDuration: 20, connections: [4, 16, 64], addresses: 16, maxLatency: 100, maxConcurrent: null, keepGoing: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--rates") o.rates = args[++i]!.split(",").map(Number).filter((r) => r > 0).slice(0, 12);
    else if (a === "--interval") o.interval = Math.max(1, v());
    else if (a === "--warmup") o.warmup = Math.min(v(), 120);
    else if (a === "--duration") o.duration = Math.min(v(), 300);
    else if (a === "--blackbox-duration") o.blackboxDuration = Math.min(v(), 300);
    else if (a === "--connections") o.connections = args[++i]!.split(",").map(Number).filter((c) => c > 0).map((c) => Math.min(c, 1000)).slice(0, 6);
    else if (a === "--addresses") o.addresses = Math.min(v(), 250);
    else if (a === "--max-latency") o.maxLatency = v();
    else if (a === "--max-concurrent") o.maxConcurrent = v();
    else if (a === "--keep-going") o.keepGoing = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

interface VigilStep {
  asked: number;
  load: string;
  stored: number;
  cpuPerCheckUs: number;
  cpuPct: number;
  latenessP99Ms: number;
  saturatedShare: number;
  warnings: number;
  maxWaiting: number;
  recordedP50: number;
  recordedP99: number;
  degraded: number;
  notJudged: number;
  checks: number;
  failed: number;
}

async function vigilStep(o: Options, list: TargetList, asked: number): Promise<VigilStep> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-sat-"));
  const load = loadAverage();
  try {
    const n = Math.round(asked * o.interval);
    const store = openStore(dir);
    const account = seedAccount(store);
    const t0 = Date.now() + 15_000;
    seedMonitors(store, account, n, (i) => ({ type: "http", target: `http://${list.http[i % list.http.length]}/m/${i}`, intervalSec: o.interval, nextRunAt: t0 + Math.floor(((i + 0.5) / n) * o.interval * 1000) }));
    if (o.maxLatency > 0) store.sqlite.exec(`UPDATE monitors SET api_max_latency_ms = ${Math.round(o.maxLatency)}`);
    await store.close();

    let warnings = 0;
    const extra = o.maxConcurrent ? ["--max-concurrent-checks", String(o.maxConcurrent)] : [];
    const start = () =>
      startVigil(dir, ["--log-level", "info", "--metrics-public", ...extra], {
        onLine: (l) => {
          if (l.includes('"level":"warn"') && l.includes("saturated")) warnings++;
        },
      });
    // on a busy box a first start has once met "database is locked" right after the seeding
    // connection closed; one more try a second later, said out loud
    const vigil = await start().catch(async (err) => {
      console.log(`vigil did not start (${(err as Error).message.slice(0, 80)}…); trying once more`);
      await Bun.sleep(1000);
      return start();
    });
    try {
      // the due times start 15 s after seeding; then a warm-up
      await Bun.sleep(Math.max(0, t0 - Date.now()) + o.warmup * 1000);
      const s0: Scrape = await scrape(vigil.url);
      const w0 = Date.now();
      const cpu0 = cpuSeconds(vigil.pid);
      const warn0 = warnings;
      let samples = 0, saturated = 0, maxWaiting = 0;
      let s1 = s0;
      while (Date.now() - w0 < o.duration * 1000) {
        await Bun.sleep(1000);
        s1 = await scrape(vigil.url);
        samples++;
        if (total(s1, "vigil_scheduler_saturated") === 1) saturated++;
        maxWaiting = Math.max(maxWaiting, total(s1, "vigil_scheduler_checks_waiting"));
      }
      const w1 = Date.now();
      const seconds = (w1 - w0) / 1000;
      const cpu = cpuSeconds(vigil.pid) - cpu0;
      const stored = total(s1, "vigil_checks_total") - total(s0, "vigil_checks_total");
      const recorded = recordedLatency(dir, w0, w1);
      return {
        asked,
        load,
        stored: stored / seconds,
        cpuPerCheckUs: (cpu / Math.max(1, stored)) * 1e6,
        cpuPct: (cpu / seconds) * 100,
        latenessP99Ms: histogramQuantile(s0, s1, "vigil_scheduler_lateness_seconds", 0.99).le * 1000,
        saturatedShare: samples ? saturated / samples : 0,
        warnings: warnings - warn0,
        maxWaiting,
        ...recorded,
        notJudged: total(s1, "vigil_checks_latency_not_judged_total") - total(s0, "vigil_checks_latency_not_judged_total"),
      };
    } finally {
      await vigil.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What Vigil recorded for checks started in the window, read from its store (read-only, while it runs). */
function recordedLatency(dir: string, from: number, to: number) {
  const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
  try {
    const rows = db.query("SELECT status, latency_ms FROM checks WHERE checked_at >= ? AND checked_at < ?").all(from, to) as { status: string; latency_ms: number | null }[];
    const latencies = rows.flatMap((r) => (r.latency_ms === null ? [] : [r.latency_ms])).sort((a, b) => a - b);
    return {
      checks: rows.length,
      failed: rows.filter((r) => r.status === "down").length,
      degraded: rows.filter((r) => r.status === "degraded").length,
      recordedP50: latencies.length ? percentile(latencies, 50) : NaN,
      recordedP99: latencies.length ? percentile(latencies, 99) : NaN,
    };
  } finally {
    db.close();
  }
}

/** A histogram bound in ms as text: past the last bucket is "> 10 s". */
const bound = (ms: number) => (Number.isFinite(ms) ? `≤ ${fmt(ms)} ms` : "> 10 s");

function printBlackbox(label: string, r: ProbeRun, targetsCpu: number): void {
  const rate = r.probes / r.seconds;
  console.log(
    `blackbox ${label}: ${fmt(rate)} probes/s (${fmt(r.passed)} passed, ${fmt(r.failed)} failed, ${fmt(r.errors)} wrk errors) | ` +
      `CPU per probe: blackbox ${fmt((r.blackboxCpu / r.probes) * 1e6)} µs, + wrk ${fmt((r.wrkCpu / r.probes) * 1e6)} µs, targets ${fmt((targetsCpu / r.probes) * 1e6)} µs | ` +
      `probe_duration p50 <= ${fmt(bucketQuantile(r.durations, 0.5), 1)} ms, p99 <= ${fmt(bucketQuantile(r.durations, 0.99), 1)} ms (bucket bounds ${DURATION_BUCKETS_MS.join("/")} ms)`,
  );
}

async function blackboxRun(o: Options, list: TargetList, targetsPid: number, label: string): Promise<void> {
  const bb = await startBlackbox(19_000 + Math.floor(Math.random() * 900));
  try {
    for (const c of o.connections) {
      const tag = `${label}, ${c} at once`;
      console.log(`blackbox ${tag}: load ${loadAverage()}`);
      const t0 = cpuSeconds(targetsPid);
      const r = await driveBlackbox(bb, list.http, c, o.blackboxDuration);
      printBlackbox(tag, r, cpuSeconds(targetsPid) - t0);
    }
  } finally {
    await bb.stop();
  }
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  console.log(`saturation bench: http monitors every ${o.interval} s at ${o.rates.join(", ")} checks/s asked, ${o.warmup} s warm-up + ${o.duration} s measured each; api_max_latency_ms ${o.maxLatency}`);
  console.log(`machine: ${machine()}; started ${new Date().toISOString()}`);
  const bbInstalled = Bun.which(BLACKBOX) !== null && hasWrk();
  if (!bbInstalled) console.log(`!!! no reference: ${BLACKBOX} or wrk is missing (apt-get install -y prometheus-blackbox-exporter wrk)`);
  const targets = await startTargets(o.addresses, 4, 0);
  console.log(`targets: ${targets.list.http.length} http servers on ${o.addresses} loopback addresses`);
  try {
    if (bbInstalled) await blackboxRun(o, targets.list, targets.proc.pid, "before");
    const steps: VigilStep[] = [];
    let saturatedSteps = 0;
    for (const rate of o.rates) {
      const t0 = cpuSeconds(targets.proc.pid);
      const s = await vigilStep(o, targets.list, rate);
      steps.push(s);
      console.log(
        `vigil ${fmt(rate)}/s asked (load ${s.load}): ${fmt(s.stored, 1)} stored/s, CPU ${fmt(s.cpuPct)}% = ${fmt(s.cpuPerCheckUs)} µs a check, lateness p99 ${bound(s.latenessP99Ms)}, ` +
          `saturated ${fmt(s.saturatedShare * 100)}% of samples (${s.warnings} warnings), waiting max ${fmt(s.maxWaiting)} | recorded latency p50 ${fmt(s.recordedP50)} ms, p99 ${fmt(s.recordedP99)} ms over ${fmt(s.checks)} checks; ` +
          `${fmt(s.degraded)} degraded, ${fmt(s.notJudged)} not judged, ${fmt(s.failed)} failed (targets CPU ${fmt(cpuSeconds(targets.proc.pid) - t0, 1)} s)`,
      );
      if (s.saturatedShare >= 0.5) saturatedSteps++;
      if (saturatedSteps >= 2 && !o.keepGoing) break;
    }
    if (bbInstalled) await blackboxRun(o, targets.list, targets.proc.pid, "after");

    console.log("");
    console.log("| asked/s | stored/s | CPU µs/check | lateness p99 | saturated | recorded latency p50 / p99 | degraded | not judged |");
    console.log("|---|---|---|---|---|---|---|---|");
    for (const s of steps) {
      console.log(`| ${fmt(s.asked)} | ${fmt(s.stored, 1)} | ${fmt(s.cpuPerCheckUs)} | ${bound(s.latenessP99Ms)} | ${fmt(s.saturatedShare * 100)}% | ${fmt(s.recordedP50)} / ${fmt(s.recordedP99)} ms | ${fmt(s.degraded)} | ${fmt(s.notJudged)} |`);
    }
    const onTime = steps.filter((s) => s.saturatedShare === 0 && s.stored >= s.asked * 0.98);
    console.log(`highest rate on time (never saturated, ≥ 98% stored): ${onTime.length ? fmt(Math.max(...onTime.map((s) => s.asked))) : "none"} checks/s`);
    return 0;
  } finally {
    targets.proc.kill("SIGTERM");
    await targets.proc.exited;
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
