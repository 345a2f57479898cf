/**
 * Scheduler at scale:
 *   npm run bench -- scheduler [--http N] [--tcp N] [--interval S] [--duration S] [--warmup S]
 *                              [--addresses N] [--memory 1000,10000,100000 | --skip-memory] [--keep]
 *                              [--engine sqlite|postgres]
 *   npm run bench -- scheduler --sustained [--duration 600] [--history 60] ...   (lib/scheduler-sustained.ts)
 *
 * Seeds N http and N tcp monitors (interval 60 s, due times spread over one interval, as a server
 * in its steady state) straight into a store, starts local targets (HTTP servers and TCP listeners
 * on 127.0.0.2.. × several ports, a child process) and `vigil serve` (a child process), and after
 * a warm-up measures over the window: checks recorded per second against the rate the monitors
 * ask for, start lateness p50/p99 (the server's vigil_scheduler_lateness_seconds histogram), the
 * server's RSS and CPU. Then memory per monitor at growing counts (RSS delta over an empty server
 * divided by the count), beside the reference: the RSS delta of one plain setTimeout per monitor.
 * Everything stays on loopback; every phase is bounded in time. With `--engine postgres` the seeded
 * directory is moved into a PostgreSQL this bench starts by `vigil migrate` (lib/bench-engine.ts;
 * fsync and synchronous_commit on) and the server runs on that database (the memory figures stay
 * SQLite's: the scheduler's memory does not depend on the store).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { openStore, type SqliteStore, type Store } from "../../src/store/database.ts";
import { parseEngine, startBenchEngine, type EngineName } from "./lib/bench-engine.ts";
import { fmt } from "./lib/load.ts";
import { memoryTable } from "./lib/memory.ts";
import { schedulerSustainedRun } from "./lib/scheduler-sustained.ts";
import { histogramQuantile, scrape, total, type Scrape } from "./lib/metrics.ts";
import { cpuMeter, cpuSeconds, machine, rssBytes, spawnUntil, startVigil, type Child } from "./lib/proc.ts";
import { seedAccount, seedCheckHistory, seedMonitors } from "./lib/seed.ts";
import type { TargetList } from "./lib/targets.ts";

interface Options {
  http: number;
  tcp: number;
  interval: number;
  duration: number;
  warmup: number;
  addresses: number;
  memory: number[];
  keep: boolean;
  /** write the server's CPU profile (markdown) into this directory */
  profile: string | null;
  /** the sustained mode (lib/scheduler-sustained.ts) and its options */
  sustained: boolean;
  every: number;
  history: number;
  btrees: boolean;
  engine: EngineName;
}

function parseArgs(args: string[]): Options {
  const o: Options = {
    http: 100_000, tcp: 10_000, interval: 60, duration: NaN, warmup: NaN, addresses: 32, memory: [1000, 10_000, 100_000], keep: false, profile: null,
    sustained: false, every: 60, history: 60, btrees: true, engine: "sqlite",
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--http") o.http = v();
    else if (a === "--tcp") o.tcp = v();
    else if (a === "--interval") o.interval = v();
    else if (a === "--duration") o.duration = v();
    else if (a === "--warmup") o.warmup = v();
    else if (a === "--addresses") o.addresses = Math.min(v(), 250);
    else if (a === "--memory") o.memory = args[++i]!.split(",").map(Number);
    else if (a === "--skip-memory") o.memory = [];
    else if (a === "--keep") o.keep = true;
    else if (a === "--profile") o.profile = args[++i]!;
    else if (a === "--sustained") o.sustained = true;
    else if (a === "--every") o.every = Math.max(10, v());
    else if (a === "--history") o.history = Math.max(0, Math.min(v(), 180));
    else if (a === "--no-btree") o.btrees = false;
    else if (a === "--engine") o.engine = parseEngine(args[++i]);
    else throw new Error(`unknown option ${a}`);
  }
  // sustained: up to an hour, measured after the warm-up; otherwise the warm-up is part of the duration
  o.duration = Math.min(Number.isNaN(o.duration) ? (o.sustained ? 600 : 150) : o.duration, o.sustained ? 3600 : 600);
  if (Number.isNaN(o.warmup)) o.warmup = o.sustained ? 60 : 30;
  if (!o.sustained && o.warmup >= o.duration) throw new Error("--warmup must be shorter than --duration");
  return o;
}

export async function startTargets(addresses: number, httpPorts: number, tcpPorts: number): Promise<{ proc: Child; list: TargetList }> {
  const t = await spawnUntil([process.execPath, join(import.meta.dir, "lib", "targets.ts"), String(addresses), String(httpPorts), String(tcpPorts)], (l) => l.startsWith('{"http"'));
  return { proc: t.proc, list: JSON.parse(t.line) as TargetList };
}

