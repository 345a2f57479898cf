/**
 * What the pg-clients bench checks besides speed, for each candidate: how `int8` comes back by
 * default and as configured, whether queries run as named prepared statements, Kysely transactions
 * (commit, rollback, isolation level), the errors seen when the server goes away (a query in
 * flight, a query while it is down), whether the pool recovers by itself once the server is back,
 * and whether it works inside a `bun build --compile` executable. Each step has a deadline.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql, type Kysely } from "kysely";
import type { PostgresServer } from "../../../test/helpers/postgres.ts";
import type { BenchDb, Candidate } from "./pg-candidates.ts";
import { ROOT } from "./proc.ts";

type Db = Kysely<BenchDb>;

function describe(e: unknown): string {
  const x = e as { name?: string; code?: string; errno?: string | number; message?: string };
  const code = [x.code && `code ${x.code}`, x.errno !== undefined && x.errno !== x.code && `errno ${x.errno}`].filter(Boolean).join(", ");
  return `${x.name ?? "Error"}${code ? ` (${code})` : ""}: ${(x.message ?? String(e)).split("\n")[0]!.slice(0, 90)}`;
}

function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: Timer;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

async function typesAndStatements(url: string, c: Candidate): Promise<string[]> {
  const out: string[] = [];
  const raw = c.open(url, 2, { raw: true });
  const set = c.open(url, 2);
  try {
    const q = (db: Db) => sql<{ v: unknown; n: unknown }>`SELECT ${1_764_000_000_000}::int8 AS v, count(*) AS n FROM generate_series(1, 3)`.execute(db);
    const a = (await q(raw)).rows[0]!;
    const b = (await q(set)).rows[0]!;
    out.push(`int8 by default: ${typeof a.v} (${String(a.v)}), count(*) ${typeof a.n}; as configured: ${typeof b.v}, count(*) ${typeof b.n}`);

    const prepared = await set.transaction().execute(async (trx) => {
      for (let i = 0; i < 3; i++) await sql`SELECT ${i}::int AS prepared_probe`.execute(trx);
      return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%prepared_probe%'`.execute(trx)).rows[0]!.n;
    });
    out.push(prepared > 0 ? "statements: named, prepared once per connection and reused" : "statements: unnamed (parsed on every run)");

    const table = sql.table(`tx_${c.name.replace(/\W/g, "_").toLowerCase()}`);
    await sql`CREATE TABLE ${table} (id int PRIMARY KEY)`.execute(set);
    await set.transaction().execute((trx) => sql`INSERT INTO ${table} VALUES (1)`.execute(trx));
    await set
      .transaction()
      .execute(async (trx) => {
        await sql`INSERT INTO ${table} VALUES (2)`.execute(trx);
        throw new Error("roll back");
      })
      .catch(() => {});
    const iso = await set
      .transaction()
      .setIsolationLevel("serializable")
      .execute(async (trx) => (await sql<{ l: string }>`SELECT current_setting('transaction_isolation') AS l`.execute(trx)).rows[0]!.l);
    const ids = (await sql<{ id: number }>`SELECT id FROM ${table} ORDER BY id`.execute(set)).rows.map((r) => r.id);
    out.push(`transactions: committed ${ids.includes(1) ? "kept" : "LOST"}, thrown ${ids.includes(2) ? "NOT rolled back" : "rolled back"}, isolation level ${iso}`);
  } catch (e) {
    out.push(`FAILED: ${describe(e)}`);
  } finally {
    await raw.destroy();
    await set.destroy();
  }
  return out;
}

/** Where an uncaught error came from: its first frame inside node_modules. */
function origin(e: unknown): string {
  const frame = String((e as Error)?.stack ?? "").split("\n").find((l) => l.includes("node_modules/"));
  return frame ? ` at ${frame.slice(frame.indexOf("node_modules/") + 13).replace(/\)$/, "")}` : "";
}

/**
 * Stops the server under one candidate's pool (four connections open, one query in flight),
 * queries while it is down, starts it again and queries until an answer comes (15 s at most),
 * always on the same pool. Uncaught errors and unhandled rejections meanwhile are the client's.
 */
