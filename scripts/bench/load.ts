/**
 * Everything at once (issue 10, point 5):
 *   npm run bench -- load [--heartbeats N] [--http N] [--tcp N] [--duration S] [--connections C] [--rounds N]
 *
 * One server holds N heartbeat monitors and the scheduler bench's load (100,000 http + 10,000 tcp
 * monitors every 60 s against loopback targets). After the scheduler reaches its steady state,
 * for `duration` seconds: the load generator pings as fast as the server answers (closed loop,
 * `connections` clients; the issue asks 50,000 pings/s: the figure printed is what this box
 * sustains), the scheduler runs its checks, and an API client reads (GET /api/v1/monitors?
 * per_page=100 and one monitor's checks, one request at a time) and writes (POST, PATCH, DELETE).
 * Printed: pings/s, API latency p50/p99 during the load beside the same client before it, checks/s
 * and start lateness during it, and RSS before, during and 30 s after (memory must come back).
 * `--rounds N` repeats the load phase: RSS after each round tells a leak (grows every round) from
 * memory the allocator and the JS heap keep for reuse (reached once, then flat).
 * Loopback only; bounded in time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomToken } from "../../src/lib/tokens.ts";
import { issueApiToken } from "../../src/auth/api-tokens.ts";
import { SCOPES } from "../../src/domain/scopes.ts";
import { openStore } from "../../src/store/database.ts";
import { warmUp } from "./heartbeat.ts";
import { fmt, percentile, pickGenerator, runLoad } from "./lib/load.ts";
import { histogramQuantile, scrape, total } from "./lib/metrics.ts";
import { cpuSeconds, machine, rssBytes, startVigil } from "./lib/proc.ts";
import { seedAccount, seedMonitors } from "./lib/seed.ts";
import { startTargets } from "./scheduler.ts";

interface Options {
  heartbeats: number;
  http: number;
  tcp: number;
  duration: number;
  connections: number;
  settle: number;
  rounds: number;
}

function parseArgs(args: string[]): Options {
  const o: Options = { heartbeats: 10_000, http: 100_000, tcp: 10_000, duration: 60, connections: 64, settle: 45, rounds: 1 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--heartbeats") o.heartbeats = v();
    else if (a === "--http") o.http = v();
    else if (a === "--tcp") o.tcp = v();
    else if (a === "--duration") o.duration = Math.min(v(), 300);
    else if (a === "--connections") o.connections = v();
    else if (a === "--settle") o.settle = Math.min(v(), 300);
    else if (a === "--rounds") o.rounds = Math.max(1, Math.min(v(), 5));
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const MiB = 1024 * 1024;

/** One API client: GET list, GET checks, POST+PATCH+DELETE, in turn, until `until`; latencies by kind. */
async function apiClient(url: string, token: string, monitorId: number, until: () => boolean): Promise<Record<string, number[]>> {
  const h = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const lat: Record<string, number[]> = { list: [], checks: [], write: [] };
  const errors: string[] = [];
  const timed = async (kind: string, method: string, path: string, body?: unknown) => {
    const t = performance.now();
    const res = await fetch(url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    lat[kind]!.push(performance.now() - t);
    if (res.status >= 300 && errors.length < 3) errors.push(`${method} ${path} ${res.status} ${text.slice(0, 200)}`);
    return res.status < 300 && text ? JSON.parse(text) : null;
  };
  for (let i = 0; !until(); i++) {
    await timed("list", "GET", `/api/v1/monitors?per_page=100&page=${1 + (i % 50)}`);
    await timed("checks", "GET", `/api/v1/monitors/${monitorId}/checks?per_page=100`);
    const created = await timed("write", "POST", "/api/v1/monitors", { name: `load ${i}`, monitor_type: "tcp", target: "127.0.0.1:9", interval_sec: 60, timeout_ms: 1000, is_paused: true });
    if (created) {
      await timed("write", "PATCH", `/api/v1/monitors/${created.data.id}`, { name: `load ${i} renamed` });
      await timed("write", "DELETE", `/api/v1/monitors/${created.data.id}`);
    }
  }
  for (const e of errors) console.log(`api error: ${e}`);
  return lat;
}

const pct = (l: number[]) => `p50 ${fmt(percentile(l, 50), 1).padStart(6)} ms  p99 ${fmt(percentile(l, 99), 1).padStart(7)} ms  (${fmt(l.length)})`;

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const gen = pickGenerator(null);
  console.log(`load bench: ${fmt(o.heartbeats)} heartbeat + ${fmt(o.http)} http + ${fmt(o.tcp)} tcp monitors; ${o.duration} s of pings (${o.connections} connections, ${gen}) + checks + API together`);
  console.log(`machine: ${machine()}`);
  const targets = await startTargets(32, 4, 2);
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-load-"));
  let ok = true;
  try {
    const store = openStore(dir);
    const account = seedAccount(store);
    const t0 = Date.now() + 15_000;
    const spread = (i: number, n: number) => t0 + Math.floor(((i + 0.5) / Math.max(1, n)) * 60_000);
    const firstHttp = seedMonitors(store, account, o.http, (i) => ({ type: "http", target: `http://${targets.list.http[i % targets.list.http.length]}/m/${i}`, intervalSec: 60, nextRunAt: spread(i, o.http) }));
    seedMonitors(store, account, o.tcp, (i) => ({ type: "tcp", target: targets.list.tcp[i % targets.list.tcp.length]!, intervalSec: 60, nextRunAt: spread(i, o.tcp) }));
    const tokens = Array.from({ length: o.heartbeats }, () => randomToken(24));
    const hb = store.sqlite.prepare(
      "INSERT INTO monitors (account_id, name, monitor_type, interval_sec, timeout_ms, created_at, updated_at, heartbeat_token, heartbeat_period_sec, heartbeat_grace_sec) VALUES (?, ?, 'heartbeat', 3600, 1000, ?, ?, ?, 3600, 600)",
    );
    for (let i = 0; i < o.heartbeats; i += 1000) store.sqlite.transaction(() => tokens.slice(i, i + 1000).forEach((t, j) => hb.run(account, `job ${i + j}`, Date.now(), Date.now(), t)))();
    const { token } = await issueApiToken(store.db, { accountId: account, scopes: SCOPES, label: "bench", now: Date.now() });
    await store.close();

    const vigil = await startVigil(dir, ["--log-level", "info", "--metrics-public", "--rate-limit", "pro=100000000,enterprise=100000000", "--ping-limit-token", "1000000", "--ping-limit-ip", "10000000"]);
    try {
      const paths = tokens.map((t) => `/h/${t}`);
      const bad = await warmUp(vigil.url, paths);
      if (bad) throw new Error(`${bad} warm-up pings were not accepted`);
      console.log(`server up; waiting ${o.settle} s for the scheduler's steady state`);
      await Bun.sleep(o.settle * 1000);

      // before: the API alone (with the scheduler running)
      let stop = false;
      const beforeApi = apiClient(vigil.url, token, firstHttp, () => stop);
      await Bun.sleep(15_000);
      stop = true;
      const before = await beforeApi;
      const rssBefore = rssBytes(vigil.pid);

      // a leak grows with every round; memory an allocator keeps for reuse does not
      const afterRounds: number[] = [];
      for (let round = 1; round <= o.rounds; round++) {
        if (o.rounds > 1) console.log(`\nround ${round} of ${o.rounds}`);
        // during: pings + checks + API
        const s0 = await scrape(vigil.url);
        const c0 = cpuSeconds(vigil.pid);
        const start = Date.now();
        let rssPeak = 0;
        stop = false;
        const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssBytes(vigil.pid))), 1000);
        const duringApi = apiClient(vigil.url, token, firstHttp, () => stop);
        const pings = await runLoad(gen, { url: vigil.url, paths, connections: o.connections, durationSec: o.duration, countAcks: false });
        stop = true;
        const during = await duringApi;
        clearInterval(sampler);
        const seconds = (Date.now() - start) / 1000;
        const s1 = await scrape(vigil.url);
        const cpu = ((cpuSeconds(vigil.pid) - c0) / seconds) * 100;
        const checks = (total(s1, "vigil_checks_total") - total(s0, "vigil_checks_total")) / seconds;
        const late50 = histogramQuantile(s0, s1, "vigil_scheduler_lateness_seconds", 0.5);
        const late99 = histogramQuantile(s0, s1, "vigil_scheduler_lateness_seconds", 0.99);
        const rssDuring = rssBytes(vigil.pid);

        // after: 30 s of the scheduler alone, then RSS
        await Bun.sleep(30_000);
        const rssAfter = rssBytes(vigil.pid);

        console.log("");
        console.log(`pings            ${fmt(pings.perSecond)}/s accepted (p50 ${fmt(pings.p50, 2)} ms, p99 ${fmt(pings.p99, 2)} ms, errors ${pings.errors}); the issue asks 50,000/s`);
        console.log(`checks           ${fmt(checks, 1)}/s (the monitors ask for ${fmt((o.http + o.tcp) / 60, 1)}/s), start lateness p50 <= ${fmt(late50.le * 1000)} ms, p99 <= ${fmt(late99.le * 1000)} ms`);
        console.log(`server CPU       ${fmt(cpu)}% of one core during the load`);
        console.log(`API (one client, one request at a time)      before the load                         during it`);
        for (const k of ["list", "checks", "write"]) console.log(`  ${k.padEnd(8)} ${pct(before[k]!)}    ${pct(during[k]!)}`);
        console.log(`RSS              before ${fmt(rssBefore / MiB)} MiB, peak during ${fmt(rssPeak / MiB)} MiB, at the end ${fmt(rssDuring / MiB)} MiB, 30 s after ${fmt(rssAfter / MiB)} MiB`);
        const p99 = Math.max(percentile(during.list!, 99), percentile(during.checks!, 99));
        console.log(`API reads p99 during the load: ${fmt(p99, 1)} ms (target < 20 ms); RSS after vs before: ${fmt(((rssAfter - rssBefore) / rssBefore) * 100, 1)}%`);
        ok = p99 < 20 && rssAfter < rssBefore * 1.25 && late99.le < 1 && (round === 1 || rssAfter < afterRounds[0]! * 1.1);
        afterRounds.push(rssAfter);
      }
      if (o.rounds > 1) console.log(`\nRSS 30 s after each round: ${afterRounds.map((b) => `${fmt(b / MiB)} MiB`).join(", ")}; last vs first: ${fmt(((afterRounds.at(-1)! - afterRounds[0]!) / afterRounds[0]!) * 100, 1)}%`);
    } finally {
      await vigil.stop();
    }
  } finally {
    targets.proc.kill("SIGTERM");
    await targets.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
  return ok ? 0 : 1;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
