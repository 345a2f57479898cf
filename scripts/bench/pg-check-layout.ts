/**
 * Checks on PostgreSQL, packed into blocks or left as rows:
 *   npm run bench -- pg-check-layout [--monitors N] [--checks-per-monitor N] [--queries N] [--keep]
 *
 * Whether the PostgreSQL store should pack old checks into blocks as the SQLite store does, or
 * keep every check a row (PostgreSQL's own answer to a big time-ordered table: a B-tree on
 * (monitor_id, checked_at) for a monitor's pages, BRIN or time partitions for retention). On a
 * throwaway PostgreSQL (test/helpers/postgres.ts), two databases get Vigil's schema and the same
 * checks, one a minute per monitor up to now, written server-side with generate_series in time
 * order (1% down with an error message, latency around a per-monitor base, timings on every
 * check), the second a copy of the first:
 *   rows:   left as rows, plus a BRIN index on checked_at, as the rows layout would have;
 *   packed: then packed by the real maintenance job (engine/retention.ts), run until it packs no
 *           more: every hour over the grace in a day or hourly block, the last ~hour as rows.
 * Then, on each, the store's own functions as the API calls them, for random monitors, one at a
 * time: listChecks (the checks endpoint) page 1 of 25 and of 100, page 10 of 100, status=down,
 * a one-hour window 6 hours back; and checkSamples over the last 24 hours (what a status page's
 * partial day and the uptime of an unrolled range read). p50/p99 per case, and the bytes each
 * layout takes (pg_total_relation_size, indexes and TOAST included, after VACUUM FULL).
 * In-process, without HTTP: the difference between the layouts is in the store. Bounded: the
 * fixture's size and a fixed number of queries.
 */
