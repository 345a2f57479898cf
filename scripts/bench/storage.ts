/**
 * Storage over time:
 *   npm run bench -- storage [--monitors N] [--interval S] [--days N] [--queries N] [--keep]
 *
 * 30 days of 10,000 monitors at 60 s is 432 million checks: too many to write in a bench run, so
 * the run is a measured simulation, and says so:
 *   1. one day of checks at the full rate is written (time-ordered, interleaved across monitors,
 *      as the server writes them; 1% failures with an error message), and the file growth gives
 *      bytes per stored check, index included;
 *   2. the real maintenance job (engine/retention.ts, clock set after the day) rolls that day up
 *      into hourly and daily rollups;
 *   3. the rollups of the other days are generated as copies of that day's (so 30 days of rollups
 *      really exist in the file), and the file is measured again;
 *   4. the size after `days` is: the rollups as measured + raw checks kept by retention x bytes
 *      per check, for the default retention (30 days) and for the longest retention within 2 GiB;
 *   5. uptime queries from the rollups (store/rollups.ts uptimeFromRollups, as status pages run
 *      them) over 1, 7, 30 and 90 days for random monitors: p50/p99, beside the reference computed
 *      from raw checks over the one raw day.
 * Bounded: one day of checks (14.4M rows by default) and fixed query counts.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext } from "../../src/context.ts";
import { DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { runMaintenance } from "../../src/engine/retention.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { openStore, type Store } from "../../src/store/database.ts";
import { uptimeFromRollups } from "../../src/store/rollups.ts";
import { fmt, percentile } from "./lib/load.ts";
import { machine } from "./lib/proc.ts";
import { seedAccount, seedMonitors } from "./lib/seed.ts";

interface Options {
  monitors: number;
  interval: number;
  days: number;
  queries: number;
  keep: boolean;
}

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: 10_000, interval: 60, days: 30, queries: 2000, keep: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--monitors") o.monitors = v();
    else if (a === "--interval") o.interval = v();
    else if (a === "--days") o.days = Math.min(v(), 400);
    else if (a === "--queries") o.queries = Math.min(v(), 100_000);
    else if (a === "--keep") o.keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Bytes the database holds: pages in use (the free list is reused, not returned to the OS). */
