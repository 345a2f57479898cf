/**
 * Several instances on one PostgreSQL (README "Several instances"):
 *   npm run bench -- cluster [--instances 1,2,3] [--monitors 3000] [--interval 10] [--duration 30]
 *                            [--warmup 15] [--kills 10] [--takeover-instances 2,3] [--skip-checks]
 *                            [--skip-takeover] [--pings 1,2,3] [--ping-monitors 10000] [--connections 64]
 *                            [--skip-pings] [--pg-fsync on|off] [--generator wrk|autocannon]
 *
 * One throwaway PostgreSQL (test/helpers/postgres.ts) for the whole run, a fresh database per case,
 * durable as PostgreSQL's defaults are (fsync, synchronous_commit on) unless `--pg-fsync off`.
 *
 * checks/s: `--monitors` http monitors every `--interval` s (seeded straight into the database, due
 * times spread over one interval), against local targets (lib/targets.ts, a child process), checked
 * by 1, 2 and 3 `vigil serve` instances on the database. After a warm-up, over the window: the check
 * rows the database got per second (checked in the window, counted 5 s after it) against the rate
 * the monitors ask for, per monitor and interval (1.00: each checked once an interval), monitors
 * checked twice within half an interval (a doubled check, or a late run followed by one on time),
 * start lateness p99 (worst instance), CPU of the instances and of PostgreSQL per check.
 *
 * takeover: 2 and 3 instances, 120 monitors every 2 s against a target in this process that notes
 * when each monitor was last checked. `--kills` times: kill -9 of the leader, then the time until
 * another instance says it leads (/readyz) and until every monitor the killed one checked has been
 * checked again by a survivor; a new instance replaces the killed one before the next kill. p50/p99
 * over the kills.
 *
 * pings/s: `--ping-monitors` heartbeat monitors, each pinged once, then the load generator drives
 * /h/<token> over all the tokens for `--duration` s with `--connections` in all, split evenly over
 * 1, 2 and 3 instances (as a round-robin proxy would spread them): acknowledged pings/s summed, the
 * worst instance's p99, and CPU per ping, beside a bare Bun.serve driven the same way in the same
 * run. Bounded: every wait has a deadline, every case a fixed duration.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Share } from "../../src/cluster/share.ts";
import type { PostgresStore } from "../../src/store/database.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { startPostgres, type PostgresServer } from "../../test/helpers/postgres.ts";
import { durable } from "./lib/bench-engine.ts";
import { fmt, percentile, pickGenerator, runLoad, type Generator } from "./lib/load.ts";
import { measureBare, seedHeartbeats, warmUp } from "./heartbeat.ts";
import { histogramQuantile, scrape, type Scrape } from "./lib/metrics.ts";
import { cpuSeconds, machine, postgresCpuSeconds, startVigil, type VigilProcess } from "./lib/proc.ts";
import { startTargets } from "./scheduler.ts";

interface Options {
  instances: number[];
  monitors: number;
  interval: number;
  duration: number;
  warmup: number;
  kills: number;
  takeoverInstances: number[];
  checks: boolean;
  takeover: boolean;
  pingInstances: number[];
  pingMonitors: number;
  connections: number;
  pgFsync: boolean;
  generator: string | null;
}

function parseArgs(args: string[]): Options {
  const o: Options = { instances: [1, 2, 3], monitors: 3000, interval: 10, duration: 30, warmup: 15, kills: 10, takeoverInstances: [2, 3], checks: true, takeover: true,
    pingInstances: [1, 2, 3], pingMonitors: 10_000, connections: 64, pgFsync: true, generator: null };
  const list = (v: string) => v.split(",").map(Number).filter((n) => n >= 1 && n <= 5);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--instances") o.instances = list(args[++i]!);
    else if (a === "--monitors") o.monitors = Math.min(Math.max(1, v()), 100_000);
    else if (a === "--interval") o.interval = Math.max(1, v());
    else if (a === "--duration") o.duration = Math.min(Math.max(5, v()), 600);
    else if (a === "--warmup") o.warmup = Math.min(Math.max(0, v()), 300);
    else if (a === "--kills") o.kills = Math.min(Math.max(1, v()), 50);
    else if (a === "--takeover-instances") o.takeoverInstances = list(args[++i]!).filter((n) => n >= 2);
    else if (a === "--skip-checks") o.checks = false;
    else if (a === "--skip-takeover") o.takeover = false;
    else if (a === "--pings") o.pingInstances = list(args[++i]!);
    else if (a === "--skip-pings") o.pingInstances = [];
    else if (a === "--ping-monitors") o.pingMonitors = Math.min(Math.max(1, v()), 100_000);
    else if (a === "--connections") o.connections = Math.min(Math.max(1, v()), 512);
    else if (a === "--pg-fsync") o.pgFsync = args[++i] !== "off";
    else if (a === "--generator") o.generator = args[++i]!;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const SECRET_KEY = "7b".repeat(32);

interface Instance {
  vigil: VigilProcess;
  dir: string;
}

interface ClusterView {
  instance: string;
  leader: boolean;
  region_instances: string[];
  monitors: number;
}

async function view(i: Instance): Promise<ClusterView> {
  return ((await (await fetch(`${i.vigil.url}/readyz`, { signal: AbortSignal.timeout(5000) })).json()) as { cluster: ClusterView }).cluster;
}

async function startInstance(url: string, extra: string[] = []): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-cluster-"));
  const vigil = await startVigil(dir, ["--database-url", url, "--metrics-public", "--log-level", "info", ...extra], { env: { VIGIL_SECRET_KEY: SECRET_KEY } });
  return { vigil, dir };
}

async function stopInstance(i: Instance, kill = false): Promise<void> {
  if (kill) i.vigil.proc.kill(9);
  else await i.vigil.stop();
  await i.vigil.proc.exited;
  rmSync(i.dir, { recursive: true, force: true });
}

/** Polls `fn` every `everyMs` until it is truthy or `ms` passed; the time it took, or null. */
async function until(fn: () => Promise<boolean> | boolean, ms: number, everyMs = 50): Promise<number | null> {
  const start = performance.now();
  while (performance.now() - start < ms) {
    if (await Promise.resolve().then(fn).catch(() => false)) return performance.now() - start;
    await Bun.sleep(everyMs);
  }
  return null;
}

