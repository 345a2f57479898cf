/**
 * The two ways the grpc probe could make its one call, on the same health servers in the same run:
 *   npm run bench -- grpc-clients [--rounds N] [--checks N] [--skip-compile]
 *
 *   node:http2  Vigil's probe (src/probes/grpc.ts): a hand-coded unary call on node:http2
 *   grpc-js     @grpc/grpc-js's Client.makeUnaryRequest with the same message coding
 *               (scripts/bench/lib/grpc-js-check.ts)
 * Each check opens a connection and closes it, as the probe must. Per round, each candidate runs
 * --checks sequential checks in plaintext and then over TLS, the order rotated every round. Reported:
 * checks/s, p50/p99 ms of a check, and this process's CPU per check (the server runs in a child
 * process). Then the answers of both to the same cases, and (unless --skip-compile) each built alone
 * with `bun build --compile`, its executable's size beside an empty program's, and run.
 * Bounded: rounds x 2 candidates x 2 modes x --checks (at most 2,000) checks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { grpcProbe } from "../../src/probes/grpc.ts";
import { makeCerts } from "../../test/helpers/certs.ts";
import { closedPort } from "../../test/helpers/targets.ts";
import { context, monitor } from "../../test/probes/fixtures.ts";
import { grpcJsCheck } from "./lib/grpc-js-check.ts";
import { compileEach } from "./lib/compile-size.ts";
import { fmt, percentile } from "./lib/load.ts";
import { machine, ROOT, spawnUntil } from "./lib/proc.ts";

interface Options { rounds: number; checks: number; compile: boolean }

function parseArgs(args: string[]): Options {
  const o: Options = { rounds: 5, checks: 200, compile: true };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--rounds") o.rounds = Math.min(Math.max(1, Number(args[++i])), 20);
    else if (a === "--checks") o.checks = Math.min(Math.max(1, Number(args[++i])), 2000);
    else if (a === "--skip-compile") o.compile = false;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

/** One check against 127.0.0.1:port, answering "SERVING", another status, or an error's words; `trustCa` false leaves the test CA out. */
type Check = (port: number, service: string, tls: boolean, trustCa?: boolean) => Promise<string>;

function candidates(caPem: string): [string, Check][] {
  return [
    ["node:http2", async (port, service, tls, trustCa = true) => {
      const r = await grpcProbe(monitor({ target: `127.0.0.1:${port}`, grpc_service: service, grpc_tls: tls }), context({ extraCa: trustCa ? caPem : undefined }));
      return r.status === "up" ? "SERVING" : `${r.error_code}: ${r.error_message}`;
    }],
    ["grpc-js", (port, service, tls, trustCa = true) => grpcJsCheck({ ip: "127.0.0.1", host: "localhost", port, service, tls, ca: trustCa ? caPem : undefined, timeoutMs: 3000 })],
  ];
}

interface Tally { wall: number[]; cpuUs: number; elapsedMs: number; failures: number }

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const dir = mkdtempSync(join(tmpdir(), "vigil-grpc-bench-"));
  const certs = makeCerts(join(dir, "certs"));
  const { proc, line } = await spawnUntil([process.execPath, "scripts/bench/lib/grpc-server-child.ts", certs.certPath, certs.keyPath], (l) => l.startsWith("{"));
  try {
    const ports = JSON.parse(line) as { plain: number; tls: number };
    const list = candidates(certs.caPem);
    console.log(`grpc-clients: ${machine()}; ${o.rounds} rounds x ${o.checks} checks per candidate and mode`);
    const tallies = new Map<string, Tally>();
    for (const [name, run] of list) for (const tls of [false, true]) {
      tallies.set(`${name} ${tls ? "tls" : "plain"}`, { wall: [], cpuUs: 0, elapsedMs: 0, failures: 0 });
      await run(tls ? ports.tls : ports.plain, "", tls); // warm-up
    }
    for (let round = 0; round < o.rounds; round++) {
      const order = list.map((_, i) => list[(i + round) % list.length]!);
      for (const [name, run] of order) for (const tls of [false, true]) {
        const t = tallies.get(`${name} ${tls ? "tls" : "plain"}`)!;
        const cpu = process.cpuUsage();
        const began = performance.now();
        for (let i = 0; i < o.checks; i++) {
          const s = performance.now();
          const answer = await run(tls ? ports.tls : ports.plain, "", tls);
          t.wall.push(performance.now() - s);
          if (answer !== "SERVING") t.failures++;
        }
        t.elapsedMs += performance.now() - began;
        const used = process.cpuUsage(cpu);
        t.cpuUs += used.user + used.system;
      }
    }
    console.log("\ncandidate         checks/s   p50 ms   p99 ms   CPU ms/check   not SERVING");
    for (const [key, t] of tallies) {
      const n = t.wall.length;
      console.log(`${key.padEnd(16)} ${fmt((n / t.elapsedMs) * 1000).padStart(9)} ${fmt(percentile(t.wall, 50), 2).padStart(8)} ${fmt(percentile(t.wall, 99), 2).padStart(8)} ${fmt(t.cpuUs / n / 1000, 3).padStart(14)} ${String(t.failures).padStart(13)}`);
    }

    console.log("\nanswers to the same cases:");
    const refused = await closedPort();
    const cases: [string, number, string, boolean, boolean?][] = [
      ["SERVING", ports.plain, "", false],
      ["NOT_SERVING service", ports.plain, "down", false],
      ["unknown service", ports.plain, "no.Such", false],
      ["refused port", refused, "", false],
      ["TLS, CA given", ports.tls, "", true],
      ["TLS, CA not trusted", ports.tls, "", true, false],
      ["plaintext to TLS", ports.tls, "", false],
      ["TLS to plaintext", ports.plain, "", true],
    ];
    for (const [what, port, service, tls, trustCa] of cases) {
      for (const [name, run] of list) console.log(`  ${what.padEnd(20)} ${name.padEnd(11)} ${(await run(port, service, tls, trustCa)).slice(0, 160)}`);
    }

    if (o.compile) {
      console.log("\nbun build --compile, each candidate alone:");
      for (const c of compileEach(dir, [
        ["node:http2", join(ROOT, "scripts/bench/lib/grpc-compile-http2.ts")],
        ["grpc-js", join(ROOT, "scripts/bench/lib/grpc-compile-grpcjs.ts")],
      ])) {
        if ("error" in c) {
          console.log(`  ${c.name.padEnd(14)} ${c.error}`);
          continue;
        }
        const runs = [[`127.0.0.1:${ports.plain}`], [`localhost:${ports.tls}`, "tls", certs.caPath]].map((a) => {
          const r = Bun.spawnSync([c.exe, ...a], { stdout: "pipe", stderr: "pipe", timeout: 30_000 });
          return r.exitCode === 0 ? r.stdout.toString().trim() : `exit ${r.exitCode}: ${r.stderr.toString().slice(0, 200)}`;
        });
        console.log(`  ${c.name.padEnd(14)} ${(c.bytes / 1048576).toFixed(2)} MiB (+${(c.overEmpty / 1024).toFixed(0)} KiB over the empty program); plain ${runs[0]}; TLS ${runs[1]}`);
      }
    }
    return 0;
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
