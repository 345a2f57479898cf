/**
 * Heartbeat ping throughput:
 *   npm run bench -- heartbeat [--monitors N] [--duration S] [--connections C] [--keep] [--profile DIR]
 *
 * Starts the real server (`vigil serve`, a child process) on a temp data dir holding N heartbeat
 * monitors, drives it with autocannon over many distinct tokens, then drives a bare Bun.serve child
 * with the same generator, and prints accepted pings/s, p50/p99 latency, the bare server's figures
 * and the ratio. Finally it checks that every acknowledged (2xx) ping is in monitor_events.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error autocannon ships no type declarations
import autocannon from "autocannon";
import { randomToken } from "../../src/lib/tokens.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { openStore } from "../../src/store/database.ts";

const ROOT = join(import.meta.dir, "..", "..");

interface Options {
  monitors: number;
  duration: number;
  connections: number;
  keep: boolean;
  /** write the server's CPU profile (markdown) into this directory */
  profile: string | null;
}

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: 10_000, duration: 10, connections: 64, keep: false, profile: null };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--monitors") o.monitors = v();
    else if (a === "--duration") o.duration = v();
    else if (a === "--connections") o.connections = v();
    else if (a === "--keep") o.keep = true;
    else if (a === "--profile") o.profile = args[++i]!;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

interface Run {
  accepted: number;
  total: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  /** 2xx responses per token */
  ackedByToken: Map<string, number>;
}

/**
 * One autocannon run over `tokens`, every request a ping of the next token; `amount` instead of a
 * duration sends that many requests (the warm-up pings every token once).
 */
async function drive(url: string, tokens: string[], o: Options, amount?: number): Promise<Run> {
  const ackedByToken = new Map<string, number>();
  let next = 0;
  const result = await autocannon({
    url,
    connections: o.connections,
    ...(amount ? { amount } : { duration: o.duration }),
    requests: [
      {
        method: "GET",
        setupRequest: (req: { path: string }, context: { token?: string }) => {
          const token = tokens[next++ % tokens.length]!;
          context.token = token;
          req.path = `/h/${token}`;
          return req;
        },
        onResponse: (status: number, _body: string, context: { token?: string }) => {
          if (status >= 200 && status < 300 && context.token) ackedByToken.set(context.token, (ackedByToken.get(context.token) ?? 0) + 1);
        },
      },
    ],
  });
  const accepted = result["2xx"] as number;
  return {
    accepted,
    total: result.requests.total,
    perSecond: accepted / o.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    ackedByToken,
  };
}

/** Spawns a child and waits for a stdout line matching `ready`; returns the child and that line. */
async function spawnUntil(cmd: string[], ready: (line: string) => boolean): Promise<{ proc: ReturnType<typeof Bun.spawn>; line: string }> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value);
    const line = buffered.split("\n").find(ready);
    if (line) {
      void (async () => {
        for (;;) if ((await reader.read()).done) return;
      })().catch(() => {});
      return { proc, line };
    }
  }
  proc.kill(9);
  throw new Error(`${cmd.join(" ")} did not start:\n${buffered}`);
}

const BARE_SERVER = `
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch(req) {
  return new Response('{"result":"accepted"}', { headers: { "content-type": "application/json; charset=utf-8" } });
}});
console.log("bare " + server.url.href.replace(/\\/$/, ""));
`;

async function seed(dir: string, n: number): Promise<string[]> {
  const store = openStore(dir);
  const account = await createAccount(store.db, "default", "enterprise", Date.now());
  const tokens = Array.from({ length: n }, () => randomToken(24));
  const now = Date.now();
  await store.db.transaction().execute(async (trx) => {
    for (let i = 0; i < n; i += 500) {
      await trx
        .insertInto("monitors")
        .values(
          tokens.slice(i, i + 500).map((token, j) => ({
            account_id: account.id, name: `job ${i + j}`, monitor_type: "heartbeat", target: null, interval_sec: 3600, timeout_ms: 1000,
            group_id: null, created_at: now, updated_at: now, heartbeat_token: token, heartbeat_period_sec: 3600, heartbeat_grace_sec: 600,
          })) as never,
        )
        .execute();
    }
  });
  await store.close();
  return tokens;
}