/** Waits until every instance sees `count` instances in its region (a new one joins after a renewal period). */
async function settled(instances: Instance[], count: number): Promise<ClusterView[]> {
  let views: ClusterView[] = [];
  const ok = await until(async () => {
    views = await Promise.all(instances.map(view));
    return views.every((v) => v.region_instances.length === count) && views.filter((v) => v.leader).length === 1;
  }, 30_000, 100);
  if (ok === null) throw new Error(`the ${count} instances did not settle: ${JSON.stringify(views)}`);
  return views;
}

/** One account and `count` http monitors, due times spread over one interval from `startInMs` on. */
async function seed(store: PostgresStore, count: number, intervalSec: number, target: (i: number) => string, startInMs: number): Promise<number[]> {
  const now = Date.now();
  const account = await store.db.insertInto("accounts").values({ name: "default", plan: "enterprise", created_at: now }).returning("id").executeTakeFirstOrThrow();
  const ids: number[] = [];
  for (let i = 0; i < count; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - i) }, (_, k) => {
      const j = i + k;
      const next = now + startInMs + Math.floor(((j + 0.5) / count) * intervalSec * 1000);
      return {
        account_id: account.id, name: `http ${j}`, monitor_type: "http", target: target(j), interval_sec: intervalSec, timeout_ms: 5000,
        created_at: now, updated_at: now, last_checked_at: next - intervalSec * 1000, next_run_at: next, last_status: "up", state_changed_at: now,
      };
    });
    ids.push(...(await store.db.insertInto("monitors").values(rows).returning("id").execute()).map((r) => r.id));
  }
  return ids;
}