function usedBytes(store: Store): number {
  store.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const q = (p: string) => (store.sqlite.query(`PRAGMA ${p}`).get() as Record<string, number>)[p]!;
  return (q("page_count") - q("freelist_count")) * q("page_size");
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const perDay = (o.monitors * DAY_MS) / (o.interval * 1000);
  console.log(`storage bench: ${fmt(o.monitors)} monitors every ${o.interval} s = ${fmt(perDay)} checks a day; projecting ${o.days} days`);
  console.log(`machine: ${machine()}`);
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-storage-"));
  const store = openStore(dir);
  try {
    const account = seedAccount(store);
    // day D: the raw day; "now" for maintenance is D+1 02:00 so the day and its hours are rolled up
    const dayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS;
    const first = seedMonitors(store, account, o.monitors, (i) => ({ type: "http", target: `http://127.0.0.1:9/svc/${i}`, intervalSec: o.interval, nextRunAt: dayStart + DAY_MS }));
    const empty = usedBytes(store);

    // 1. one day of checks, in time order
    const insert = store.sqlite.prepare(
      "INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms, http_code, error_code, error_message) VALUES (?, 'local', ?, ?, ?, ?, ?, ?)",
    );
    const rounds = Math.floor(DAY_MS / (o.interval * 1000));
    const t0 = performance.now();
    let written = 0;
    for (let r = 0; r < rounds; r++) {
      const base = dayStart + r * o.interval * 1000;
      for (let m = 0; m < o.monitors; m += 1000) {
        store.sqlite.transaction(() => {
          for (let k = m; k < Math.min(o.monitors, m + 1000); k++) {
            const at = base + Math.floor((k / o.monitors) * o.interval * 1000);
            const down = (k * 31 + r) % 100 === 0;
            if (down) insert.run(first + k, "down", at, null, null, "connection_refused", `connect ECONNREFUSED 127.0.0.1:9 (svc/${k})`);
            else insert.run(first + k, "up", at, 20 + ((k * 7 + r * 13) % 180), 200, null, null);
          }
        })();
        written += Math.min(1000, o.monitors - m);
      }
      if (r % 240 === 239) console.log(`  ${fmt(written)} checks written (${fmt(((r + 1) / rounds) * 100)}% of the day, ${fmt(written / ((performance.now() - t0) / 1000))}/s)`);
    }
    const withDay = usedBytes(store);
    const perCheck = (withDay - empty) / written;
    console.log(`1. one day: ${fmt(written)} checks, ${fmt((withDay - empty) / MiB)} MiB -> ${fmt(perCheck, 1)} bytes per check (row + index, as stored)`);

    // 2. the real maintenance job rolls the day up
    const now = dayStart + DAY_MS + 2 * HOUR_MS;
    const ctx = buildContext({ config: loadConfig(["--data", dir, "--retention-days", "30"], {}), store, log: createLogger("warn"), clock: { now: () => now } as never, secrets: null as never });
    const m0 = performance.now();
    const report = await runMaintenance(ctx);
    const rolled = usedBytes(store);
    const rollupsDay = rolled - withDay;
    const count = (g: string) => (store.sqlite.query("SELECT count(*) AS n FROM check_rollups WHERE granularity = ?").get(g) as { n: number }).n;
    console.log(`2. maintenance: ${fmt(report.hourlyBuckets)} hourly + ${fmt(report.dailyBuckets)} daily buckets in ${fmt((performance.now() - m0) / 1000, 1)} s, ${fmt(rollupsDay / MiB, 1)} MiB for the day (${fmt(rollupsDay / o.monitors)} bytes per monitor-day)`);

    // 3. the other days' rollups, as copies of this day's
    const copy = store.sqlite.prepare(
      `INSERT INTO check_rollups SELECT monitor_id, granularity, bucket_start - ? * ${DAY_MS}, up_count, degraded_count, down_count, latency_count, latency_sum, latency_min, latency_max, latency_p50, latency_p95, latency_p99
       FROM check_rollups WHERE bucket_start >= ? AND bucket_start < ? AND monitor_id >= ? AND monitor_id < ?`,
    );
    for (let d = 1; d < o.days; d++) {
      for (let m = 0; m < o.monitors; m += 1000) store.sqlite.transaction(() => copy.run(d, dayStart, dayStart + DAY_MS, first + m, first + m + 1000))();
    }
    const withRollups = usedBytes(store);
    const rollups = withRollups - withDay;
    console.log(`3. ${o.days} days of rollups generated: ${fmt(count("h"))} hourly + ${fmt(count("d"))} daily rows, ${fmt(rollups / MiB)} MiB`);

    // 4. the projection
    const base = empty + rollups;
    const at = (retentionDays: number) => base + Math.min(retentionDays, o.days) * perDay * perCheck;
    const fits = Math.floor((2 * GiB - base) / (perDay * perCheck));
    console.log(`4. after ${o.days} days (monitors + ${o.days} days of rollups + raw checks kept by retention):`);
    console.log(`   retention 30 days (the default): ${fmt(at(30) / GiB, 2)} GiB`);
    for (const r of [1, 2, 3, 7]) console.log(`   retention ${r} day${r > 1 ? "s" : ""}: ${fmt(at(r) / GiB, 2)} GiB`);
    console.log(`   target < 2 GiB: met with --retention-days ${fits} or less (${fits >= 30 ? "the default meets it" : "the default 30 does not"})`);

    // 5. uptime queries from the rollups, and the reference from raw checks
    const ids = Array.from({ length: o.queries }, (_, i) => first + ((i * 7919) % o.monitors));
    const time = async (fn: (id: number) => Promise<unknown>) => {
      const ms: number[] = [];
      for (const id of ids) {
        const t = performance.now();
        await fn(id);
        ms.push(performance.now() - t);
      }
      return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
    };
    console.log(`5. uptime for one monitor (${fmt(o.queries)} random monitors each):`);
    for (const days of [1, 7, 30, 90]) {
      const r = await time((id) => uptimeFromRollups(store.db, id, now - days * DAY_MS, now));
      console.log(`   from rollups, last ${String(days).padStart(2)} days: p50 ${fmt(r.p50, 3)} ms, p99 ${fmt(r.p99, 3)} ms (target < 10 ms)`);
    }
    const raw = store.sqlite.prepare("SELECT status, count(*) AS n FROM checks WHERE monitor_id = ? AND checked_at >= ? AND checked_at < ? GROUP BY status");
    const rawRef = await time(async (id) => raw.all(id, dayStart, dayStart + DAY_MS));
    console.log(`   reference, from raw checks over the one raw day: p50 ${fmt(rawRef.p50, 3)} ms, p99 ${fmt(rawRef.p99, 3)} ms`);
    console.log(`file: ${fmt(statSync(store.path).size / MiB)} MiB on disk now`);
    return 0;
  } finally {
    await store.close();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`data kept in ${dir}`);
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
