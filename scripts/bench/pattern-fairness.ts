/**
 * What one account's slow patterns cost another account's check on the pattern worker
 * (scheduler/pattern-thread.ts, README "Regular expressions"), by measurement:
 *   npm run bench -- pattern-fairness [--rounds N] [--a-batches N] [--a-timeout-ms N]
 *
 * Account A has `--a-batches` checks whose batches each hold twenty capture groups over 1 MiB
 * (minutes of matching) and a timeout of `--a-timeout-ms`; they reach the worker together. Account
 * B's check then brings one cheap pattern, a different moment of the time limit in each round. For
 * each arrangement: how long B's batch waits for its answer, and how late the serving thread's
 * timers run meanwhile (a 10 ms interval's lateness). The reference is what Vigil did before
 * accounts took turns: first come first served, each batch bounded only by its check's deadline.
 * First, for choosing the limit: what ordinary patterns cost over a whole 4 MiB answer.
 */
import { loadavg } from "node:os";
import { CompiledPatterns, runPatternBatch, type PatternBatch } from "../../src/domain/user-patterns.ts";
import type { Logger } from "../../src/lib/logger.ts";
import { patternThread } from "../../src/scheduler/pattern-thread.ts";

interface Options { rounds: number; aBatches: number; aTimeoutMs: number }

function parseArgs(args: string[]): Options {
  const o: Options = { rounds: 5, aBatches: 8, aTimeoutMs: 5000 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const n = Number(args[++i]);
    if (a === "--rounds") o.rounds = Math.min(Math.max(1, n), 100);
    else if (a === "--a-batches") o.aBatches = Math.min(Math.max(1, n), 200);
    else if (a === "--a-timeout-ms") o.aTimeoutMs = Math.min(Math.max(100, n), 60_000);
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

interface Arrangement {
  name: string;
  /** false: every batch under one account, so first come first served */
  inTurn: boolean;
  timeLimitMs: number;
  workers: number;
}

const MIB = Array.from({ length: 1 << 20 }, (_, i) => "abcdefghij 0123456789"[(i * 7919) % 21]).join("");
const SLOW: PatternBatch = { texts: [MIB], jobs: Array.from({ length: 20 }, (_, i) => ({ pattern: `((?:[a-j]+[0-9]*){1,100})[^a-j0-9 ]{${i + 2}}`, text: 0, want: "group" as const })) };
const CHEAP: PatternBatch = { texts: ['{"status":"ok"}'], jobs: [{ pattern: '"status":"(ok|up)"', text: 0, want: "test" }] };

const quiet = { level: "silent", debug() {}, info() {}, warn() {}, error() {}, child: () => quiet } as unknown as Logger;
const never = new AbortController().signal;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The lateness of a 10 ms interval until stopped: how long the serving thread's timers wait. */
function timerLateness(): () => number[] {
  const late: number[] = [];
  let expected = performance.now() + 10;
  const timer = setInterval(() => {
    const now = performance.now();
    late.push(Math.max(0, now - expected));
    expected = now + 10;
  }, 10);
  return () => {
    clearInterval(timer);
    return late;
  };
}

/** One round: A's batches arrive, B's `offsetMs` later; B's wait and the timers' lateness. */
async function round(a: Arrangement, o: Options, offsetMs: number): Promise<{ waitMs: number; late: number[] }> {
  const thread = patternThread(quiet, { timeLimitMs: a.timeLimitMs, workers: a.workers });
  const accountA = thread.forAccount(1);
  const accountB = thread.forAccount(a.inTurn ? 2 : 1);
  try {
    // every worker started before the round, as on a server that has been matching for a while
    await Promise.all(Array.from({ length: a.workers }, () => accountA.run(CHEAP, never)));
    const stopLateness = timerLateness();
    for (let i = 0; i < o.aBatches; i++) accountA.run(SLOW, AbortSignal.timeout(o.aTimeoutMs)).catch(() => {});
    await Bun.sleep(offsetMs);
    const t0 = performance.now();
    await accountB.run(CHEAP, never);
    const waitMs = performance.now() - t0;
    return { waitMs, late: stopLateness() };
  } finally {
    await thread.stop();
  }
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const arrangements: Arrangement[] = [
    { name: "first come first served, no time limit (before; reference)", inTurn: false, timeLimitMs: 60_000, workers: 1 },
    { name: "accounts in turn, time limit 2000 ms, 1 worker", inTurn: true, timeLimitMs: 2000, workers: 1 },
    { name: "accounts in turn, time limit 2000 ms, 2 workers", inTurn: true, timeLimitMs: 2000, workers: 2 },
    { name: "accounts in turn, time limit 1000 ms, 1 worker", inTurn: true, timeLimitMs: 1000, workers: 1 },
  ];
  // the largest answer a check reads, with the match at its end: a whole scan per pattern
  const answer = MIB.repeat(4) + 'value="token=abc123" status: error';
  const compiled = new CompiledPatterns();
  for (const pattern of ["token=([A-Za-z0-9]+)", "(?:error|fail)", "value=\"([^\"]*)\""]) {
    for (const want of ["test", "group"] as const) {
      const batch = { texts: [answer], jobs: [{ pattern, text: 0, want }] };
      runPatternBatch(batch, compiled);
      const t0 = performance.now();
      runPatternBatch(batch, compiled);
      console.log(`  ${pattern} (${want}) over 4 MiB: ${(performance.now() - t0).toFixed(0)} ms`);
    }
  }
  console.log(`pattern-fairness: ${o.aBatches} batches of account A (20 capture groups over 1 MiB each, timeout ${o.aTimeoutMs} ms), then account B's one cheap pattern; ${o.rounds} rounds each; load average ${loadavg()[0]!.toFixed(1)}`);
  // B alone, for scale: what a cheap batch costs on a started worker
  const alone = patternThread(quiet, { timeLimitMs: 60_000 });
  const b = alone.forAccount(2);
  await b.run(CHEAP, never);
  const aloneMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    await b.run(CHEAP, never);
    aloneMs.push(performance.now() - t0);
  }
  await alone.stop();
  console.log(`  B alone: wait p50 ${percentile(aloneMs, 50).toFixed(2)} ms, max ${Math.max(...aloneMs).toFixed(2)} ms`);
  for (const a of arrangements) {
    const waits: number[] = [];
    const late: number[] = [];
    // B comes at a different moment of A's first batch each round, spread over the time limit
    const span = Math.min(a.timeLimitMs, o.aTimeoutMs);
    for (let r = 0; r < o.rounds; r++) {
      const got = await round(a, o, ((r + 0.5) / o.rounds) * span);
      waits.push(got.waitMs);
      late.push(...got.late);
    }
    console.log(`  ${a.name}: B waits p50 ${percentile(waits, 50).toFixed(0)} ms, max ${Math.max(...waits).toFixed(0)} ms; serving thread's timers late p50 ${percentile(late, 50).toFixed(1)} ms, p99 ${percentile(late, 99).toFixed(1)} ms, max ${Math.max(...late).toFixed(1)} ms; load average ${loadavg()[0]!.toFixed(1)}`);
  }
  return 0;
}
