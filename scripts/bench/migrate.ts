/**
 * Moving between engines with a large check history, on one throwaway PostgreSQL started here:
 *   npm run bench -- migrate [--monitors N] [--checks N]
 *
 * Seeds an SQLite data directory with N monitors and about `--checks` check rows (the bench seed's
 * history: every monitor checked every 60 s), then times, as real child processes:
 *   migrate   vigil migrate --from DIR --to <empty database>
 *   backup    vigil backup FILE --database-url <that database> (PostgreSQL into an SQLite file)
 *   restore   vigil restore FILE --database-url <another empty database>
 * each with its rows/s and its peak RSS (sampled every 50 ms from /proc): memory must not grow
 * with the number of rows, since a copy goes a batch at a time. Bounded: --checks at most 20 million.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/database.ts";
import { startPostgres } from "../../test/helpers/postgres.ts";
import { fmt } from "./lib/load.ts";
import { machine, ROOT, rssBytes } from "./lib/proc.ts";
import { seedAccount, seedCheckHistory, seedMonitors } from "./lib/seed.ts";

const MiB = 1024 * 1024;

function parseArgs(args: string[]): { monitors: number; checks: number } {
  const o = { monitors: 1000, checks: 1_000_000 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--monitors") o.monitors = Math.min(Math.max(1, Number(args[++i])), 200_000);
    else if (a === "--checks") o.checks = Math.min(Math.max(1000, Number(args[++i])), 20_000_000);
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

/** Runs `vigil <args>` and samples its RSS until it exits. */
async function timed(args: string[]): Promise<{ seconds: number; peakRss: number; stdout: string; stderr: string }> {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, join(ROOT, "src", "main.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  let peakRss = 0;
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, rssBytes(proc.pid));
    } catch {}
  }, 50);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearInterval(sampler);
  if (code !== 0) throw new Error(`vigil ${args[0]} exited with ${code}:\n${stdout}\n${stderr}`);
  return { seconds: (performance.now() - started) / 1000, peakRss, stdout, stderr };
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  console.log(`migrate bench: ${fmt(o.monitors)} monitors, ~${fmt(o.checks)} checks; ${machine()}`);
  const pg = await startPostgres();
  if (!pg) return 1;
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-migrate-"));
  try {
    const data = join(dir, "data");
    const t0 = performance.now();
    const store = openStore(data);
    const account = seedAccount(store);
    const now = Date.now();
    const first = seedMonitors(store, account, o.monitors, (i) => ({ type: "http", target: `http://127.0.0.1:9/${i}`, intervalSec: 60, nextRunAt: now + 60_000 + i }));
    const due = Array.from({ length: o.monitors }, (_, i) => ({ id: first + i, nextRunAt: now + 60_000 + i }));
    const rows = seedCheckHistory(store, due, 60, Math.max(1, Math.round(o.checks / o.monitors)));
    await store.close();
    console.log(`  seeded ${fmt(rows)} checks in ${fmt((performance.now() - t0) / 1000, 1)} s; vigil.db ${fmt(statSync(join(data, "vigil.db")).size / MiB)} MiB`);
    const total = rows + o.monitors + 4;

    const report = (what: string, r: { seconds: number; peakRss: number }) =>
      console.log(`  ${what.padEnd(8)} ${fmt(r.seconds, 1).padStart(7)} s  ${fmt(total / r.seconds).padStart(9)} rows/s  peak RSS ${fmt(r.peakRss / MiB)} MiB`);

    const url = await pg.createDatabase();
    report("migrate", await timed(["migrate", "--from", data, "--to", url]));
    const file = join(dir, "backup.db");
    report("backup", await timed(["backup", file, "--database-url", url, "--data", join(dir, "cli")]));
    console.log(`           backup file ${fmt(statSync(file).size / MiB)} MiB`);
    report("restore", await timed(["restore", file, "--database-url", await pg.createDatabase(), "--data", join(dir, "cli")]));
    return 0;
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
