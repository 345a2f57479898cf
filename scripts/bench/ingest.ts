/**
 * Results from probe peers through the real endpoint:
 *   npm run bench -- ingest [--monitors N] [--rate R] [--duration S] [--failing N] [--batch-ms MS]
 *
 * The leader (`vigil serve`, a child process) holds N monitors that run only in the regions of
 * three probe peers (eu, us, ap; peer tokens issued in its store), so the leader checks none
 * itself. This process plays the three probes: every `batch-ms` each sends the results that came
 * due (R results/s in all, round-robin over the monitors) to POST /peer/v1/results, at most 4
 * batches in flight per probe, the rest spooled as a real probe would. From 10 s on, `failing`
 * monitors are down in every region, so incidents open. Figures: results stored per second, the
 * leader's CPU, and the delay from a check (its checked_at) to the leader's decision on it (the
 * consensus and incident decision is made in the transaction that stores the result, and the
 * acknowledgement leaves after that commit), p50/p99. Reference, same run and driver: a bare
 * Bun.serve that parses each batch and acknowledges every result.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { issuePeerToken } from "../../src/auth/peer-tokens.ts";
import { openStore } from "../../src/store/database.ts";
import { fmt, percentile } from "./lib/load.ts";
import { cpuSeconds, machine, spawnUntil, startVigil } from "./lib/proc.ts";
import { seedAccount, seedMonitors } from "./lib/seed.ts";

interface Options {
  monitors: number;
  rate: number;
  duration: number;
  failing: number;
  batchMs: number;
  keep: boolean;
}

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: 20_000, rate: 5000, duration: 40, failing: 200, batchMs: 100, keep: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--monitors") o.monitors = v();
    else if (a === "--rate") o.rate = v();
    else if (a === "--duration") o.duration = Math.min(v(), 300);
    else if (a === "--failing") o.failing = v();
    else if (a === "--batch-ms") o.batchMs = v();
    else if (a === "--keep") o.keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const REGIONS = ["eu", "us", "ap"];

interface DriveResult {
  stored: number;
  other: Record<string, number>;
  delays: number[];
  httpErrors: number;
  maxSpool: number;
  seconds: number;
}

/** Three probes posting due results every batchMs for `seconds`; delays are ack time minus checked_at. */
async function drive(url: string, tokens: string[], firstId: number, o: Options, failingFromMs: number): Promise<DriveResult> {
  const perProbe = o.rate / REGIONS.length;
  const out: DriveResult = { stored: 0, other: {}, delays: [], httpErrors: 0, maxSpool: 0, seconds: o.duration };
  const start = Date.now();
  const end = start + o.duration * 1000;
  let uid = 0;
  await Promise.all(
    tokens.map(async (token, p) => {
      const spool: { result_uid: string; monitor_id: number; checked_at: number; [k: string]: unknown }[] = [];
      let inFlight = 0;
      let next = (p * 7919) % o.monitors;
      let owed = 0;
      const sends: Promise<void>[] = [];
      const send = async (batch: typeof spool) => {
        inFlight++;
        try {
          const res = await fetch(`${url}/peer/v1/results`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ sent_at: Date.now(), queue_length: spool.length, results: batch }),
          });
          const now = Date.now();
          if (res.status !== 200) {
            out.httpErrors++;
            const text = await res.text();
            if (out.httpErrors <= 3) console.log(`leader answered ${res.status}: ${text.slice(0, 300)}`);
            spool.unshift(...batch); // resent on a later tick
            return;
          }
          const body = (await res.json()) as { data: { results: { outcome: string; reason?: string }[] } };
          body.data.results.forEach((a, i) => {
            if (a.outcome === "rejected" && !out.other.rejected) console.log(`leader rejected a result: ${a.reason}`);
            if (a.outcome === "retry") spool.push(batch[i]!);
            else if (a.outcome === "stored") {
              out.stored++;
              out.delays.push(now - batch[i]!.checked_at);
            } else out.other[a.outcome] = (out.other[a.outcome] ?? 0) + 1;
          });
        } catch (err) {
          out.httpErrors++;
          if (out.httpErrors <= 3) console.log(`sending a batch failed: ${String(err)}`);
          spool.unshift(...batch);
        } finally {
          inFlight--;
        }
      };
      for (let tick = start; tick < end; tick += o.batchMs) {
        await Bun.sleep(Math.max(0, tick - Date.now()));
        owed += (perProbe * o.batchMs) / 1000;
        const now = Date.now();
        for (; owed >= 1; owed--) {
          const k = next;
          next = (next + 1) % o.monitors;
          const down = k < o.failing && now - start >= failingFromMs;
          spool.push({
            result_uid: `bench-${p}-${uid++}`, monitor_id: firstId + k, status: down ? "down" : "up", checked_at: now,
            latency_ms: down ? null : 20 + (k % 100), http_code: down ? null : 200, error_code: down ? "connection_refused" : null,
            error_message: down ? "connect ECONNREFUSED 127.0.0.1:9" : null, degraded_reason: null, resolved_ip: "127.0.0.1", ssl_not_after: null, dns_answer: null, synthetic_trace_json: null,
          });
        }
        out.maxSpool = Math.max(out.maxSpool, spool.length);
        while (spool.length > 0 && inFlight < 4) sends.push(send(spool.splice(0, 500)));
      }
      await Promise.all(sends);
    }),
  );
  return out;
}

