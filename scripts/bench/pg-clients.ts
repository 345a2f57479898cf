/**
 * PostgreSQL client libraries through Kysely, on one throwaway server started here:
 *   npm run bench -- pg-clients [--rounds N] [--slice-ms MS] [--clients a,b] [--skip-checks] [--only-checks]
 *
 * The candidates (scripts/bench/lib/pg-candidates.ts) run the same work on the same database in the
 * same run, one slice each in turn and the order rotated every round (ABCD, BCDA, ...), so a noisy
 * moment of the shared box falls on each of them:
 *   insert tx  one row, INSERT ... RETURNING id, in its own transaction (the API's write path)
 *   fold 32    32 rows in one multi-VALUES INSERT, in one transaction (the ping fold)
 *   point      SELECT a row by primary key (API reads)
 *   range 100  100 rows of one monitor by the (monitor_id, at) index, newest first (a checks page)
 * each at concurrency 1 and 16 (a pool of 16 connections). Reported: ops/s (over all slices, with
 * the slowest and fastest round), p50/p99 latency, CPU of this Bun process per op and CPU of the
 * server's processes per op. Then the behaviour checks (scripts/bench/lib/pg-checks.ts).
 * Bounded: rounds x workloads x 2 x clients slices of --slice-ms (at most 200,000 ops each).
 * `pg` and `postgres` are not dependencies of Vigil: `npm install --no-save pg postgres` first.
 */
import { sql, type Kysely } from "kysely";
import { startPostgres, type PostgresServer } from "../../test/helpers/postgres.ts";
import type { BenchDb, Candidate } from "./lib/pg-candidates.ts";
import { runChecks } from "./lib/pg-checks.ts";
import { fmt, percentile } from "./lib/load.ts";
import { machine, postgresCpuSeconds as serverCpu } from "./lib/proc.ts";

interface Options {
  rounds: number;
  sliceMs: number;
  clients: string[] | null;
  checks: boolean;
  bench: boolean;
}

function parseArgs(args: string[]): Options {
  const o: Options = { rounds: 3, sliceMs: 1500, clients: null, checks: true, bench: true };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--rounds") o.rounds = Math.min(Math.max(1, Number(args[++i])), 20);
    else if (a === "--slice-ms") o.sliceMs = Math.min(Math.max(100, Number(args[++i])), 10_000);
    else if (a === "--clients") o.clients = args[++i]!.split(",");
    else if (a === "--skip-checks") o.checks = false;
    else if (a === "--only-checks") o.bench = false;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const MONITORS = 200;
const ROWS_PER_MONITOR = 1000;
const MAX_OPS_PER_SLICE = 200_000;
const T0 = 1_764_000_000_000;

type Work = (db: Kysely<BenchDb>, i: number) => Promise<unknown>;

let seq = 0;
const row = (i: number) => ({ monitor_id: 1 + (i % MONITORS), at: T0 + ROWS_PER_MONITOR * 60_000 + ++seq, ok: true, latency_ms: 40 + (i % 17), message: null });

const WORKLOADS: [string, Work][] = [
  ["insert tx", (db, i) => db.transaction().execute((trx) => trx.insertInto("bench_checks").values(row(i)).returning("id").executeTakeFirstOrThrow())],
  ["fold 32", (db, i) => db.transaction().execute((trx) => trx.insertInto("bench_checks").values(Array.from({ length: 32 }, (_, k) => row(i * 32 + k))).execute())],
  ["point", (db, i) => db.selectFrom("bench_checks").selectAll().where("id", "=", 1 + ((i * 7919) % (MONITORS * ROWS_PER_MONITOR))).executeTakeFirstOrThrow()],
  [
    "range 100",
    (db, i) =>
      db
        .selectFrom("bench_checks")
        .selectAll()
        .where("monitor_id", "=", 1 + (i % MONITORS))
        .where("at", "<", T0 + (500 + (i % 500)) * 60_000)
        .orderBy("at", "desc")
        .limit(100)
        .execute(),
  ],
];

interface Slice {
  ops: number;
  ms: number;
  lat: number[];
  cpuUs: number;
  serverCpuS: number;
}

async function slice(db: Kysely<BenchDb>, work: Work, conc: number, ms: number, postmaster: number): Promise<Slice> {
  const lat: number[] = [];
  let next = Math.floor(Math.random() * 1e6);
  let ops = 0;
  const cpu0 = process.cpuUsage();
  const srv0 = serverCpu(postmaster);
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (performance.now() < end && ops < MAX_OPS_PER_SLICE) {
        const s = performance.now();
        await work(db, next++);
        lat.push(performance.now() - s);
        ops++;
      }
    }),
  );
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ops, ms: elapsed, lat, cpuUs: cpu.user + cpu.system, serverCpuS: serverCpu(postmaster) - srv0 };
}

