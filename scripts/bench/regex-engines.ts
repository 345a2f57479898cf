/**
 * Which engine runs users' regular expressions (README "Regular expressions"), by measurement:
 *   npm run bench -- regex-engines [--rounds N] [--skip-compile]
 *
 * Candidates: re2js (what Vigil uses), re2-wasm and re2 (the native binding) when they can be
 * loaded (neither is a dependency: `npm install --no-save re2-wasm` to include it), and
 * JavaScript's own RegExp as the reference. For each: the cost of compiling typical patterns, of
 * matching them on typical answers (a short JSON value, a 50 KiB page), the pathological
 * `((a+)+)+b` on thirty a's, and the engine's worst linear case (capture groups on 1 MiB), which
 * is why matching runs on a worker; then what a check pays for that worker, beside matching on the
 * calling thread. Unless --skip-compile, each library alone in a small program
 * built with `bun build --compile --minify`: its size beside an empty one's.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { RE2JS } from "re2js";
import { matchOnThisThread, type PatternBatch } from "../../src/domain/user-patterns.ts";
import type { Logger } from "../../src/lib/logger.ts";
import { patternThread } from "../../src/scheduler/pattern-thread.ts";
import { compileEach } from "./lib/compile-size.ts";
import { ROOT } from "./lib/proc.ts";

interface Options { rounds: number; compile: boolean }

function parseArgs(args: string[]): Options {
  const o: Options = { rounds: 200, compile: true };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--rounds") o.rounds = Math.min(Math.max(1, Number(args[++i])), 100_000);
    else if (a === "--skip-compile") o.compile = false;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

/** One engine as the bench drives it: compile, test anywhere, first group. */
interface Engine {
  name: string;
  compile(source: string): unknown;
  test(re: unknown, text: string): boolean;
  group(re: unknown, text: string): string | null;
}

const native: Engine = {
  name: "RegExp (reference)",
  compile: (s) => new RegExp(s),
  test: (re, t) => (re as RegExp).test(t),
  group: (re, t) => {
    const m = (re as RegExp).exec(t);
    return m ? (m[1] ?? m[0]) : null;
  },
};

const re2js: Engine = {
  name: "re2js",
  compile: (s) => RE2JS.compile(s),
  test: (re, t) => (re as RE2JS).test(t),
  group: (re, t) => {
    const m = (re as RE2JS).matcher(t);
    return m.find() ? (m.group(1) ?? m.group(0)) : null;
  },
};

/** An engine that is not a dependency: loaded if installed, else the reason it is not measured. */
async function optional(name: string, load: () => Promise<Engine>): Promise<Engine | string> {
  try {
    return await load();
  } catch (err) {
    return `${name}: not measured (${(err as Error).message.split("\n")[0]!.slice(0, 160)})`;
  }
}

type Ctor = new (source: string, flags?: string) => RegExp;
const viaRegExpApi = (name: string, Re: Ctor, flags?: string): Engine => ({
  name,
  compile: (s) => new Re(s, flags),
  test: (re, t) => (re as RegExp).test(t),
  group: (re, t) => {
    const m = (re as RegExp).exec(t);
    return m ? (m[1] ?? m[0]) : null;
  },
});

const TYPICAL = ["^\\d+$", "^(ok|healthy|up)$", "token=([A-Za-z0-9._-]+)", '"version":\\s*"v?(\\d+\\.\\d+\\.\\d+)"', "^[a-f0-9]{40}$", "(?:error|fail)"];
const SHORT = "healthy";
const PAGE = `<html><head><title>shop</title></head><body>${"<p>lorem ipsum dolor sit amet, consectetur</p>\n".repeat(1100)}<input name="csrf" value="token=Zq7S9xk2.abcDEF-123">"version": "v2.31.4"</body></html>`;
const MIB = Array.from({ length: 1 << 20 }, (_, i) => "abcdefghij 0123456789"[(i * 7919) % 21]).join("");
const WORST = "((?:[a-j]+[0-9]*){1,100})[^a-j0-9 ]{5}";

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

