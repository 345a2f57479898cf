/**
 * What an https check costs over HTTP/1.1 and over HTTP/2, on the same servers in the same run:
 *   npm run bench -- http-versions [--rounds N] [--checks N] [--bytes N]
 *
 *   HTTP/1.1, server takes both  Vigil's exchange as it runs (src/net/http-exchange.ts): offers
 *                                HTTP/1.1, which a server taking both accepts
 *   HTTP/2, server takes both    the same exchange made to offer only h2 to that server
 *   HTTP/2-only server           Vigil's exchange as it runs against a server that speaks only h2:
 *                                HTTP/1.1 refused in a first handshake, then h2
 * Each check opens a connection and closes it, as a probe must (TLS with the test CA, SNI
 * localhost). Per round each candidate runs --checks sequential checks, the order rotated every
 * round. Reported: checks/s, p50/p99 ms of a check, this process's CPU per check (the servers
 * run in a child process) in all and as the median of rounds, and the HTTP/2 / HTTP/1.1 ratio of
 * each round. Every answer's first line, the version the server saw, is checked.
 * Bounded: rounds (at most 20) x 3 candidates x --checks (at most 2,000) checks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDeadline } from "../../src/net/deadline.ts";
import type { HttpProtocol } from "../../src/net/http-connection.ts";
import { httpExchange } from "../../src/net/http-exchange.ts";
import { makeCerts } from "../../test/helpers/certs.ts";
import { fmt, percentile } from "./lib/load.ts";
import { machine, spawnUntil } from "./lib/proc.ts";

interface Options { rounds: number; checks: number; bytes: number }

function parseArgs(args: string[]): Options {
  const o: Options = { rounds: 5, checks: 300, bytes: 2048 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--rounds") o.rounds = Math.min(Math.max(1, Number(args[++i])), 20);
    else if (a === "--checks") o.checks = Math.min(Math.max(1, Number(args[++i])), 2000);
    else if (a === "--bytes") o.bytes = Math.min(Math.max(16, Number(args[++i])), 4 * 1024 * 1024);
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

interface Candidate { name: string; port: "both" | "h2only"; offer?: readonly HttpProtocol[]; version: string }

const CANDIDATES: Candidate[] = [
  { name: "HTTP/1.1, server takes both", port: "both", version: "1.1" },
  { name: "HTTP/2, server takes both", port: "both", offer: ["h2"], version: "2.0" },
  { name: "HTTP/2-only server", port: "h2only", version: "2.0" },
];

/** One check as the http probe makes it; the version the server saw, or the failure's words. */
async function check(port: number, caPem: string, offer: readonly HttpProtocol[] | undefined): Promise<string> {
  const deadline = startDeadline(5000, new AbortController().signal);
  try {
    const res = await httpExchange(
      { method: "GET", url: new URL(`https://localhost:${port}/`), headers: {}, body: null },
      { deadline, tlsVerify: true, extraCa: caPem, credentialHeaders: [], offer },
    );
    return res.body.subarray(0, 3).toString();
  } catch (err) {
    return String((err as Error).message);
  } finally {
    deadline.dispose();
  }
}

interface Tally { wall: number[]; cpuUs: number; elapsedMs: number; wrong: number; roundCpuMs: number[] }

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const dir = mkdtempSync(join(tmpdir(), "vigil-http-versions-"));
  const certs = makeCerts(join(dir, "certs"));
  const { proc, line } = await spawnUntil([process.execPath, "scripts/bench/lib/http-versions-server-child.ts", certs.certPath, certs.keyPath, String(o.bytes)], (l) => l.startsWith("{"));
  try {
    const ports = JSON.parse(line) as Record<Candidate["port"], number>;
    console.log(`http-versions: ${machine()}; ${o.rounds} rounds x ${o.checks} checks per candidate; a ${o.bytes}-byte page`);
    const tallies = new Map<string, Tally>();
    for (const c of CANDIDATES) {
      tallies.set(c.name, { wall: [], cpuUs: 0, elapsedMs: 0, wrong: 0, roundCpuMs: [] });
      const first = await check(ports[c.port], certs.caPem, c.offer); // warm-up
      if (first !== c.version) throw new Error(`${c.name}: expected HTTP ${c.version}, got ${first}`);
    }
    for (let round = 0; round < o.rounds; round++) {
      const order = CANDIDATES.map((_, i) => CANDIDATES[(i + round) % CANDIDATES.length]!);
      for (const c of order) {
        const t = tallies.get(c.name)!;
        const cpu = process.cpuUsage();
        const began = performance.now();
        for (let i = 0; i < o.checks; i++) {
          const s = performance.now();
          if ((await check(ports[c.port], certs.caPem, c.offer)) !== c.version) t.wrong++;
          t.wall.push(performance.now() - s);
        }
        t.elapsedMs += performance.now() - began;
        const used = process.cpuUsage(cpu);
        t.cpuUs += used.user + used.system;
        t.roundCpuMs.push((used.user + used.system) / o.checks / 1000);
      }
    }
    console.log("\ncandidate                      checks/s   p50 ms   p99 ms   CPU ms/check   median of rounds   wrong version or failed");
    for (const [name, t] of tallies) {
      const n = t.wall.length;
      console.log(`${name.padEnd(29)} ${fmt((n / t.elapsedMs) * 1000).padStart(9)} ${fmt(percentile(t.wall, 50), 2).padStart(8)} ${fmt(percentile(t.wall, 99), 2).padStart(8)} ${fmt(t.cpuUs / n / 1000, 3).padStart(14)} ${fmt(percentile(t.roundCpuMs, 50), 3).padStart(18)} ${String(t.wrong).padStart(25)}`);
    }
    // the load of a shared box drifts between rounds; each round's ratio compares like with like
    const [h1, h2] = [tallies.get(CANDIDATES[0]!.name)!, tallies.get(CANDIDATES[1]!.name)!];
    const ratios = h2.roundCpuMs.map((v, i) => v / h1.roundCpuMs[i]!);
    console.log(`\nCPU per check, HTTP/2 / HTTP/1.1 on the server that takes both, per round: median ${fmt(percentile(ratios, 50), 3)}, range ${fmt(Math.min(...ratios), 3)}-${fmt(Math.max(...ratios), 3)}`);
    return 0;
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