async function checksCase(pg: PostgresServer, o: Options, n: number, targets: string[]): Promise<string> {
  const url = await pg.createDatabase();
  const store = await openPostgresStore(url, { poolSize: 2 });
  const instances: Instance[] = [];
  try {
    // due times start after the instances are up, and the window after a warm-up in the steady state
    const dueFrom = Date.now() + 10_000;
    await seed(store, o.monitors, o.interval, (i) => `http://${targets[i % targets.length]}/m/${i}`, dueFrom - Date.now());
    for (let k = 0; k < n; k++) instances.push(await startInstance(url));
    await settled(instances, n);
    await Bun.sleep(Math.max(0, dueFrom - Date.now()) + o.warmup * 1000);
    const postmaster = pg.pid()!;
    const s0: Scrape[] = await Promise.all(instances.map((i) => scrape(i.vigil.url)));
    const cpu0 = instances.map((i) => cpuSeconds(i.vigil.pid));
    const pgCpu0 = postgresCpuSeconds(postmaster);
    const t0 = Date.now();
    await Bun.sleep(o.duration * 1000);
    const t1 = Date.now();
    const s1: Scrape[] = await Promise.all(instances.map((i) => scrape(i.vigil.url)));
    const seconds = (t1 - t0) / 1000;
    const cpu = instances.reduce((sum, i, k) => sum + cpuSeconds(i.vigil.pid) - cpu0[k]!, 0);
    const pgCpu = postgresCpuSeconds(postmaster) - pgCpu0;
    const p99 = Math.max(...s1.map((s, k) => histogramQuantile(s0[k]!, s, "vigil_scheduler_lateness_seconds", 0.99).le));
    const shares = (await Promise.all(instances.map(view))).map((v) => v.monitors);
    // from the rows, once the checks started in the window are written: each monitor's checks in
    // the window, and checks closer than half an interval
    await Bun.sleep(5000);
    const rows = await store.db.selectFrom("checks").select(["monitor_id", "checked_at"]).where("checked_at", ">=", t0).where("checked_at", "<", t1).orderBy("monitor_id").orderBy("checked_at").execute();
    const checks = rows.length;
    let doubled = 0;
    for (let k = 1; k < rows.length; k++) if (rows[k]!.monitor_id === rows[k - 1]!.monitor_id && rows[k]!.checked_at - rows[k - 1]!.checked_at < (o.interval * 1000) / 2) doubled++;
    const perInterval = rows.length / (o.monitors * (seconds / o.interval));
    const asked = o.monitors / o.interval;
    return `| ${n} | ${fmt(checks / seconds, 1)} | ${fmt(asked, 1)} | ${fmt(perInterval, 2)} | ${doubled} | ${shares.join(" / ")} | ≤ ${fmt(p99 * 1000)} ms | ${fmt((cpu / seconds) * 100)}% (${fmt((cpu / checks) * 1e6)} µs) | ${fmt((pgCpu / seconds) * 100)}% (${fmt((pgCpu / checks) * 1e6)} µs) |`;
  } finally {
    for (const i of instances) await stopInstance(i);
    await store.close();
  }
}

async function takeoverCase(pg: PostgresServer, o: Options, n: number): Promise<string> {
  const url = await pg.createDatabase();
  const store = await openPostgresStore(url, { poolSize: 2 });
  const lastHit = new Map<number, number>();
  const target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const m = /^\/m\/(\d+)$/.exec(new URL(req.url).pathname);
      if (m) lastHit.set(Number(m[1]), performance.now());
      return new Response("ok");
    },
  });
  const instances: Instance[] = [];
  const leaderTimes: number[] = [];
  const checkTimes: number[] = [];
  try {
    const MONITORS = 120;
    const ids = await seed(store, MONITORS, 2, (i) => `http://127.0.0.1:${target.port}/m/${i}`, 5_000);
    const indexOf = new Map(ids.map((id, i) => [id, i]));
    for (let k = 0; k < n; k++) instances.push(await startInstance(url));
    for (let round = 1; round <= o.kills; round++) {
      const views = await settled(instances, n);
      const v = views.findIndex((x) => x.leader);
      const victim = instances[v]!;
      const share = new Share(views[v]!.instance, views.map((x) => x.instance));
      const owned = ids.filter((id) => share.owns(id)).map((id) => indexOf.get(id)!);
      const killedAt = performance.now();
      victim.vigil.proc.kill(9);
      instances.splice(v, 1);
      // both measured from the kill, polled side by side
      const [led, checked] = await Promise.all([
        until(async () => (await Promise.all(instances.map(view))).some((x) => x.leader), 30_000, 50).then((t) => (t === null ? null : performance.now() - killedAt)),
        until(() => owned.every((i) => (lastHit.get(i) ?? 0) > killedAt), 30_000, 20).then((t) => (t === null ? null : performance.now() - killedAt)),
      ]);
      await stopInstance(victim, true);
      if (led === null || checked === null) throw new Error(`round ${round}: no takeover within 30 s`);
      leaderTimes.push(led);
      checkTimes.push(checked);
      console.log(`  ${n} instances, kill ${round}: leader again after ${fmt(led / 1000, 2)} s, its ${owned.length} monitors checked again after ${fmt(checked / 1000, 2)} s`);
      instances.push(await startInstance(url));
    }
    const q = (xs: number[], p: number) => fmt(percentile(xs, p) / 1000, 2);
    return `| ${n} | ${o.kills} | ${q(leaderTimes, 50)} s / ${q(leaderTimes, 99)} s | ${q(checkTimes, 50)} s / ${q(checkTimes, 99)} s | ${fmt(Math.max(...checkTimes, ...leaderTimes) / 1000, 2)} s |`;
  } finally {
    for (const i of instances) await stopInstance(i);
    target.stop(true);
    await store.close();
  }
}

