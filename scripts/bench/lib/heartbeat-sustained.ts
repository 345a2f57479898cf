/**
 * The heartbeat bench's sustained mode (issue 18, point 9):
 *   npm run bench -- heartbeat --sustained [--duration 600] [--interval 60] [--monitors N] [--connections C]
 *                              [--bare S] [--no-btree] [--keep]
 *
 * One server, pinged at the highest rate it answers (wrk, closed loop) for `duration` seconds, as
 * consecutive wrk runs of `interval` seconds each, so every interval has its own rate and p99 (wrk
 * reports latency per run only). Between two runs nothing pauses but wrk's reconnect (~1 ms); the
 * store's figures of the interval (sustained.ts) are sampled at its end. The reference: the bare
 * Bun.serve of the short bench, `--bare` seconds before Vigil starts and as long after it stops, so
 * a drift of the box's own speed over the run shows beside Vigil's. Judged: the last interval's
 * rate within 10% of the first's, p99 under 10 ms in every interval, no acknowledged ping missing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkDurability, measureBare, seedHeartbeats, warmUp } from "../heartbeat.ts";
import { fmt, pickGenerator, runLoad, type LoadResult } from "./load.ts";
import { loadAverage, machine, rssBytes, startVigil } from "./proc.ts";
import { btreeLine, flatness, GROWING, Sampler, storeHeader, storeInterval, storeLine, type Sample } from "./sustained.ts";

export interface SustainedOptions {
  monitors: number;
  duration: number;
  interval: number;
  connections: number;
  generator: string | null;
  bare: number;
  btrees: boolean;
  keep: boolean;
}

/** The longest run the mode accepts: an hour. */
export const MAX_SUSTAINED_SECONDS = 3600;

export async function sustainedRun(o: SustainedOptions): Promise<number> {
  const gen = pickGenerator(o.generator);
  const intervals = Math.max(1, Math.round(Math.min(o.duration, MAX_SUSTAINED_SECONDS) / o.interval));
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-sustained-"));
  console.log(`heartbeat bench, sustained: ${fmt(o.monitors)} monitors, ${o.connections} connections, ${intervals} intervals of ${o.interval} s, generator ${gen}`);
  console.log(`machine: ${machine()}; started ${new Date().toISOString()}`);
  const tokens = await seedHeartbeats(dir, o.monitors);
  const paths = tokens.map((t) => `/h/${t}`);
  const problems: string[] = [];
  const onLine = (l: string) => {
    if (problems.length < 5 && /"level":"(warn|error)"/.test(l)) problems.push(l);
  };
  const bareBefore = await measureBare(gen, paths, o.connections, o.bare);
  const vigil = await startVigil(dir, ["--log-level", "info", "--metrics-public", "--ping-limit-token", "1000000", "--ping-limit-ip", "10000000"], { onLine });
  const runs: LoadResult[] = [];
  const samples: Sample[] = [];
  const acked = new Map<number, number>();
  let measuredFrom = 0;
  let stopMs = 0;
  const sampler = new Sampler(vigil.pid, dir, vigil.url, { writer: "vigil-fold", btrees: o.btrees ? GROWING : [] });
  try {
    const bad = await warmUp(vigil.url, paths);
    if (bad) throw new Error(`${bad} warm-up pings were not accepted`);
    measuredFrom = Date.now();
    samples.push(await sampler.sample());
    console.log("");
    console.log(" min  pings/s   p50 ms  p99 ms  errors  rss MiB  load avg   " + storeHeader("vigil-fold"));
    for (let i = 0; i < intervals; i++) {
      const load = loadAverage().split(" ")[0]!;
      const run = await runLoad(gen, { url: vigil.url, paths, connections: o.connections, durationSec: o.interval, countAcks: true });
      const s = await sampler.sample();
      runs.push(run);
      samples.push(s);
      for (const [k, n] of run.acked) acked.set(k, (acked.get(k) ?? 0) + n);
      const st = storeInterval(samples[i]!, s, "monitor_events");
      console.log(
        `${String(i + 1).padStart(4)} ${fmt(run.perSecond).padStart(8)}  ${fmt(run.p50, 2).padStart(7)} ${fmt(run.p99, 2).padStart(7)} ${String(run.errors).padStart(7)}  ${fmt(rssBytes(vigil.pid) / 2 ** 20).padStart(7)}  ${load.padStart(8)}   ${storeLine(st, s, "monitor_events", "vigil-fold")}`,
      );
    }
  } catch (err) {
    // a server that died mid-run: say how, with what it logged
    if (vigil.proc.exitCode !== null || vigil.proc.signalCode !== null) {
      console.log(`the server exited during the run (code ${vigil.proc.exitCode}, signal ${vigil.proc.signalCode})`);
      for (const p of problems) console.log(`server log: ${p.slice(0, 400)}`);
    }
    throw err;
  } finally {
    sampler.close();
    const t = performance.now();
    await vigil.stop();
    stopMs = performance.now() - t;
  }
  const bareAfter = await measureBare(gen, paths, o.connections, o.bare);

  if (o.btrees) {
    console.log("");
    console.log("b-trees (pages of 4 KiB; depth in levels) at the start and after each interval:");
    samples.forEach((s, i) => console.log(`${String(i).padStart(4)}  ${btreeLine(s)}`));
  }
  const rates = flatness(runs.map((r) => r.perSecond));
  const worstP99 = Math.max(...runs.map((r) => r.p99));
  const bareDrift = bareAfter.run.perSecond / bareBefore.run.perSecond;
  const durability = await checkDurability(dir, measuredFrom, acked, tokens);
  let ok = 0;
  for (const r of runs) ok += r.ok;
  console.log("");
  console.log(`bare Bun.serve, same generator: ${fmt(bareBefore.run.perSecond)} req/s before, ${fmt(bareAfter.run.perSecond)} after (after/before ${fmt(bareDrift * 100, 1)}%), p99 ${fmt(bareBefore.run.p99, 2)} / ${fmt(bareAfter.run.p99, 2)} ms`);
  console.log(`first interval ${fmt(rates.first)} pings/s (${fmt((rates.first / bareBefore.run.perSecond) * 100, 1)}% of bare before), last ${fmt(rates.last)} (${fmt((rates.last / bareAfter.run.perSecond) * 100, 1)}% of bare after)`);
  const flat = rates.ratio >= 0.9;
  const tails = worstP99 < 10;
  console.log(`last/first ${fmt(rates.ratio * 100, 1)}% (target >= 90%: ${flat ? "met" : "not met"}); against bare's own drift ${fmt((rates.ratio / bareDrift) * 100, 1)}%`);
  console.log(`p99 per interval ${fmt(Math.min(...runs.map((r) => r.p99)), 2)}-${fmt(worstP99, 2)} ms (target < 10 ms in every interval: ${tails ? "met" : "not met"})`);
  console.log(`the stop folded the journal's backlog in ${fmt(stopMs)} ms`);
  console.log(`durability: ${fmt(durability.acked)} acknowledged (${fmt(ok)} 2xx), ${fmt(durability.totalRecorded)} accepted pings recorded since the start, ${durability.missing} acknowledged but missing`);
  for (const p of problems) console.log(`server log: ${p.slice(0, 400)}`);
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
  else console.log(`data kept in ${dir}`);
  return durability.missing === 0 && durability.acked === ok ? 0 : 1;
}