function timeEach(rounds: number, run: () => void): number[] {
  const out: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    run();
    out.push(performance.now() - t0);
  }
  return out;
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const engines: Engine[] = [native, re2js];
  const skipped: string[] = [];
  for (const e of [
    await optional("re2-wasm", async () => viaRegExpApi("re2-wasm", ((await import("re2-wasm" as string)) as { RE2: Ctor }).RE2, "u")),
    await optional("re2 (native binding)", async () => viaRegExpApi("re2 (native binding)", ((await import("re2" as string)) as { default: Ctor }).default)),
  ]) {
    if (typeof e === "string") skipped.push(e);
    else engines.push(e);
  }
  console.log(`rounds: ${o.rounds}; Bun ${Bun.version}; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  for (const s of skipped) console.log(`  ${s}`);
  for (const e of engines) {
    // warm up: the first compile of an engine loads its tables
    for (const p of TYPICAL) e.compile(p);
    const compile = timeEach(o.rounds, () => { for (const p of TYPICAL) e.compile(p); }).map((ms) => ms / TYPICAL.length);
    const compiled = TYPICAL.map((p) => e.compile(p));
    const short = timeEach(o.rounds, () => { for (const re of compiled) e.test(re, SHORT); }).map((ms) => ms / compiled.length);
    const page = timeEach(Math.max(1, Math.floor(o.rounds / 10)), () => { for (const re of compiled) e.group(re, PAGE); }).map((ms) => ms / compiled.length);
    console.log(`${e.name}`);
    console.log(`  compile, typical pattern:      p50 ${us(percentile(compile, 50))}, p90 ${us(percentile(compile, 90))}`);
    console.log(`  test, ${SHORT.length}-char value:          p50 ${us(percentile(short, 50))}, p90 ${us(percentile(short, 90))}`);
    console.log(`  first group, ${(PAGE.length / 1024).toFixed(0)} KiB page:     p50 ${us(percentile(page, 50))}, p90 ${us(percentile(page, 90))}`);
    const nested = e.compile("((a+)+)+b");
    const t0 = performance.now();
    const hit = e.test(nested, "a".repeat(30));
    console.log(`  ((a+)+)+b on 30 a's, once:     ${(performance.now() - t0).toFixed(1)} ms (${hit ? "match" : "no match"})`);
    if (e !== native) {
      // the native engine backtracks on this one for as long as it is let: not run
      const worst = e.compile(WORST);
      const t1 = performance.now();
      e.group(worst, MIB);
      console.log(`  ${WORST} first group on 1 MiB: ${(performance.now() - t1).toFixed(0)} ms`);
    }
  }
  // what a check pays to match on the worker instead of the serving thread: one rule on a short
  // value, and fifty on a 50 KiB answer, as scheduler/pattern-thread.ts runs them
  const quiet = { level: "silent", debug() {}, info() {}, warn() {}, error() {}, child: () => quiet } as unknown as Logger;
  const thread = patternThread(quiet, { timeLimitMs: 60_000 });
  const worker = thread.forAccount(1);
  const here = matchOnThisThread();
  const never = new AbortController().signal;
  const batches: [string, PatternBatch][] = [
    ["1 rule, short value", { texts: [SHORT], jobs: [{ pattern: "^(ok|healthy|up)$", text: 0, want: "test" }] }],
    ["50 rules, 51 KiB answer", { texts: [PAGE], jobs: Array.from({ length: 50 }, (_, i) => ({ pattern: `value="token=([A-Za-z0-9]{${(i % 8) + 1}})`, text: 0, want: "group" as const })) }],
  ];
  try {
    await worker.run(batches[0]![1], never); // starts the worker
    for (const [name, batch] of batches) {
      const rounds = Math.max(5, Math.floor(o.rounds / 4));
      const onWorker: number[] = [];
      const onThread: number[] = [];
      for (let r = 0; r < rounds; r++) {
        let t0 = performance.now();
        await worker.run(batch, never);
        onWorker.push(performance.now() - t0);
        t0 = performance.now();
        await here.run(batch, never);
        onThread.push(performance.now() - t0);
      }
      console.log(`pattern worker, ${name}: p50 ${us(percentile(onWorker, 50))}, p90 ${us(percentile(onWorker, 90))}; on the calling thread (reference) p50 ${us(percentile(onThread, 50))}, p90 ${us(percentile(onThread, 90))}`);
    }
  } finally {
    await thread.stop();
  }
  if (o.compile) {
    console.log("bun build --compile --minify, each library alone:");
    const dir = mkdtempSync(join(tmpdir(), "vigil-bench-regex-"));
    try {
      for (const c of compileEach(dir, [
        ["re2js", join(ROOT, "scripts/bench/lib/regex-compile-re2js.ts")],
        ["re2-wasm", join(ROOT, "scripts/bench/lib/regex-compile-re2-wasm.ts")],
      ])) {
        if ("error" in c) {
          console.log(`  ${c.name.padEnd(14)} ${c.error.split("\n")[0]}`);
          continue;
        }
        const run = Bun.spawnSync([c.exe], { cwd: dir, stdout: "pipe", stderr: "pipe", timeout: 30_000 });
        const out = run.exitCode === 0 ? run.stdout.toString().trim() : `exit ${run.exitCode}`;
        // a file the executable opens by the path it had on the build machine is not inside it
        const outside = readFileSync(c.exe).includes(join(ROOT, "node_modules")) ? "; opens a file under the build's node_modules at run time" : "";
        console.log(`  ${c.name.padEnd(14)} ${c.bytes.toLocaleString("en")} bytes (+${(c.overEmpty / 1024).toFixed(0)} KiB over the empty program); runs: ${out.slice(0, 80)}${outside}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return 0;
}
