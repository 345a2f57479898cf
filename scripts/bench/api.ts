/**
 * API reads and writes on a big store:
 *   npm run bench -- api [--monitors N] [--checks-per-monitor N] [--duration S] [--connections C]
 *                        [--writers C] [--fresh] [--generator wrk|autocannon] [--profile DIR]
 *                        [--engine sqlite|postgres]
 *
 * A fixture of 100,000 monitors (paused, so nothing is checked; statuses and types mixed; in 20
 * groups; two tags each, `env:<0-2>` and `team/<0-6>`) and 100 checks each (10 million checks), written with bun:sqlite in 1000-row transactions and then rolled
 * up and packed by the real maintenance job (as a running server keeps them: older than the last
 * hour in blocks), is built once and cached under the temp dir (copied for each run, as the run
 * writes). `vigil serve` runs on a copy;
 * after its start-up work settles, each read is driven by the load generator for `duration`:
 * GET /api/v1/monitors?per_page=100 (plain, status filter, type filter, q search, a deep page) and
 * GET /api/v1/monitors/:id/checks over many monitors, with p50/p99. Reference, same generator:
 * a bare Bun.serve answering a canned 100-monitor body. Then writes under concurrent load:
 * POST, PATCH and DELETE cycles from `writers` concurrent clients, writes/s, beside the same client
 * against a bare Bun.serve that parses the body and answers. Loopback only; bounded in time.
 * With `--engine postgres` the copy is moved into a PostgreSQL this bench starts by `vigil migrate`
 * (lib/bench-engine.ts; fsync and synchronous_commit on) and the server runs on that database.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { issueApiToken } from "../../src/auth/api-tokens.ts";
import { SCOPES } from "../../src/domain/scopes.ts";
import { runMaintenance } from "../../src/engine/retention.ts";
import { openStore } from "../../src/store/database.ts";
import { fmt, percentile, pickGenerator, runLoad, type Generator, type LoadResult } from "./lib/load.ts";
import { machine, spawnUntil, startVigil, waitIdle } from "./lib/proc.ts";
import { seedAccount } from "./lib/seed.ts";
import { parseEngine, startBenchEngine, type EngineName } from "./lib/bench-engine.ts";

interface Options {
  monitors: number;
  checksPerMonitor: number;
  duration: number;
  connections: number;
  writers: number;
  writeSeconds: number;
  fresh: boolean;
  generator: string | null;
  profile: string | null;
  /** run only the read cases whose name contains this, and no writes ("writes": the writes alone) */
  only: string | null;
  engine: EngineName;
}