/**
 * A data dir with `http` + `tcp` monitors, due spread over one interval starting `startInMs` from
 * now, and optionally `historyMinutes` of their checks before that (seedCheckHistory). Seeding an
 * hour takes a minute or two: the due times are then moved on by as long, so none is overdue at
 * the start (the history keeps that gap before its newest checks).
 */
export function seedScheduler(dir: string, list: TargetList, http: number, tcp: number, intervalSec: number, startInMs: number, historyMinutes = 0): number {
  const store = openStore(dir);
  const account = seedAccount(store);
  const t0 = Date.now() + startInMs;
  const spread = (i: number, n: number) => t0 + Math.floor(((i + 0.5) / Math.max(1, n)) * intervalSec * 1000);
  const firstHttp = seedMonitors(store, account, http, (i) => ({ type: "http", target: `http://${list.http[i % list.http.length]}/m/${i}`, intervalSec, nextRunAt: spread(i, http) }));
  const firstTcp = seedMonitors(store, account, tcp, (i) => ({ type: "tcp", target: list.tcp[i % list.tcp.length]!, intervalSec, nextRunAt: spread(i, tcp) }));
  let rows = 0;
  if (historyMinutes > 0) {
    const due = [
      ...Array.from({ length: http }, (_, i) => ({ id: firstHttp + i, nextRunAt: spread(i, http) })),
      ...Array.from({ length: tcp }, (_, i) => ({ id: firstTcp + i, nextRunAt: spread(i, tcp) })),
    ];
    rows = seedCheckHistory(store, due, intervalSec, historyMinutes);
    postponeDue(store, startInMs);
  }
  void store.close();
  return rows;
}

/** Moves every due time on so that the first is `startInMs` from now (seeding took that long): none is overdue at the start. */
export function postponeDue(store: SqliteStore, startInMs: number): void {
  const first = (store.sqlite.query("SELECT min(next_run_at) AS t FROM monitors").get() as { t: number | null }).t;
  const lateBy = first === null ? 0 : Date.now() + startInMs - first;
  if (lateBy > 0) store.sqlite.query("UPDATE monitors SET next_run_at = next_run_at + ?1, last_checked_at = last_checked_at + ?1").run(lateBy);
}

/** postponeDue on either engine, after a copy into PostgreSQL took its time. */
async function postponeDueIn(store: Store, startInMs: number): Promise<void> {
  const row = await store.db.selectFrom("monitors").select((eb) => eb.fn.min("next_run_at").as("t")).executeTakeFirst();
  const first = row?.t === null || row?.t === undefined ? null : Number(row.t);
  const lateBy = first === null ? 0 : Date.now() + startInMs - first;
  if (lateBy > 0) await store.db.updateTable("monitors").set({ next_run_at: sql`next_run_at + ${lateBy}`, last_checked_at: sql`last_checked_at + ${lateBy}` } as never).execute();
}

const MiB = 1024 * 1024;

