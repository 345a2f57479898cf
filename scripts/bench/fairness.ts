/**
 * One abusive account beside a normal one:
 *   npm run bench -- fairness [--abusive 600] [--normal 100] [--abusive-interval 10] [--timeout 9000]
 *                             [--normal-interval 30] [--max-concurrent 500] [--warmup 20] [--duration 60]
 *
 * The abusive account's http monitors all hit a local target that accepts and never answers, so each
 * check holds its slot until its timeout (by default 600 of them against the 500 slots of
 * --max-concurrent-checks: more than the slots can hold); the normal account's monitors hit a target
 * that answers at once. Two runs of `vigil serve` (a child process) in one invocation, same build,
 * same monitors, one after the other:
 *   reference: the normal monitors belong to the abusive account. With one account the scheduler is
 *     what it was before fairness: one first-in first-out line, one cap;
 *   fair: the normal monitors have an account of their own (the default share: half the slots).
 * Due times are seeded on each monitor's phase (scheduler/timing.ts), starting once the server is
 * up. After the run the store gives every check's start (`checked_at`): a normal monitor's start
 * lateness is how long after its due time on that grid it started; runs missed (skipped because
 * the previous one had not started yet) are counted against the runs due. Everything stays on
 * loopback, every phase is bounded in time, and only the processes it starts are stopped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/database.ts";
import { phaseOffset, slotAtOrAfter } from "../../src/scheduler/timing.ts";
import { fmt, percentile } from "./lib/load.ts";
import { scrape, total } from "./lib/metrics.ts";
import { machine, spawnUntil, startVigil } from "./lib/proc.ts";
import { seedAccount, seedMonitors } from "./lib/seed.ts";

interface Options {
  abusive: number;
  normal: number;
  abusiveInterval: number;
  timeoutMs: number;
  normalInterval: number;
  maxConcurrent: number;
  warmup: number;
  duration: number;
}

function parseArgs(args: string[]): Options {
  const o: Options = { abusive: 600, normal: 100, abusiveInterval: 10, timeoutMs: 9000, normalInterval: 30, maxConcurrent: 500, warmup: 20, duration: 60 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--abusive") o.abusive = Math.min(v(), 5000);
    else if (a === "--normal") o.normal = Math.min(v(), 1000);
    else if (a === "--abusive-interval") o.abusiveInterval = Math.max(10, v());
    else if (a === "--timeout") o.timeoutMs = Math.min(Math.max(100, v()), 60_000);
    else if (a === "--normal-interval") o.normalInterval = Math.max(10, v());
    else if (a === "--max-concurrent") o.maxConcurrent = Math.max(1, v());
    else if (a === "--warmup") o.warmup = Math.min(v(), 300);
    else if (a === "--duration") o.duration = Math.min(v(), 600);
    else throw new Error(`unknown option ${a}`);
  }
  if (o.timeoutMs >= o.abusiveInterval * 1000) o.timeoutMs = o.abusiveInterval * 1000 - 100;
  return o;
}

interface Targets {
  hang: string;
  ok: string;
}

/** Seconds from the seeding to the first due time: the server's start-up. */
const START_IN_MS = 15_000;

/** Seeds the monitors, due on their phase from `t0`; returns the normal monitors' ids. */
function seed(dir: string, o: Options, t: Targets, ownAccount: boolean, t0: number): number[] {
  const store = openStore(dir);
  try {
    const abusive = seedAccount(store, "abusive");
    const normal = ownAccount ? seedAccount(store, "normal") : abusive;
    const firstSlow = seedMonitors(store, abusive, o.abusive, (i) => ({ type: "http", target: `http://${t.hang}/slow/${i}`, intervalSec: o.abusiveInterval, nextRunAt: t0, name: `slow ${i}` }));
    const firstNormal = seedMonitors(store, normal, o.normal, (i) => ({ type: "http", target: `http://${t.ok}/n/${i}`, intervalSec: o.normalInterval, nextRunAt: t0, name: `normal ${i}` }));
    const place = store.sqlite.prepare("UPDATE monitors SET next_run_at = ?1, last_checked_at = ?1 - ?2, timeout_ms = ?3 WHERE id = ?4");
    const onPhase = (id: number, intervalSec: number, timeoutMs: number) => {
      const ms = intervalSec * 1000;
      place.run(slotAtOrAfter(t0, ms, phaseOffset(id, ms)), ms, timeoutMs, id);
    };
    store.sqlite.transaction(() => {
      for (let i = 0; i < o.abusive; i++) onPhase(firstSlow + i, o.abusiveInterval, o.timeoutMs);
      for (let i = 0; i < o.normal; i++) onPhase(firstNormal + i, o.normalInterval, 5000);
    })();
    return Array.from({ length: o.normal }, (_, i) => firstNormal + i);
  } finally {
    void store.close();
  }
}

