/**
 * How long the maintenance job holds the event loop (issue 18, point 9):
 *   npm run bench -- maintenance-stall [--monitors 10000] [--rows 720] [--runs 3]
 *
 * bun:sqlite is synchronous: on the thread that answers requests, any stretch the job spends in one
 * transaction is time every request waits. The job runs here on that thread and then on its worker
 * thread (scheduler/maintenance-thread.ts), as the server runs it. Here `--monitors` monitors each have `--rows`
 * checks in the hour that ended two minutes ago (a server's first run after an hour boundary: the
 * hour is rolled up, not yet packed), and the job runs `--runs` times (the later runs re-read the
 * hour, as the server's do, the rollup looking back an hour) while a 1 ms interval timer measures how
 * late it fires: the event loop's stalls. Reference in the same run: the same timer with nothing to do.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox } from "../../src/context.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { startMaintenance } from "../../src/scheduler/maintenance.ts";
import { openStore } from "../../src/store/database.ts";
import { fmt } from "./lib/load.ts";
import { seedAccount, seedMonitors } from "./lib/seed.ts";

const HOUR_MS = 3_600_000;

function parse(args: string[]) {
  const o = { monitors: 10_000, rows: 720, runs: 3 };
  for (let i = 0; i < args.length; i++) {
    const v = () => Number(args[++i]);
    if (args[i] === "--monitors") o.monitors = v();
    else if (args[i] === "--rows") o.rows = v();
    else if (args[i] === "--runs") o.runs = v();
    else throw new Error(`unknown option ${args[i]}`);
  }
  return o;
}

/** Runs `work` while a 1 ms timer measures its own lateness; the gaps in ms, sorted. */
async function stalls(work: () => Promise<unknown>): Promise<{ gaps: number[]; seconds: number }> {
  const gaps: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const t = performance.now();
    gaps.push(t - last);
    last = t;
  }, 1);
  const begin = performance.now();
  await work();
  const seconds = (performance.now() - begin) / 1000;
  clearInterval(timer);
  return { gaps: gaps.sort((a, b) => a - b), seconds };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

function line(label: string, r: { gaps: number[]; seconds: number }) {
  const g = r.gaps;
  const over = (ms: number) => g.filter((x) => x > ms).length;
  console.log(
    `${label.padEnd(28)} ${fmt(r.seconds, 2).padStart(7)} s  ticks ${fmt(g.length).padStart(7)}  p50 ${fmt(pct(g, 50), 2).padStart(6)}  p99 ${fmt(pct(g, 99), 2).padStart(7)}  max ${fmt(g.at(-1) ?? 0, 1).padStart(8)} ms  over 10 ms ${String(over(10)).padStart(5)}  over 50 ms ${String(over(50)).padStart(4)}`,
  );
}

export async function main(args: string[]): Promise<number> {
  const o = parse(args);
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-maint-"));
  try {
    const hourEnd = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const now = hourEnd + 2 * 60_000;
    const store = openStore(dir);
    const account = seedAccount(store);
    const first = seedMonitors(store, account, o.monitors, () => ({ type: "http", target: "http://127.0.0.1:9/", intervalSec: 60, nextRunAt: now }));
    const insert = store.sqlite.prepare("INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms) VALUES (?, 'local', 'up', ?, 1)");
    const step = Math.max(1, Math.floor(HOUR_MS / 4 / o.rows));
    // in time order across monitors, as pings arrive: the last quarter of the hour
    for (let k = 0; k < o.rows; k++) {
      store.sqlite.transaction(() => {
        for (let m = 0; m < o.monitors; m++) insert.run(first + m, hourEnd - HOUR_MS / 4 + k * step);
      })();
    }
    console.log(`maintenance-stall: ${fmt(o.monitors)} monitors × ${fmt(o.rows)} checks in the hour that ended 2 minutes before the job's clock; ${o.runs} runs`);
    const config = loadConfig(["--data", dir], {});
    const ctx = buildContext({ config, store, log: createLogger("warn", "bench", () => {}), clock: { now: () => now }, secrets: loadSecretBox(dir, null) });
    line("reference: an idle loop, 2 s", await stalls(() => Bun.sleep(2000)));
    for (const [where, thread] of [["serving thread", false], ["worker thread", undefined]] as const) {
      // its first run starts at once; runNow joins it
      const job = startMaintenance(ctx, 24 * HOUR_MS, { thread });
      for (let r = 1; r <= o.runs; r++) {
        let buckets = 0;
        const res = await stalls(async () => {
          buckets = (await job.runNow())?.hourlyBuckets ?? 0;
        });
        line(`${where}, run ${r} (${fmt(buckets)} buckets)`, res);
      }
      await job.stop(10_000);
    }
    await store.close();
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