/** Pings over `n` instances, the generator's connections split evenly between them. */
async function pingsCase(pg: PostgresServer, o: Options, n: number, gen: Generator): Promise<string> {
  const url = await pg.createDatabase();
  const tokens = await seedHeartbeats("", o.pingMonitors, () => openPostgresStore(url, { poolSize: 2 }));
  const paths = tokens.map((t) => `/h/${t}`);
  const instances: Instance[] = [];
  try {
    for (let k = 0; k < n; k++) instances.push(await startInstance(url, ["--ping-limit-token", "1000000", "--ping-limit-ip", "10000000"]));
    await settled(instances, n);
    const bad = await warmUp(instances[0]!.vigil.url, paths);
    if (bad) throw new Error(`${bad} of ${paths.length} warm-up pings were not accepted`);
    const postmaster = pg.pid()!;
    const cpu0 = instances.map((i) => cpuSeconds(i.vigil.pid));
    const pgCpu0 = postgresCpuSeconds(postmaster);
    const runs = await Promise.all(
      instances.map((i, k) =>
        runLoad(gen, { url: i.vigil.url, paths, connections: Math.floor(o.connections / n) + (k < o.connections % n ? 1 : 0), durationSec: o.duration }),
      ),
    );
    const cpu = instances.reduce((sum, i, k) => sum + cpuSeconds(i.vigil.pid) - cpu0[k]!, 0);
    const pgCpu = postgresCpuSeconds(postmaster) - pgCpu0;
    const ok = runs.reduce((s, r) => s + r.ok, 0);
    const rate = runs.reduce((s, r) => s + r.perSecond, 0);
    const errors = runs.reduce((s, r) => s + r.errors, 0);
    return `| ${n} | ${fmt(rate)} | ${runs.map((r) => fmt(r.perSecond)).join(" / ")} | ≤ ${fmt(Math.max(...runs.map((r) => r.p50)), 2)} / ${fmt(Math.max(...runs.map((r) => r.p99)), 2)} ms | ${errors} | ${fmt((cpu / ok) * 1e6)} µs | ${fmt((pgCpu / ok) * 1e6)} µs |`;
  } finally {
    for (const i of instances) await stopInstance(i);
  }
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  console.log(`cluster bench — ${machine()}`);
  const pg = await startPostgres();
  if (!pg) return 2;
  if (o.pgFsync) await durable(pg);
  console.log(`PostgreSQL ${pg.version} on 127.0.0.1:${pg.port}, ${o.pgFsync ? "fsync and synchronous_commit on (its defaults)" : "fsync and synchronous_commit off"}`);
  try {
    if (o.pingInstances.length) {
      const gen = pickGenerator(o.generator);
      console.log(`\npings/s: ${fmt(o.pingMonitors)} heartbeat monitors, ${o.connections} connections in all, ${o.duration} s per case, generator ${gen}`);
      const lines = ["| instances | acknowledged pings/s | per instance | p50 / p99 (worst instance) | errors | instances' CPU per ping | PostgreSQL CPU per ping |", "|---|---|---|---|---|---|---|"];
      const paths = Array.from({ length: 1000 }, (_, i) => `/h/bare${i}`);
      const bare = await measureBare(gen, paths, o.connections, o.duration);
      lines.push(`| reference: bare Bun.serve | ${fmt(bare.run.perSecond)} | — | ${fmt(bare.run.p50, 2)} / ${fmt(bare.run.p99, 2)} ms | ${bare.run.errors} | — | — |`);
      console.log(lines.at(-1));
      for (const n of o.pingInstances) {
        lines.push(await pingsCase(pg, o, n, gen));
        console.log(lines.at(-1));
      }
      console.log("\n" + lines.join("\n"));
    }
    if (o.checks) {
      const targets = await startTargets(16, 2, 0);
      try {
        console.log(`\nchecks/s: ${fmt(o.monitors)} http monitors every ${o.interval} s, ${o.warmup} s warm-up, ${o.duration} s window`);
        const lines = ["| instances | checks/s stored | asked | check rows per monitor and interval | doubled | monitors per instance | lateness p99 | instances' CPU (per check) | PostgreSQL CPU (per check) |", "|---|---|---|---|---|---|---|---|---|"];
        for (const n of o.instances) {
          lines.push(await checksCase(pg, o, n, targets.list.http));
          console.log(lines.at(-1));
        }
        console.log("\n" + lines.join("\n"));
      } finally {
        targets.proc.kill(9);
      }
    }
    if (o.takeover) {
      console.log(`\ntakeover after kill -9 of the leader (120 monitors every 2 s), ${o.kills} kills each:`);
      const lines = ["| instances | kills | leader again p50 / p99 | its monitors checked again p50 / p99 | worst |", "|---|---|---|---|---|"];
      for (const n of o.takeoverInstances) lines.push(await takeoverCase(pg, o, n));
      console.log("\n" + lines.join("\n"));
    }
  } finally {
    await pg.stop();
  }
  return 0;
}