function parseArgs(args: string[]): Options {
  const o: Options = { monitors: 100_000, checksPerMonitor: 100, duration: 8, connections: 1, writers: 32, writeSeconds: 10, fresh: false, generator: null, profile: null, only: null, engine: "sqlite" };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = () => Number(args[++i]);
    if (a === "--monitors") o.monitors = v();
    else if (a === "--checks-per-monitor") o.checksPerMonitor = v();
    else if (a === "--duration") o.duration = Math.min(v(), 60);
    else if (a === "--connections") o.connections = v();
    else if (a === "--writers") o.writers = v();
    else if (a === "--write-seconds") o.writeSeconds = Math.min(v(), 60);
    else if (a === "--fresh") o.fresh = true;
    else if (a === "--generator") o.generator = args[++i]!;
    else if (a === "--profile") o.profile = args[++i]!;
    else if (a === "--only") o.only = args[++i]!;
    else if (a === "--engine") o.engine = parseEngine(args[++i]);
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const STATUSES = ["up", "up", "up", "up", "up", "up", "up", "up", "down", "degraded"] as const;
const TYPES = ["http", "http", "http", "tcp", "dns"] as const;
const WORDS = ["billing", "checkout", "search", "auth", "cdn", "mail", "payments", "reports", "gateway", "static"];

/** Builds (or reuses) the fixture; returns its directory and an all-scopes API token for it. */
async function fixture(o: Options): Promise<{ dir: string; token: string; built: boolean; seconds: number }> {
  const dir = join(tmpdir(), `vigil-bench-api-fixture-${o.monitors}x${o.checksPerMonitor}-v3`);
  const tokenFile = join(dir, "bench-token");
  if (!o.fresh && existsSync(tokenFile)) return { dir, token: readFileSync(tokenFile, "utf8").trim(), built: false, seconds: 0 };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const store = openStore(dir);
  const account = seedAccount(store);
  const now = Date.now();
  const groups = Array.from({ length: GROUPS }, (_, g) => Number((store.sqlite.query("INSERT INTO monitor_groups (account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING id").get(account, `group ${g}`, now, now) as { id: number }).id));
  const monitor = store.sqlite.prepare(
    `INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at, is_paused, last_status, last_checked_at, state_changed_at, group_id)
     VALUES (?, ?, ?, ?, 60, 5000, ?, ?, 1, ?, ?, ?, ?) RETURNING id`,
  );
  const tag = store.sqlite.prepare("INSERT INTO monitor_tags (monitor_id, account_id, tag) VALUES (?, ?, ?)");
  for (let i = 0; i < o.monitors; i += 1000) {
    store.sqlite.transaction(() => {
      for (let j = i; j < Math.min(o.monitors, i + 1000); j++) {
        const type = TYPES[j % TYPES.length]!;
        const word = WORDS[j % WORDS.length]!;
        // loopback targets: nothing here is ever meant to be reached (the monitors are paused)
        const target = type === "http" ? `http://127.0.0.1:9/${word}/${j}` : type === "tcp" ? `127.0.0.1:${10_000 + (j % 50_000)}` : `${word}-${j}.localhost`;
        const { id } = monitor.get(account, `${word} service ${j}`, type, target, now, now, STATUSES[j % STATUSES.length]!, now, now, groups[j % GROUPS]!) as { id: number };
        tag.run(id, account, `env:${j % 3}`);
        tag.run(id, account, `team/${j % 7}`);
      }
    })();
  }
  // checks: one a minute per monitor, the newest a minute ago, monitor by monitor (index order)
  const check = store.sqlite.prepare("INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms, http_code) VALUES (?, 'local', ?, ?, ?, ?)");
  const first = (store.sqlite.query("SELECT min(id) AS id FROM monitors").get() as { id: number }).id;
  const total = o.monitors * o.checksPerMonitor;
  let m = 0;
  let k = 0;
  for (let done = 0; done < total; done += 1000) {
    store.sqlite.transaction(() => {
      for (let n = 0; n < 1000 && done + n < total; n++) {
        const down = (m * 7 + k) % 50 === 0;
        check.run(first + m, down ? "down" : "up", now - (o.checksPerMonitor - k) * 60_000, down ? null : 20 + ((m + k) % 200), down ? null : 200);
        if (++k === o.checksPerMonitor) {
          k = 0;
          m++;
        }
      }
    })();
  }
  const { token } = await issueApiToken(store.db, { accountId: account, scopes: SCOPES, label: "bench", now });
  await store.close();
  // roll the fixture's history up and pack what is older than the last hour into blocks once, as a
  // running server would have (v2: v1 fixtures held 10M rows, unpacked)
  const ctxStore = openStore(dir);
  const { buildContext } = await import("../../src/context.ts");
  const { loadConfig } = await import("../../src/config/load.ts");
  const { createLogger } = await import("../../src/lib/logger.ts");
  const { systemClock } = await import("../../src/lib/clock.ts");
  const ctx = buildContext({ config: loadConfig(["--data", dir], {}), store: ctxStore, log: createLogger("warn"), clock: systemClock, secrets: null as never });
  const packed = await runMaintenance(ctx, { maxPackedPerRun: Number.MAX_SAFE_INTEGER });
  console.log(`fixture: ${packed.checksPacked.toLocaleString("en-US")} checks packed into blocks, the rest stay rows`);
  ctxStore.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  await ctxStore.close();
  writeFileSync(tokenFile, token);
  return { dir, token, built: true, seconds: (performance.now() - started) / 1000 };
}

interface ReadCase {
  name: string;
  paths: string[];
}

/** Groups of the fixture: every monitor is in one. */
const GROUPS = 20;

function readCases(firstId: number, n: number, firstGroupId: number): ReadCase[] {
  const ids = Array.from({ length: 1000 }, (_, i) => firstId + Math.floor((i * 7919) % n));
  return [
    { name: "GET /monitors?per_page=100", paths: Array.from({ length: 100 }, (_, i) => `/api/v1/monitors?per_page=100&page=${1 + i}`) },
    { name: "  &status=down", paths: Array.from({ length: 50 }, (_, i) => `/api/v1/monitors?per_page=100&status=down&page=${1 + i}`) },
    { name: "  &type=tcp", paths: Array.from({ length: 50 }, (_, i) => `/api/v1/monitors?per_page=100&type=tcp&page=${1 + i}`) },
    { name: "  &q=<word>", paths: WORDS.map((w) => `/api/v1/monitors?per_page=100&q=${w}`) },
    { name: "  &q=<rare: a few matches>", paths: Array.from({ length: 100 }, (_, i) => `/api/v1/monitors?per_page=100&q=service%20${(i * 997) % n}`) },
    { name: "  &tag=env:<e>&tag=team/<t> (1 in 21)", paths: Array.from({ length: 21 }, (_, i) => `/api/v1/monitors?per_page=100&tag=env:${i % 3}&tag=team/${i % 7}`) },
    { name: "  &group_id=<g>", paths: Array.from({ length: GROUPS }, (_, g) => `/api/v1/monitors?per_page=100&group_id=${firstGroupId + g}`) },
    { name: "  page 1000 (offset 99,900)", paths: [`/api/v1/monitors?per_page=100&page=${Math.max(1, Math.floor(n / 100))}`] },
    { name: "GET /monitors/:id/checks", paths: ids.map((id) => `/api/v1/monitors/${id}/checks?per_page=100`) },
  ];
}

const BARE = `
const body = process.env.BARE_BODY;
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, async fetch(req) {
  if (req.method === "DELETE") return new Response(null, { status: 204 });
  if (req.method !== "GET") { const b = await req.json(); return Response.json({ data: { id: "1", type: "monitor", attributes: b } }, { status: req.method === "POST" ? 201 : 200 }); }
  return new Response(body, { headers: { "content-type": "application/json; charset=utf-8" } });
}});
console.log("bare " + server.url.href.replace(/\\/$/, ""));
`;

interface WriteRun {
  writes: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  statuses: Record<string, number>;
}

/** `writers` concurrent clients, each looping POST → PATCH → DELETE for `seconds`. */
async function writeLoad(url: string, token: string, writers: number, seconds: number): Promise<WriteRun> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let writes = 0;
  let errors = 0;
  const end = Date.now() + seconds * 1000;
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    const t = performance.now();
    const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    latencies.push(performance.now() - t);
    statuses[`${method} ${res.status}`] = (statuses[`${method} ${res.status}`] ?? 0) + 1;
    if (res.status >= 300) {
      errors++;
      return null;
    }
    writes++;
    return text ? JSON.parse(text) : null;
  };
  let n = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (Date.now() < end) {
        const i = n++;
        const created = await call("POST", "/api/v1/monitors", { name: `bench write ${w}-${i}`, monitor_type: "tcp", target: `127.0.0.1:${20_000 + (i % 20_000)}`, interval_sec: 60, timeout_ms: 1000, is_paused: true });
        const id = created?.data?.id ?? "1";
        await call("PATCH", `/api/v1/monitors/${id}`, { name: `bench write ${w}-${i} renamed`, interval_sec: 120 });
        await call("DELETE", `/api/v1/monitors/${id}`);
      }
    }),
  );
  return { writes, perSecond: writes / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors, statuses };
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const gen: Generator = pickGenerator(o.generator);
  console.log(`api bench: ${fmt(o.monitors)} monitors, ${fmt(o.monitors * o.checksPerMonitor)} checks, ${o.duration} s per read case at ${o.connections} connections, ${o.writers} writers for ${o.writeSeconds} s, generator ${gen}`);
  console.log(`machine: ${machine()}`);
  const fx = await fixture(o);
  console.log(fx.built ? `fixture built in ${fmt(fx.seconds, 1)} s: ${fx.dir}` : `fixture reused: ${fx.dir} (--fresh rebuilds it)`);
  const dir = mkdtempSync(join(tmpdir(), "vigil-bench-api-"));
  cpSync(fx.dir, dir, { recursive: true });
  const engine = await startBenchEngine(o.engine);
  console.log(`store: ${engine.describe}`);
  const adopted = await engine.adopt(dir);
  if (o.engine !== "sqlite") console.log(`fixture copied in by vigil migrate in ${fmt(adopted.seconds, 1)} s`);
  const auth = { authorization: `Bearer ${fx.token}` };
  // info, the default: every API request is a log line, as in production
  const flags = ["--log-level", "info", "--rate-limit", "pro=100000000,enterprise=100000000", ...adopted.flags];
  let vigil = await startVigil(dir, flags);
  if (o.profile) {
    // the profile should show the requests, not the first start's migration and maintenance
    await waitIdle(vigil.pid);
    await vigil.stop();
    vigil = await startVigil(dir, flags, { profileDir: o.profile });
  }
  let ok = true;
  try {
    const settled = await waitIdle(vigil.pid);
    console.log(`server settled ${fmt(settled / 1000, 1)} s after start (start-up maintenance)`);
    const first = (await (await fetch(`${vigil.url}/api/v1/monitors?per_page=1`, { headers: auth })).json()) as { data: { id: string }[] };
    const firstId = Number(first.data[0]!.id);
    const groups = (await (await fetch(`${vigil.url}/api/v1/groups?per_page=1`, { headers: auth })).json()) as { data: { id: string }[] };
    const firstGroupId = Math.min(...groups.data.map((g) => Number(g.id)));
    const sample = await (await fetch(`${vigil.url}/api/v1/monitors?per_page=100`, { headers: auth })).text();

    const bare = await spawnUntil([process.execPath, "-e", BARE], (l) => l.startsWith("bare "), { env: { BARE_BODY: sample } });
    const bareUrl = bare.line.slice(5).trim();
    try {
      console.log("");
      console.log(`${"".padEnd(30)} ${"req/s".padStart(8)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}  errors`);
      const row = (name: string, r: LoadResult) =>
        console.log(`${name.padEnd(30)} ${fmt(r.perSecond).padStart(8)} ${fmt(r.p50, 2).padStart(8)} ${fmt(r.p99, 2).padStart(8)}  ${r.errors}`);
      const bareRun = await runLoad(gen, { url: bareUrl, paths: ["/api/v1/monitors?per_page=100"], connections: o.connections, durationSec: o.duration, headers: auth });
      row("reference: bare, same body", bareRun);
      let worstP99 = 0;
      for (const c of readCases(firstId, o.monitors, firstGroupId).filter((c) => !o.only || (o.only !== "writes" && c.name.includes(o.only)))) {
        const r = await runLoad(gen, { url: vigil.url, paths: c.paths, connections: o.connections, durationSec: o.duration, headers: auth });
        row(c.name, r);
        worstP99 = Math.max(worstP99, r.p99);
        if (r.errors) ok = false;
      }
      console.log(`worst read p99 ${fmt(worstP99, 2)} ms (target < 20 ms)`);
      if (worstP99 >= 20) ok = false;

      if (o.only && o.only !== "writes") return ok ? 0 : 1;
      console.log("");
      const w = await writeLoad(vigil.url, fx.token, o.writers, o.writeSeconds);
      const wb = await writeLoad(bareUrl, fx.token, o.writers, o.writeSeconds);
      console.log(`writes (POST+PATCH+DELETE, ${o.writers} concurrent clients): ${fmt(w.perSecond)}/s, p50 ${fmt(w.p50, 2)} ms, p99 ${fmt(w.p99, 2)} ms, errors ${w.errors} (target > 2,000/s)`);
      console.log(`reference: same client against a bare Bun.serve parsing the body: ${fmt(wb.perSecond)}/s, p50 ${fmt(wb.p50, 2)} ms, p99 ${fmt(wb.p99, 2)} ms; ratio ${fmt((w.perSecond / wb.perSecond) * 100, 1)}%`);
      if (w.errors) console.log(`write answers: ${JSON.stringify(w.statuses)}`);
      if (w.perSecond <= 2000 || w.errors) ok = false;
    } finally {
      bare.proc.kill("SIGTERM");
      await bare.proc.exited;
    }
  } finally {
    await vigil.stop();
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return ok ? 0 : 1;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