import { rmSync } from "node:fs";
import { sql } from "kysely";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox } from "../../src/context.ts";
import { DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { runMaintenance } from "../../src/engine/retention.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { checkSamples } from "../../src/store/check-blocks.ts";
import { listChecks, type CheckFilter } from "../../src/store/check-queries.ts";
import type { PostgresStore } from "../../src/store/database.ts";
import { nothingJournaled } from "../../src/store/ping-journal.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { startPostgres } from "../../test/helpers/postgres.ts";
import { tempDir } from "../../test/helpers/server.ts";
import { fmt, percentile } from "./lib/load.ts";
import { loadAverage, machine } from "./lib/proc.ts";

interface Options {
  monitors: number;
  checksPerMonitor: number;
  queries: number;
  keep: boolean;
}

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: 5_000, checksPerMonitor: 2_000, queries: 2_000, keep: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--monitors") o.monitors = Math.min(v(), 200_000);
    else if (a === "--checks-per-monitor") o.checksPerMonitor = Math.min(v(), 20_000);
    else if (a === "--queries") o.queries = Math.min(v(), 50_000);
    else if (a === "--keep") o.keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const MiB = 1024 ** 2;

/** Vigil's schema, one account, `monitors` monitors and their checks, one a minute ending at `now`. */
async function seed(store: PostgresStore, o: Options, now: number): Promise<void> {
  const db = store.db;
  await sql`INSERT INTO accounts (name, plan, created_at) VALUES ('default', 'enterprise', ${now})`.execute(db);
  await sql`INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, is_paused, created_at, updated_at)
    SELECT 1, 'svc ' || m, 'http', 'http://127.0.0.1:9/svc/' || m, 60, 5000, 1, ${now}, ${now} FROM generate_series(1, ${o.monitors}::int) m`.execute(db);
  // in time slices, each in time order across monitors, so the table lies as a server writes it;
  // no one statement holds the whole fixture
  const slice = Math.max(1, Math.floor(500_000 / o.monitors));
  for (let from = 1; from <= o.checksPerMonitor; from += slice) {
    const to = Math.min(o.checksPerMonitor, from + slice - 1);
    await sql`INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms, http_code, error_code, error_message, resolved_ip, dns_ms, connect_ms, tls_ms, ttfb_ms)
      SELECT m, 'local', CASE WHEN down THEN 'down' ELSE 'up' END,
        ${now}::bigint - (${o.checksPerMonitor}::bigint - i + 1) * 60000 + (m::bigint * 7919) % 60000,
        CASE WHEN down THEN NULL ELSE 5 + (m::bigint * 31) % 200 + (i::bigint * 13) % 17 END,
        CASE WHEN down THEN NULL ELSE 200 END,
        CASE WHEN down THEN 'connection_refused' END,
        CASE WHEN down THEN 'connect ECONNREFUSED 127.0.0.1:9 (svc/' || m || ')' END,
        '127.0.0.1', 1, 2, CASE WHEN down THEN NULL ELSE 3 END, CASE WHEN down THEN NULL ELSE 4 + (m::bigint * 31) % 200 END
      FROM generate_series(1, ${o.monitors}::int) m, generate_series(${from}::int, ${to}::int) i,
        LATERAL (SELECT (m::bigint * 1103515245 + i::bigint * 12345) % 100 = 0 AS down) d
      ORDER BY 4`.execute(db);
  }
}

async function relationBytes(store: PostgresStore, table: string): Promise<number> {
  return Number((await sql<{ n: number }>`SELECT pg_total_relation_size(${table}::regclass)::bigint AS n`.execute(store.db)).rows[0]!.n);
}

interface Case {
  name: string;
  run: (store: PostgresStore, monitorId: number, now: number) => Promise<unknown>;
}

const page = (filter: CheckFilter, limit: number, offset = 0): Case["run"] => (store, id) => listChecks(nothingJournaled(store.db), id, filter, { limit, offset });

const CASES: Case[] = [
  { name: "checks page 1 (25)", run: page({}, 25) },
  { name: "checks page 1 (100)", run: page({}, 100) },
  { name: "checks page 10 (100)", run: page({}, 100, 900) },
  { name: "checks status=down", run: page({ status: "down" }, 25) },
  { name: "checks 1 h window 6 h back", run: (store, id, now) => listChecks(nothingJournaled(store.db), id, { from: now - 6 * HOUR_MS, to: now - 5 * HOUR_MS }, { limit: 100, offset: 0 }) },
  { name: "samples, last 24 h", run: (store, id, now) => checkSamples(store.db, [id], now - DAY_MS, now) },
];

async function measure(store: PostgresStore, o: Options, now: number): Promise<Map<string, { p50: number; p99: number }>> {
  const out = new Map<string, { p50: number; p99: number }>();
  let seed = 20261124;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (const c of CASES) {
    // a warm-up pass over other monitors, then the measured one
    for (let i = 0; i < Math.min(200, o.queries); i++) await c.run(store, 1 + Math.floor(rand() * o.monitors), now);
    const ms: number[] = [];
    for (let i = 0; i < o.queries; i++) {
      const id = 1 + Math.floor(rand() * o.monitors);
      const t = performance.now();
      await c.run(store, id, now);
      ms.push(performance.now() - t);
    }
    out.set(c.name, { p50: percentile(ms, 50), p99: percentile(ms, 99) });
  }
  return out;
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const total = o.monitors * o.checksPerMonitor;
  console.log(`pg-check-layout: ${fmt(o.monitors)} monitors x ${fmt(o.checksPerMonitor)} checks (one a minute) = ${fmt(total)} checks; ${fmt(o.queries)} queries a case`);
  console.log(`machine: ${machine()}; load average ${loadAverage()}`);
  const pg = await startPostgres();
  if (!pg) return 2;
  const dataDir = tempDir("vigil-bench-pglayout-");
  try {
    console.log(`PostgreSQL ${pg.version} at ${pg.url()} (fsync off, as the test harness runs it)`);
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    // seeded once, then copied whole by PostgreSQL (CREATE DATABASE ... TEMPLATE)
    const rowsUrl = await pg.createDatabase("layout_rows");
    const seeding = await openPostgresStore(rowsUrl, { poolSize: 2 });
    const t = performance.now();
    await seed(seeding, o, now);
    await seeding.close();
    console.log(`${fmt(total)} checks written in ${fmt((performance.now() - t) / 1000, 1)} s`);
    const admin = await openPostgresStore(await pg.createDatabase("layout_admin"), { poolSize: 1 });
    await sql`CREATE DATABASE layout_packed TEMPLATE layout_rows`.execute(admin.db);
    await admin.close();
    const rows = await openPostgresStore(rowsUrl, { poolSize: 4 });
    const packed = await openPostgresStore(pg.url("layout_packed"), { poolSize: 4 });
    const layouts: [string, PostgresStore][] = [["rows", rows], ["packed", packed]];
    await sql`CREATE INDEX checks_time_brin ON checks USING brin (checked_at)`.execute(rows.db);

    // the real maintenance job packs every hour past the grace; "now" is the fixture's end
    const config = loadConfig(["--data", dataDir, "--retention-days", "400"], {});
    const ctx = buildContext({ config, store: packed, log: createLogger("error"), clock: { now: () => now }, secrets: loadSecretBox(dataDir, null) });
    const tp = performance.now();
    let moved = 0;
    for (let run = 0; run < 100; run++) {
      const r = await runMaintenance(ctx);
      moved += r.checksPacked;
      if (r.checksPacked === 0 && r.daysMerged === 0) break;
    }
    await ctx.writes.close();
    const left = Number((await sql<{ n: number }>`SELECT count(*) AS n FROM checks`.execute(packed.db)).rows[0]!.n);
    console.log(`packed: maintenance packed ${fmt(moved)} checks in ${fmt((performance.now() - tp) / 1000, 1)} s (${fmt(moved / ((performance.now() - tp) / 1000))}/s); ${fmt(left)} left as rows`);

    const results = new Map<string, Map<string, { p50: number; p99: number }>>();
    for (const [name, store] of layouts) {
      // FULL: the rows the packing deleted leave space a plain VACUUM keeps for reuse; then a plain
      // one, which sets the visibility map that FULL leaves empty (autovacuum keeps it set on a
      // live database), so a count reads the index alone, as it would there
      await sql`VACUUM FULL`.execute(store.db);
      await sql`VACUUM ANALYZE`.execute(store.db);
      const checks = await relationBytes(store, "checks");
      const blocks = await relationBytes(store, "check_blocks");
      console.log(`${name}: checks table ${fmt(checks / MiB)} MiB, check_blocks ${fmt(blocks / MiB)} MiB -> ${fmt((checks + blocks) / total, 1)} bytes per check`);
    }
    // alternated, so a change in the machine's load falls on both
    for (let round = 0; round < 2; round++) {
      for (const [name, store] of round === 0 ? layouts : [...layouts].reverse()) {
        console.log(`measuring ${name} (round ${round + 1}; load average ${loadAverage()})`);
        const m = await measure(store, o, now);
        const prev = results.get(name);
        if (!prev) results.set(name, m);
        else for (const [k, v] of m) prev.set(k, { p50: Math.max(prev.get(k)!.p50, v.p50), p99: Math.max(prev.get(k)!.p99, v.p99) });
      }
    }
    console.log(`\n| case | rows p50 / p99 ms | packed p50 / p99 ms |\n|---|---|---|`);
    for (const c of CASES) {
      const r = results.get("rows")!.get(c.name)!;
      const p = results.get("packed")!.get(c.name)!;
      console.log(`| ${c.name} | ${fmt(r.p50, 2)} / ${fmt(r.p99, 2)} | ${fmt(p.p50, 2)} / ${fmt(p.p99, 2)} |`);
    }
    console.log("(each figure the worse of two rounds)");
    for (const [, store] of layouts) await store.close();
    return 0;
  } finally {
    if (!o.keep) await pg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