const BARE = `
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, async fetch(req) {
  const b = await req.json();
  return Response.json({ data: { results: b.results.map((r) => ({ result_uid: r.result_uid, outcome: "stored" })), server_time: Date.now() } });
}});
console.log("bare " + server.url.href.replace(/\\/$/, ""));
`;

function report(name: string, r: DriveResult, cpuPct: number): void {
  console.log(
    `${name.padEnd(26)} ${fmt(r.stored / r.seconds).padStart(8)}/s  delay p50 ${fmt(percentile(r.delays, 50)).padStart(5)} ms  p99 ${fmt(percentile(r.delays, 99)).padStart(6)} ms  max spool ${fmt(r.maxSpool).padStart(6)}  server CPU ${fmt(cpuPct)}%  http errors ${r.httpErrors}${Object.keys(r.other).length ? `  other ${JSON.stringify(r.other)}` : ""}`,
  );
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const interval = Math.max(10, Math.round((REGIONS.length * o.monitors) / o.rate));
  console.log(`ingest bench: ${fmt(o.monitors)} monitors every ${interval} s from ${REGIONS.length} probes = ${fmt(o.rate)} results/s, batches every ${o.batchMs} ms, ${o.duration} s, ${o.failing} monitors down from 10 s`);
  console.log(`machine: ${machine()}`);
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-ingest-"));
  const store = openStore(dir);
  const account = seedAccount(store);
  const firstId = seedMonitors(store, account, o.monitors, (i) => ({ type: "http", target: `http://127.0.0.1:9/svc/${i}`, intervalSec: interval, nextRunAt: Date.now() + 60_000 }));
  store.sqlite.exec(`UPDATE monitors SET regions = '${JSON.stringify(REGIONS)}'`);
  const tokens: string[] = [];
  for (const region of REGIONS) tokens.push((await issuePeerToken(store.db, { region, label: `bench ${region}`, accounts: [account], now: Date.now() })).token);
  await store.close();

  let ok = true;
  const vigil = await startVigil(dir, ["--log-level", "info"]);
  try {
    const c0 = cpuSeconds(vigil.pid);
    const t0 = Date.now();
    const r = await drive(vigil.url, tokens, firstId, o, 10_000);
    const cpu = ((cpuSeconds(vigil.pid) - c0) / ((Date.now() - t0) / 1000)) * 100;
    const bare = await spawnUntil([process.execPath, "-e", BARE], (l) => l.startsWith("bare "));
    let b: DriveResult;
    let bareCpu: number;
    try {
      const b0 = cpuSeconds(bare.proc.pid);
      const bt = Date.now();
      b = await drive(bare.line.slice(5).trim(), tokens, firstId, { ...o, duration: Math.min(o.duration, 15) }, 10_000);
      bareCpu = ((cpuSeconds(bare.proc.pid) - b0) / ((Date.now() - bt) / 1000)) * 100;
    } finally {
      bare.proc.kill("SIGTERM");
      await bare.proc.exited;
    }
    console.log("");
    report("leader /peer/v1/results", r, cpu);
    report("reference: bare Bun.serve", b, bareCpu);
    const db = new Database(join(dir, "vigil.db"), { readonly: true });
    const incidents = (db.query("SELECT count(*) AS n FROM incidents").get() as { n: number }).n;
    const downNow = (db.query("SELECT count(*) AS n FROM monitors WHERE last_status = 'down'").get() as { n: number }).n;
    db.close();
    console.log(`incidents opened: ${fmt(incidents)} for ${fmt(o.failing)} monitors down in every region (monitors down now: ${fmt(downNow)})`);
    const p99 = percentile(r.delays, 99);
    console.log(`check -> decision p99 ${fmt(p99)} ms (target < 1,000 ms); results/s stored ${fmt(r.stored / r.seconds)} of ${fmt(o.rate)} offered`);
    ok = p99 < 1000 && r.stored / r.seconds >= o.rate * 0.95 && incidents === o.failing && r.httpErrors === 0;
  } finally {
    await vigil.stop();
    if (!o.keep) rmSync(dir, { recursive: true, force: true });
  }
  return ok ? 0 : 1;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