const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  console.log(`heartbeat bench: ${fmt(o.monitors)} monitors, ${o.connections} connections, ${o.duration} s per run, data ${dir}`);
  const tokens = await seed(dir, o.monitors);

  const vigil = await spawnUntil(
    [process.execPath, ...(o.profile ? ["--cpu-prof-md", `--cpu-prof-dir=${o.profile}`] : []), "src/main.ts", "serve", "--data", dir, "--host", "127.0.0.1", "--port", "0", "--log-level", "info",
      "--ping-limit-token", "1000000", "--ping-limit-ip", "1000000"],
    (l) => l.includes('"msg":"listening"'),
  );
  const vigilUrl = JSON.parse(vigil.line).url as string;
  let vigilRun: Run;
  try {
    // warm-up: every monitor gets its first ping (unknown → up, a transition each), so the
    // measured run is the steady state of monitors that are up
    await drive(vigilUrl, tokens, o, tokens.length);
    vigilRun = await drive(vigilUrl, tokens, o);
  } finally {
    vigil.proc.kill("SIGTERM");
    await vigil.proc.exited;
  }

  const bare = await spawnUntil([process.execPath, "-e", BARE_SERVER], (l) => l.startsWith("bare "));
  let bareRun: Run;
  try {
    await drive(bare.line.slice(5).trim(), tokens, o, tokens.length);
    bareRun = await drive(bare.line.slice(5).trim(), tokens, o);
  } finally {
    bare.proc.kill("SIGTERM");
    await bare.proc.exited;
  }

  // Every 2xx must be a ping in the timeline: per token, recorded accepted pings >= acknowledged
  // (warm-up pings are recorded too, so recorded may exceed).
  const store = openStore(dir);
  const rows = await store.db
    .selectFrom("monitor_events")
    .innerJoin("monitors", "monitors.id", "monitor_events.monitor_id")
    .select(["monitors.heartbeat_token as token", (eb) => eb.fn.countAll<number>().as("n")])
    .where("monitor_events.kind", "=", "ping")
    .where("monitor_events.result", "=", "accepted")
    .groupBy("monitors.heartbeat_token")
    .execute();
  await store.close();
  const recorded = new Map(rows.map((r) => [r.token as string, Number(r.n)]));
  let missing = 0;
  for (const [token, n] of vigilRun.ackedByToken) missing += Math.max(0, n - (recorded.get(token) ?? 0));
  const totalRecorded = rows.reduce((s, r) => s + Number(r.n), 0);

  console.log("");
  console.log(`                      pings/s      p50 ms   p99 ms   non-2xx/errors`);
  console.log(`vigil /h/<token>   ${fmt(vigilRun.perSecond).padStart(10)}  ${fmt(vigilRun.p50, 2).padStart(8)} ${fmt(vigilRun.p99, 2).padStart(8)}   ${vigilRun.errors}`);
  console.log(`bare Bun.serve     ${fmt(bareRun.perSecond).padStart(10)}  ${fmt(bareRun.p50, 2).padStart(8)} ${fmt(bareRun.p99, 2).padStart(8)}   ${bareRun.errors}`);
  console.log(`ratio vigil/bare   ${fmt((vigilRun.perSecond / bareRun.perSecond) * 100, 1)}% of the bare server's throughput`);
  console.log("");
  console.log(`durability: ${fmt(vigilRun.accepted)} acknowledged in the measured run, ${fmt(totalRecorded)} accepted pings recorded (with warm-up), ${missing} acknowledged but missing`);
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
  return missing === 0 ? 0 : 1;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