async function connectionLoss(server: PostgresServer, url: string, c: Candidate): Promise<string[]> {
  const notes: string[] = [];
  const uncaught: string[] = [];
  const onUncaught = (e: unknown) => uncaught.push(`uncaught exception ${describe(e)}${origin(e)}`);
  const onRejection = (e: unknown) => uncaught.push(`unhandled rejection ${describe(e)}${origin(e)}`);
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onRejection);
  const errorsBefore = c.poolErrors.length;
  const db = c.open(url, 4);
  try {
    await Promise.all(Array.from({ length: 4 }, () => within(10_000, sql`SELECT pg_sleep(0.05)`.execute(db))));
    const inFlight = within(20_000, sql`SELECT pg_sleep(30)`.execute(db)).then(() => "finished?!", describe);
    await Bun.sleep(300);
    await server.stopServer();
    notes.push(`query in flight at fast shutdown: ${await inFlight}`);
    const downAt = performance.now();
    const first = await within(10_000, sql`SELECT 1`.execute(db)).then(() => "answered?!", describe);
    const again = await within(10_000, sql`SELECT 1`.execute(db)).then(() => "answered?!", describe);
    notes.push(`queries while down: ${first}; then ${again} (${(performance.now() - downAt).toFixed(0)} ms for both)`);
    await server.startServer();
    const upAt = performance.now();
    const results: string[] = [];
    let ok = false;
    while (!ok && performance.now() - upAt < 15_000) {
      const r = await within(5_000, sql`SELECT 1`.execute(db)).then(() => "ok", describe);
      results.push(r);
      ok = r === "ok";
      if (!ok) await Bun.sleep(100);
    }
    const failed = results.filter((r) => r !== "ok");
    notes.push(
      `after restart, same pool: ${ok ? `answered on query ${results.length} after ${(performance.now() - upAt).toFixed(0)} ms` : `NO answer in 15 s (${results.length} queries)`}` +
        (failed.length ? `; failures: ${[...new Set(failed)].join("; ")}` : ""),
    );
  } finally {
    const closed = await within(5_000, db.destroy()).then(() => true, () => false);
    if (!closed) notes.push("destroying the pool did not finish in 5 s");
    await Bun.sleep(200);
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onRejection);
    if (!server.pid()) await server.startServer();
  }
  const poolErrors = c.poolErrors.slice(errorsBefore);
  if (poolErrors.length) notes.push(`pool 'error' events: ${poolErrors.length} (${[...new Set(poolErrors)].join("; ")})`);
  for (const u of new Set(uncaught)) notes.push(`! ${u}`);
  return notes;
}

function compiled(url: string, list: Candidate[]): Map<string, string> {
  const out = new Map<string, string>();
  const dir = mkdtempSync(join(tmpdir(), "vigil-pg-compile-"));
  try {
    const exe = join(dir, "probe");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", join(ROOT, "scripts/bench/lib/pg-compile-probe.ts"), "--outfile", exe], { cwd: ROOT, stdout: "pipe", stderr: "pipe", timeout: 180_000 });
    if (build.exitCode !== 0) {
      for (const c of list) out.set(c.name, `bun build --compile FAILED: ${build.stderr.toString().slice(0, 300)}`);
      return out;
    }
    const size = (statSync(exe).size / 1024 / 1024).toFixed(0);
    for (const c of list) {
      const r = Bun.spawnSync([exe, c.name, url], { cwd: dir, stdout: "pipe", stderr: "pipe", timeout: 30_000 });
      const line = r.stdout.toString().trim().split("\n").pop() ?? "";
      out.set(c.name, r.exitCode === 0 && line.includes('"ok":true') ? `compiled executable (${size} MiB, all candidates in it) ran: ${line}` : `compiled executable FAILED (${r.exitCode}): ${r.stderr.toString().slice(0, 300)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

export async function runChecks(server: PostgresServer, list: Candidate[]): Promise<void> {
  const url = await server.createDatabase("checks");
  console.log(`\nBehaviour checks (Bun ${Bun.version}, PostgreSQL ${server.version})`);
  const found = new Map<string, string[]>();
  for (const c of list) {
    console.error(`  types, statements, transactions: ${c.name}`);
    found.set(c.name, await typesAndStatements(url, c));
  }
  console.error("  bun build --compile");
  const builds = compiled(url, list);
  const loss = new Map<string, string[]>();
  for (const c of list) {
    console.error(`  server stop and restart: ${c.name}`);
    loss.set(c.name, await connectionLoss(server, url, c));
  }
  for (const c of list) {
    console.log(`\n${c.name} (${c.dialect}):`);
    for (const line of [...found.get(c.name)!, builds.get(c.name)!, ...loss.get(c.name)!]) console.log(`  - ${line}`);
  }
}