interface RunResult {
  lateness: number[];
  due: number;
  abusiveStartedPerSec: number;
  inFlight: number;
  waiting: number;
}

async function run(o: Options, t: Targets, ownAccount: boolean): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-fair-"));
  try {
    const t0 = Date.now() + START_IN_MS;
    const normalIds = seed(dir, o, t, ownAccount, t0);
    const vigil = await startVigil(dir, ["--log-level", "info", "--metrics-public", "--max-concurrent-checks", String(o.maxConcurrent)]);
    const from = t0 + o.warmup * 1000;
    const to = from + o.duration * 1000;
    let inFlight = 0;
    let waiting = 0;
    try {
      for (let now = Date.now(); now < to; now = Date.now()) {
        await Bun.sleep(Math.min(10_000, to - now));
        if (Date.now() < from) continue;
        const s = await scrape(vigil.url);
        inFlight = Math.max(inFlight, total(s, "vigil_scheduler_checks_in_flight"));
        waiting = Math.max(waiting, total(s, "vigil_scheduler_checks_waiting"));
      }
    } finally {
      await vigil.stop();
    }
    const store = openStore(dir);
    try {
      const normal = new Set(normalIds);
      const rows = store.sqlite.query("SELECT monitor_id AS id, checked_at AS at FROM checks WHERE checked_at >= ?1 AND checked_at < ?2").all(from, to) as { id: number; at: number }[];
      const lateness: number[] = [];
      let abusive = 0;
      const ms = o.normalInterval * 1000;
      for (const r of rows) {
        if (!normal.has(r.id)) {
          abusive++;
          continue;
        }
        // the grid point at or before the start is the run's due time (lateness under one interval)
        const offset = phaseOffset(r.id, ms);
        lateness.push((((r.at - offset) % ms) + ms) % ms);
      }
      let due = 0;
      for (const id of normalIds) {
        const offset = phaseOffset(id, ms);
        for (let at = slotAtOrAfter(from, ms, offset); at < to; at += ms) due++;
      }
      return { lateness, due, abusiveStartedPerSec: abusive / o.duration, inFlight, waiting };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(name: string, r: RunResult): void {
  const l = r.lateness;
  console.log(
    `${name.padEnd(10)} ${fmt(percentile(l, 50)).padStart(8)} ${fmt(percentile(l, 99)).padStart(8)} ${fmt(l.length ? Math.max(...l) : NaN).padStart(8)} ${`${fmt(l.length)} / ${fmt(r.due)}`.padStart(13)} ${fmt(r.abusiveStartedPerSec, 1).padStart(12)} ${fmt(r.inFlight).padStart(10)} ${fmt(r.waiting).padStart(8)}`,
  );
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  console.log(
    `fairness bench: ${fmt(o.abusive)} abusive http monitors every ${o.abusiveInterval} s on a target that never answers (timeout ${fmt(o.timeoutMs)} ms), ` +
      `${fmt(o.normal)} normal ones every ${o.normalInterval} s on one that answers at once; --max-concurrent-checks ${fmt(o.maxConcurrent)}; ${o.warmup} s warm-up, ${o.duration} s measured`,
  );
  console.log(`machine: ${machine()}`);
  const child = await spawnUntil([process.execPath, join(import.meta.dir, "lib", "hanging-target.ts")], (l) => l.startsWith('{"hang"'));
  try {
    const targets = JSON.parse(child.line) as Targets;
    const reference = await run(o, targets, false);
    const fair = await run(o, targets, true);
    console.log("");
    console.log("normal account's start lateness (ms)       runs started   abusive     max in    max");
    console.log("run            p50      p99      max     / runs due   started/s     flight  waiting");
    report("reference", reference);
    report("fair", fair);
    console.log("(reference: the normal monitors in the abusive account, one line and one cap as before fairness)");
    return 0;
  } finally {
    child.proc.kill("SIGTERM");
    await child.proc.exited;
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