async function schedulerRun(o: Options, list: TargetList, targets: Child): Promise<{ ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-sched-"));
  const seedStart = performance.now();
  // due times start after the expected start-up, so the window sees the steady state
  seedScheduler(dir, list, o.http, o.tcp, o.interval, 15_000);
  console.log(`seeded ${fmt(o.http)} http + ${fmt(o.tcp)} tcp monitors in ${fmt((performance.now() - seedStart) / 1000, 1)} s`);
  const engine = await startBenchEngine(o.engine);
  const adopted = await engine.adopt(dir);
  if (o.engine !== "sqlite") {
    const store = await adopted.open();
    await postponeDueIn(store, 15_000);
    await store.close();
    console.log(`store: ${engine.describe}; copied in by vigil migrate in ${fmt(adopted.seconds, 1)} s`);
  }
  const started = performance.now();
  const vigil = await startVigil(dir, ["--log-level", "info", "--metrics-public", ...adopted.flags], { profileDir: o.profile });
  console.log(`server up in ${fmt((performance.now() - started) / 1000, 1)} s (rss ${fmt(rssBytes(vigil.pid) / MiB)} MiB)`);
  const required = (o.http + o.tcp) / o.interval;
  let s0: Scrape | null = null;
  let cpu0 = 0;
  let dbCpu0 = 0;
  let targetCpu0 = 0;
  let t0 = 0;
  let maxRss = 0;
  const rssInWindow: number[] = [];
  const cpu = cpuMeter(vigil.pid);
  try {
    const begin = Date.now();
    let last = await scrape(vigil.url);
    let lastAt = Date.now();
    console.log("   t   checks/s   in flight  waiting   rss MiB   cpu %");
    while (Date.now() - begin < o.duration * 1000) {
      await Bun.sleep(5000);
      const now = Date.now();
      const s = await scrape(vigil.url);
      const rss = rssBytes(vigil.pid);
      const rate = (total(s, "vigil_checks_total") - total(last, "vigil_checks_total")) / ((now - lastAt) / 1000);
      console.log(
        `${String(Math.round((now - begin) / 1000)).padStart(4)} ${fmt(rate).padStart(10)} ${fmt(total(s, "vigil_scheduler_checks_in_flight")).padStart(11)} ${fmt(total(s, "vigil_scheduler_checks_waiting")).padStart(8)} ${fmt(rss / MiB).padStart(9)} ${fmt(cpu.read()).padStart(7)}`,
      );
      cpu.start();
      last = s;
      lastAt = now;
      if (s0 === null && now - begin >= o.warmup * 1000) {
        s0 = s;
        t0 = now;
        cpu0 = cpuSeconds(vigil.pid);
        dbCpu0 = engine.cpuSeconds();
        targetCpu0 = cpuSeconds(targets.pid);
      }
      if (s0 !== null) {
        rssInWindow.push(rss);
        maxRss = Math.max(maxRss, rss);
      }
    }
    const s1 = last;
    const seconds = (lastAt - t0) / 1000;
    const checks = total(s1, "vigil_checks_total") - total(s0!, "vigil_checks_total");
    const down = total(s1, "vigil_checks_total", 'status="down"') - total(s0!, "vigil_checks_total", 'status="down"');
    const p50 = histogramQuantile(s0!, s1, "vigil_scheduler_lateness_seconds", 0.5);
    const p99 = histogramQuantile(s0!, s1, "vigil_scheduler_lateness_seconds", 0.99);
    const serverCpu = ((cpuSeconds(vigil.pid) - cpu0) / seconds) * 100;
    const targetCpu = ((cpuSeconds(targets.pid) - targetCpu0) / seconds) * 100;
    const rate = checks / seconds;
    console.log("");
    console.log(`window: ${fmt(seconds)} s after a ${o.warmup} s warm-up`);
    console.log(`checks/s sustained   ${fmt(rate, 1)}   (reference: the monitors ask for ${fmt(required, 1)}/s; ratio ${fmt((rate / required) * 100, 1)}%)`);
    console.log(`failed checks        ${fmt(down)} of ${fmt(checks)}`);
    console.log(`start lateness       p50 <= ${fmt(p50.le * 1000)} ms, p99 <= ${fmt(p99.le * 1000)} ms over ${fmt(p99.count)} runs (target p99 < 1 s; histogram bucket bounds)`);
    console.log(`server RSS           max ${fmt(maxRss / MiB)} MiB in the window (target < 1024 MiB)`);
    console.log(`server CPU           ${fmt(serverCpu)}% of one core (targets process: ${fmt(targetCpu)}%)`);
    if (o.engine !== "sqlite") console.log(`PostgreSQL CPU       ${fmt(((engine.cpuSeconds() - dbCpu0) / seconds) * 100)}% of one core`);
    const ok = p99.le < 1 && maxRss < 1024 * MiB && rate >= required * 0.95;
    return { ok };
  } finally {
    await vigil.stop();
    await engine.stop();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`data kept in ${dir}`);
  }
}

async function memoryRun(o: Options, list: TargetList): Promise<void> {
  console.log("");
  console.log("memory per monitor (http monitors, interval 60 s, RSS 20 s after start minus an empty server's):");
  await memoryTable("monitors", o.memory, async (n) => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-mem-"));
    try {
      seedScheduler(dir, list, n, 0, o.interval, 5_000);
      const vigil = await startVigil(dir, ["--log-level", "info"]);
      try {
        await Bun.sleep(20_000);
        return rssBytes(vigil.pid);
      } finally {
        await vigil.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  console.log(`scheduler bench: ${fmt(o.http)} http + ${fmt(o.tcp)} tcp monitors every ${o.interval} s, ${o.duration} s run, targets on ${o.addresses} loopback addresses`);
  console.log(`machine: ${machine()}`);
  const targets = await startTargets(o.addresses, 4, 2);
  console.log(`targets: ${targets.list.http.length} http servers, ${targets.list.tcp.length} tcp listeners`);
  try {
    if (o.sustained) return (await schedulerSustainedRun(o, targets.list)) ? 0 : 1;
    // --http 0 --tcp 0: the memory figures alone
    const { ok } = o.http + o.tcp > 0 ? await schedulerRun(o, targets.list, targets.proc) : { ok: true };
    if (o.memory.length) await memoryRun(o, targets.list);
    return ok ? 0 : 1;
  } finally {
    targets.proc.kill("SIGTERM");
    await targets.proc.exited;
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