async function seed(url: string, c: Candidate) {
  const db = c.open(url, 1);
  await sql`CREATE TABLE bench_checks (
    id bigserial PRIMARY KEY, monitor_id bigint NOT NULL, at bigint NOT NULL,
    ok boolean NOT NULL, latency_ms integer NOT NULL, message text)`.execute(db);
  await sql`INSERT INTO bench_checks (monitor_id, at, ok, latency_ms)
    SELECT 1 + (g % ${MONITORS}), ${T0}::bigint + (g / ${MONITORS}) * 60000, true, 40 + g % 17
    FROM generate_series(0, ${MONITORS * ROWS_PER_MONITOR - 1}) g`.execute(db);
  await sql`CREATE INDEX bench_checks_monitor_at ON bench_checks (monitor_id, at)`.execute(db);
  await sql`VACUUM ANALYZE bench_checks`.execute(db);
  await db.destroy();
}

async function bench(server: PostgresServer, list: Candidate[], o: Options) {
  const url = await server.createDatabase("bench");
  await seed(url, list[0]!);
  const postmaster = server.pid()!;
  const dbs = list.map((c) => c.open(url, 16));
  console.log(`seeded ${MONITORS * ROWS_PER_MONITOR} rows; warming up`);
  for (const db of dbs) for (const [, work] of WORKLOADS) await slice(db, work, 16, 300, postmaster);

  const results = new Map<string, Slice[]>();
  const key = (c: number, w: string, conc: number) => `${c}|${w}|${conc}`;
  const started = Date.now();
  for (let r = 0; r < o.rounds; r++) {
    for (let w = 0; w < WORKLOADS.length; w++) {
      const [wname, work] = WORKLOADS[w]!;
      for (const conc of [1, 16]) {
        for (let k = 0; k < list.length; k++) {
          const c = (k + r + w) % list.length;
          const s = await slice(dbs[c]!, work, conc, o.sliceMs, postmaster);
          const arr = results.get(key(c, wname, conc)) ?? [];
          arr.push(s);
          results.set(key(c, wname, conc), arr);
        }
      }
    }
    console.log(`round ${r + 1}/${o.rounds} done (${((Date.now() - started) / 1000).toFixed(0)} s), load ${machine().split("load ")[1]}`);
  }
  for (const db of dbs) await db.destroy();

  console.log("\n| workload | conc | client | ops/s (slowest-fastest round) | p50 ms | p99 ms | Bun CPU µs/op | server CPU µs/op |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const [wname] of WORKLOADS) {
    for (const conc of [1, 16]) {
      list.forEach((c, i) => {
        const ss = results.get(key(i, wname, conc))!;
        const ops = ss.reduce((a, s) => a + s.ops, 0);
        const ms = ss.reduce((a, s) => a + s.ms, 0);
        const rates = ss.map((s) => (s.ops / s.ms) * 1000);
        const lat = ss.flatMap((s) => s.lat);
        const cpu = ss.reduce((a, s) => a + s.cpuUs, 0) / ops;
        const srv = (ss.reduce((a, s) => a + s.serverCpuS, 0) * 1e6) / ops;
        console.log(
          `| ${wname} | ${conc} | ${c.name} | ${fmt((ops / ms) * 1000)} (${fmt(Math.min(...rates))}-${fmt(Math.max(...rates))}) | ${percentile(lat, 50).toFixed(2)} | ${percentile(lat, 99).toFixed(2)} | ${cpu.toFixed(0)} | ${srv.toFixed(0)} |`,
        );
      });
    }
  }
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  let all: Candidate[];
  try {
    all = (await import("./lib/pg-candidates.ts")).candidates();
  } catch (e) {
    console.error(`${(e as Error).message}\nthe clients compared are not dependencies of Vigil; install them first:\n  npm install --no-save pg@^8.23.1 postgres@^3.4.9`);
    return 2;
  }
  const list = o.clients ? all.filter((c) => o.clients!.includes(c.name)) : all;
  if (list.length === 0) throw new Error(`no such client; have ${all.map((c) => c.name).join(", ")}`);
  console.log(`pg-clients: ${new Date().toISOString()}, ${machine()}`);
  const server = await startPostgres();
  if (!server) return 2;
  try {
    console.log(`PostgreSQL ${server.version} on ${server.host}:${server.port} (fsync off), clients: ${list.map((c) => `${c.name} (${c.dialect})`).join(", ")}`);
    if (o.bench) await bench(server, list, o);
    if (o.checks) await runChecks(server, list);
  } finally {
    await server.stop();
  }
  return 0;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
