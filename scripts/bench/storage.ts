/**
 * Storage over time:
 *   npm run bench -- storage [--monitors N] [--interval S] [--days N] [--queries N] [--keep]
 *
 * 30 days of 10,000 monitors at 60 s is 432 million checks: too many to write in a bench run, so
 * the run is a measured simulation, and says so:
 *   1. one day of checks at the full rate is written as the server writes them: in time order
 *      across monitors (each monitor at its own offset, a few ms of jitter, so ids interleave as
 *      they do), latency varying around a per-monitor base, 1% failures with an error message and
 *      a re-check 10 s later; the table's size gives bytes per check as a row (index included);
 *   2. the real maintenance job (engine/retention.ts) runs at 23:15 of that day: it rolls the
 *      hours up and packs them into hourly blocks (bytes per check in an hourly block);
 *   3. it runs again the next day at 02:00: the last hour is packed, the day is rolled up and its
 *      hours merged into one day block (bytes per check in a day block);
 *   4. the rollups of the other days are generated as copies of that day's (so 30 days of rollups
 *      really exist in the file), and measured;
 *   5. the size after `days`, the worst moment of the day (late evening): monitors + rollups as
 *      measured + (days - 1) days of day blocks + 23 h of hourly blocks + 75 min of rows, all at
 *      the measured bytes per check, with the default retention (30 days);
 *   6. uptime queries from the rollups (store/rollups.ts uptimeFromRollups, as status pages run
 *      them) over 1, 7, 30 and 90 days for random monitors: p50/p99, beside the reference computed
 *      from raw rows over the one raw day (taken before packing); and a page of packed checks.
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
import { openStore, type SqliteStore } from "../../src/store/database.ts";
import { listChecks } from "../../src/store/check-queries.ts";
import { nothingJournaled } from "../../src/store/ping-journal.ts";
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
function usedBytes(store: SqliteStore): number {
  store.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const q = (p: string) => (store.sqlite.query(`PRAGMA ${p}`).get() as Record<string, number>)[p]!;
  return (q("page_count") - q("freelist_count")) * q("page_size");
}

/** Bytes of one table or index, pages as stored (SQLite's dbstat). */
function tableBytes(store: SqliteStore, name: string): number {
  return (store.sqlite.query("SELECT coalesce(sum(pgsize), 0) AS n FROM dbstat WHERE name = ?").get(name) as { n: number }).n;
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
      "INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms, http_code, error_code, error_message, resolved_ip) VALUES (?, 'local', ?, ?, ?, ?, ?, ?, '127.0.0.1')",
    );
    let seed = 20261121;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
    const baseLatency = Array.from({ length: o.monitors }, () => 5 + Math.floor(rand() * 200));
    const offset = Array.from({ length: o.monitors }, (_, k) => Math.floor((k / o.monitors) * o.interval * 1000));
    const rounds = Math.floor(DAY_MS / (o.interval * 1000));
    const t0 = performance.now();
    let written = 0;
    type Due = { k: number; at: number; retry: boolean };
    let retries: Due[] = [];
    for (let r = 0; r < rounds; r++) {
      const base = dayStart + r * o.interval * 1000;
      const due: Due[] = retries.filter((d) => d.at < base + o.interval * 1000);
      retries = retries.filter((d) => d.at >= base + o.interval * 1000);
      for (let k = 0; k < o.monitors; k++) due.push({ k, at: base + offset[k]! + Math.floor(rand() * 5), retry: false });
      due.sort((x, y) => x.at - y.at);
      for (let i = 0; i < due.length; i += 1000) {
        store.sqlite.transaction(() => {
          for (const d of due.slice(i, i + 1000)) {
            if (!d.retry && rand() < 0.01) {
              insert.run(first + d.k, "down", d.at, null, null, "connection_refused", `connect ECONNREFUSED 127.0.0.1:9 (svc/${d.k})`);
              retries.push({ k: d.k, at: d.at + 10_000, retry: true });
            } else {
              insert.run(first + d.k, "up", d.at, Math.max(1, Math.round(baseLatency[d.k]! * Math.exp(gauss() * 0.25))), 200, null, null);
            }
          }
        })();
      }
      written += due.length;
      if (r % 240 === 239) console.log(`  ${fmt(written)} checks written (${fmt(((r + 1) / rounds) * 100)}% of the day, ${fmt(written / ((performance.now() - t0) / 1000))}/s)`);
    }
    const withDay = usedBytes(store);
    const perRow = (tableBytes(store, "checks") + tableBytes(store, "checks_monitor_time")) / written;
    console.log(`1. one day: ${fmt(written)} checks, ${fmt((withDay - empty) / MiB)} MiB -> ${fmt(perRow, 1)} bytes per check as a row (row + index)`);
    // the reference for step 6, while the day is still rows
    const raw = store.sqlite.prepare("SELECT status, count(*) AS n FROM checks WHERE monitor_id = ? AND checked_at >= ? AND checked_at < ? GROUP BY status");
    const ids = Array.from({ length: o.queries }, (_, i) => first + ((i * 7919) % o.monitors));
    const rawMs: number[] = [];
    for (const id of ids) {
      const t = performance.now();
      raw.all(id, dayStart, dayStart + DAY_MS);
      rawMs.push(performance.now() - t);
    }

    // 2. maintenance late in the day: hours rolled up and packed into hourly blocks
    let clock = dayStart + 23 * HOUR_MS + 15 * 60_000;
    const ctx = buildContext({ config: loadConfig(["--data", dir, "--retention-days", "30"], {}), store, log: createLogger("warn"), clock: { now: () => clock } as never, secrets: null as never });
    let m0 = performance.now();
    const late = await runMaintenance(ctx, { maxPackedPerRun: Number.MAX_SAFE_INTEGER });
    usedBytes(store);
    const inHours = late.checksPacked;
    const perHourBlock = tableBytes(store, "check_blocks") / inHours;
    console.log(`2. maintenance at 23:15: ${fmt(late.hourlyBuckets)} hourly rollups, ${fmt(inHours)} checks packed in ${fmt((performance.now() - m0) / 1000, 1)} s -> ${fmt(perHourBlock, 2)} bytes per check in hourly blocks`);

    // 3. the next day at 02:00: the day rolled up and merged into day blocks
    clock = dayStart + DAY_MS + 2 * HOUR_MS;
    const now = clock;
    m0 = performance.now();
    const next = await runMaintenance(ctx, { maxPackedPerRun: Number.MAX_SAFE_INTEGER });
    usedBytes(store);
    const blocks = tableBytes(store, "check_blocks");
    const perDayBlock = blocks / written;
    const rowsLeft = (store.sqlite.query("SELECT count(*) AS n FROM checks").get() as { n: number }).n;
    const rollupsDay = tableBytes(store, "check_rollups");
    const count = (g: string) => (store.sqlite.query("SELECT count(*) AS n FROM check_rollups WHERE granularity = ?").get(g) as { n: number }).n;
    console.log(`3. maintenance the next day at 02:00: ${fmt(next.daysMerged)} days merged, ${fmt(next.dailyBuckets)} daily rollups in ${fmt((performance.now() - m0) / 1000, 1)} s; ${fmt(rowsLeft)} rows left; ${fmt(blocks / MiB, 1)} MiB of blocks -> ${fmt(perDayBlock, 2)} bytes per check in day blocks (${fmt(perRow / perDayBlock, 1)}x smaller than rows); rollups ${fmt(rollupsDay / MiB, 1)} MiB for the day`);

    // 3. the other days' rollups, as copies of this day's
    const copy = store.sqlite.prepare(
      `INSERT INTO check_rollups SELECT monitor_id, granularity, bucket_start - ? * ${DAY_MS}, up_count, degraded_count, down_count, latency_count, latency_sum, latency_min, latency_max, latency_p50, latency_p95, latency_p99
       FROM check_rollups WHERE bucket_start >= ? AND bucket_start < ? AND monitor_id >= ? AND monitor_id < ?`,
    );
    for (let d = 1; d < o.days; d++) {
      for (let m = 0; m < o.monitors; m += 1000) store.sqlite.transaction(() => copy.run(d, dayStart, dayStart + DAY_MS, first + m, first + m + 1000))();
    }
    usedBytes(store);
    const rollups = tableBytes(store, "check_rollups");
    console.log(`4. ${o.days} days of rollups generated: ${fmt(count("h"))} hourly + ${fmt(count("d"))} daily rows, ${fmt(rollups / MiB)} MiB`);

    // 5. the projection, at the worst moment of the day
    const retention = Math.min(30, o.days);
    const fixed = empty + rollups;
    const rawBytes = (days: number) => (days - 1) * perDay * perDayBlock + (23 / 24) * perDay * perHourBlock + (75 / 1440) * perDay * perRow;
    const total = fixed + rawBytes(retention);
    console.log(`5. after ${o.days} days, late in the day (monitors ${fmt(empty / MiB)} MiB + rollups ${fmt(rollups / MiB)} MiB + raw checks kept ${retention} days: ${retention - 1} days of day blocks, 23 h of hourly blocks, 75 min of rows):`);
    console.log(`   retention ${retention} days (the default): ${fmt(total / GiB, 2)} GiB (raw checks ${fmt(rawBytes(retention) / GiB, 2)} GiB) -- target < 2 GiB: ${total < 2 * GiB ? "met" : "NOT met"}`);
    console.log(`   for comparison, the same checks as rows: ${fmt((fixed + retention * perDay * perRow) / GiB, 2)} GiB`);

    // 6. uptime queries from the rollups, the reference from rows, and a page of packed checks
    const time = async (fn: (id: number) => Promise<unknown>) => {
      const ms: number[] = [];
      for (const id of ids) {
        const t = performance.now();
        await fn(id);
        ms.push(performance.now() - t);
      }
      return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
    };
    console.log(`6. uptime for one monitor (${fmt(o.queries)} random monitors each):`);
    const reads = nothingJournaled(store.db);
    for (const days of [1, 7, 30, 90]) {
      const r = await time((id) => uptimeFromRollups(reads, id, now - days * DAY_MS, now));
      console.log(`   from rollups, last ${String(days).padStart(2)} days: p50 ${fmt(r.p50, 3)} ms, p99 ${fmt(r.p99, 3)} ms (target < 10 ms)`);
    }
    console.log(`   reference, from raw rows over the one raw day (before packing): p50 ${fmt(percentile(rawMs, 50), 3)} ms, p99 ${fmt(percentile(rawMs, 99), 3)} ms`);
    const deep = await time((id) => listChecks(reads, id, {}, { offset: 700, limit: 100 }));
    console.log(`   a page of 100 packed checks (offset 700, in the day block): p50 ${fmt(deep.p50, 3)} ms, p99 ${fmt(deep.p99, 3)} ms`);
    console.log(`file: ${fmt(statSync(store.path).size / MiB)} MiB on disk now`);
    return 0;
  } finally {
    await store.close();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`data kept in ${dir}`);
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
