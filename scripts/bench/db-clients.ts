/**
 * Client libraries for the postgres, mysql and redis probes, one whole check at a time as a probe
 * does it (open a connection, log in with a password, SELECT 1 or PING, close), against throwaway
 * servers started here with the test helpers (PostgreSQL, MariaDB and Redis from Debian):
 *   npm run bench -- db-clients [--rounds N] [--checks N]
 *
 * Candidates: Bun's built-in clients (Bun.SQL's postgres and mariadb adapters, Bun.RedisClient),
 * `postgres` (postgres.js), `mysql2` and `ioredis`, and Vigil's probes as built (which add the name
 * resolution, the guard and the result). Each round runs --checks sequential checks per candidate,
 * the order rotated every round so a noisy moment of the shared box falls on each of them. Reported:
 * per-check p50 / p90 / mean ms over all rounds, and this process's CPU per check. Then, for each
 * candidate, what a wrong password, a closed port and TLS (with the test CA) give.
 *
 * postgres, mysql2 and ioredis are not dependencies of Vigil: install them without saving
 * (`npm install --no-save postgres mysql2 ioredis`), or into another directory named by
 * BENCH_MODULES (that directory's node_modules is searched when an import fails).
 */
import { RedisClient, SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mysqlProbe } from "../../src/probes/mysql.ts";
import { postgresProbe } from "../../src/probes/postgres.ts";
import { redisProbe } from "../../src/probes/redis.ts";
import { makeCerts } from "../../test/helpers/certs.ts";
import { startMariadb } from "../../test/helpers/mariadb-server.ts";
import { startPostgresServer } from "../../test/helpers/postgres-server.ts";
import { startRedis } from "../../test/helpers/redis-server.ts";
import { closedPort } from "../../test/helpers/targets.ts";
import { context, monitor } from "../../test/probes/fixtures.ts";
import { fmt, percentile } from "./lib/load.ts";
import { machine } from "./lib/proc.ts";

async function load(name: string): Promise<any | null> {
  try {
    return await import(name);
  } catch {}
  try {
    return await import(Bun.resolveSync(name, process.env.BENCH_MODULES ?? process.cwd()));
  } catch {
    return null;
  }
}

interface Candidate {
  name: string;
  /** one whole check; throws on failure */
  check(): Promise<void>;
  /** the same with `o` changed, for the behaviour table: what it says, or "ok" */
  attempt(o: { password?: string; port?: number; tls?: boolean }): Promise<string>;
}

function parseArgs(args: string[]): { rounds: number; checks: number } {
  const o = { rounds: 4, checks: 150 };
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--rounds") o.rounds = Math.min(Math.max(1, Number(args[++i])), 20);
    else if (args[i] === "--checks") o.checks = Math.min(Math.max(10, Number(args[++i])), 5000);
    else throw new Error(`unknown option ${args[i]}`);
  }
  return o;
}

const said = (e: any) => `${e?.code ?? e?.constructor?.name ?? "error"}${e?.errno !== undefined ? `/${e.errno}` : ""}: ${String(e?.message ?? e).slice(0, 90)}`;
async function outcome(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return "ok";
  } catch (e) {
    return said(e);
  }
}

export async function main(args: string[]): Promise<number> {
  const o = parseArgs(args);
  const certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-certs-")));
  const [pg, my, rd] = await Promise.all([
    startPostgresServer({ tls: { certPath: certs.certPath, keyPath: certs.keyPath } }),
    startMariadb({ tls: { certPath: certs.certPath, keyPath: certs.keyPath, caPath: certs.caPath } }),
    startRedis({ tls: { certPath: certs.certPath, keyPath: certs.keyPath, caPath: certs.caPath } }),
  ]);
  const refused = await closedPort();
  const [postgresJs, mysql2, ioredis] = await Promise.all([load("postgres"), load("mysql2/promise"), load("ioredis")]);
  const ca = certs.caPem;
  const tlsOpts = { ca, serverName: "localhost", rejectUnauthorized: true };

  const groups: Record<string, Candidate[]> = { postgres: [], mysql: [], redis: [] };

  const bunSql = (adapter: "postgres" | "mariadb", port: number, user: string, password: string, database: string, tls: boolean) =>
    new SQL({ adapter, hostname: "127.0.0.1", port, username: user, password: () => password, database, max: 1, idleTimeout: 0, tls: tls ? tlsOpts : false, ...(adapter === "postgres" ? { prepare: false } : {}) });
  for (const [group, adapter, server] of [["postgres", "postgres", pg], ["mysql", "mariadb", my]] as const) {
    const attempt = async (x: { password?: string; port?: number; tls?: boolean }) => {
      const sql = bunSql(adapter, x.port ?? server.port, server.user, x.password ?? server.password, server.database, x.tls ?? false);
      try {
        return await outcome(() => sql.unsafe("SELECT 1").simple());
      } finally {
        await sql.close({ timeout: 0 });
      }
    };
    groups[group]!.push({ name: "Bun.SQL", check: async () => void (await attempt({})), attempt });
  }
  if (postgresJs) {
    const postgres = postgresJs.default;
    const attempt = async (x: { password?: string; port?: number; tls?: boolean }) => {
      const sql = postgres({ host: "127.0.0.1", port: x.port ?? pg.port, username: pg.user, password: x.password ?? pg.password, database: pg.database, max: 1, prepare: false, onnotice: () => {}, ssl: x.tls ? { ca, servername: "localhost" } : false, connect_timeout: 5 });
      try {
        return await outcome(() => sql.unsafe("SELECT 1").simple());
      } finally {
        await sql.end({ timeout: 0 });
      }
    };
    groups.postgres!.push({ name: "postgres.js", check: async () => void (await attempt({})), attempt });
  }
  if (mysql2) {
    const attempt = async (x: { password?: string; port?: number; tls?: boolean }) => {
      let conn: any = null;
      try {
        return await outcome(async () => {
          conn = await mysql2.createConnection({ host: "127.0.0.1", port: x.port ?? my.port, user: my.user, password: x.password ?? my.password, database: my.database, ssl: x.tls ? { ca, servername: "localhost" } : undefined, connectTimeout: 5000 });
          await conn.query("SELECT 1");
        });
      } finally {
        conn?.destroy();
      }
    };
    groups.mysql!.push({ name: "mysql2", check: async () => void (await attempt({})), attempt });
  }
  {
    // Bun.RedisClient takes the password only in the URL
    const attempt = async (x: { password?: string; port?: number; tls?: boolean }) => {
      const port = x.port ?? (x.tls ? rd.tlsPort! : rd.port);
      const client = new RedisClient(`${x.tls ? "rediss" : "redis"}://:${encodeURIComponent(x.password ?? rd.password)}@127.0.0.1:${port}`, { autoReconnect: false, enableOfflineQueue: false, maxRetries: 0, connectionTimeout: 5000, tls: x.tls ? tlsOpts : undefined });
      try {
        return await outcome(async () => {
          await client.connect();
          if ((await client.send("PING", [])) !== "PONG") throw new Error("no PONG");
        });
      } finally {
        client.close();
      }
    };
    groups.redis!.push({ name: "Bun.RedisClient", check: async () => void (await attempt({})), attempt });
  }
  if (ioredis) {
    const Redis = ioredis.default;
    const attempt = async (x: { password?: string; port?: number; tls?: boolean }) => {
      const client = new Redis({ host: "127.0.0.1", port: x.port ?? (x.tls ? rd.tlsPort : rd.port), password: x.password ?? rd.password, lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false, connectTimeout: 5000, tls: x.tls ? { ca, servername: "localhost" } : undefined });
      let reason = "";
      // ioredis rejects with "Connection is closed." and tells why only through its 'error' event
      client.on("error", (e: Error) => (reason ||= said(e)));
      try {
        const r = await outcome(async () => {
          await client.connect();
          if ((await client.ping()) !== "PONG") throw new Error("no PONG");
        });
        return r === "ok" ? r : `${r} (error event: ${reason || "none"})`;
      } finally {
        client.disconnect();
      }
    };
    groups.redis!.push({ name: "ioredis", check: async () => void (await attempt({})), attempt });
  }
  const probeCandidate = (probe: typeof postgresProbe, target: (x: { port?: number; tls?: boolean }) => string, password: string): Candidate => {
    const attempt = async (x: { password?: string; port?: number; tls?: boolean }) => {
      const isRedis = probe === redisProbe;
      const r = await probe(monitor({ target: target(x), db_password: x.password ?? password, db_tls: !isRedis && (x.tls ?? false), timeout_ms: 5000 }), context({ extraCa: ca }));
      return r.status === "up" ? "ok" : `${r.error_code}: ${r.error_message?.slice(0, 90)}`;
    };
    return { name: "Vigil probe", check: async () => void (await attempt({})), attempt };
  };
  groups.postgres!.push(probeCandidate(postgresProbe, (x) => `postgres://${pg.user}@${x.tls ? "localhost" : "127.0.0.1"}:${x.port ?? pg.port}/${pg.database}`, pg.password));
  groups.mysql!.push(probeCandidate(mysqlProbe, (x) => `mysql://${my.user}@${x.tls ? "localhost" : "127.0.0.1"}:${x.port ?? my.port}/${my.database}`, my.password));
  groups.redis!.push(probeCandidate(redisProbe, (x) => (x.tls ? `rediss://localhost:${x.port ?? rd.tlsPort}` : `redis://127.0.0.1:${x.port ?? rd.port}`), rd.password));

  console.log(`db-clients: ${machine()}`);
  console.log(`servers: ${(await pg.admin<{ v: string }>("SELECT version() AS v"))[0]!.v.split(" on ")[0]}, MariaDB ${(await my.admin("SELECT VERSION()")).trim()}, Redis ${(await rd.cli("INFO", "server")).match(/redis_version:(\S+)/)?.[1]}`);
  console.log(`missing (not installed): ${[!postgresJs && "postgres", !mysql2 && "mysql2", !ioredis && "ioredis"].filter(Boolean).join(", ") || "none"}`);
  console.log(`${o.rounds} rounds x ${o.checks} checks per candidate`);

  try {
    for (const [group, candidates] of Object.entries(groups)) {
      const times = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
      const cpu = new Map<string, number>(candidates.map((c) => [c.name, 0]));
      for (const c of candidates) await c.check(); // warm up each once
      for (let round = 0; round < o.rounds; round++) {
        const order = candidates.map((_, i) => candidates[(i + round) % candidates.length]!);
        for (const c of order) {
          const before = process.cpuUsage();
          for (let i = 0; i < o.checks; i++) {
            const t = performance.now();
            await c.check();
            times.get(c.name)!.push(performance.now() - t);
          }
          const used = process.cpuUsage(before);
          cpu.set(c.name, cpu.get(c.name)! + (used.user + used.system) / 1000);
        }
      }
      console.log(`\n${group}: per check (connect, log in, ${group === "redis" ? "PING" : "SELECT 1"}, close)`);
      console.log("| candidate | p50 ms | p90 ms | mean ms | CPU ms per check |\n|---|---|---|---|---|");
      for (const c of candidates) {
        const t = times.get(c.name)!;
        console.log(`| ${c.name} | ${fmt(percentile(t, 50), 2)} | ${fmt(percentile(t, 90), 2)} | ${fmt(t.reduce((a, b) => a + b, 0) / t.length, 2)} | ${fmt(cpu.get(c.name)! / t.length, 2)} |`);
      }
      console.log(`\n${group}: behaviour`);
      console.log("| candidate | wrong password | closed port | TLS (test CA, name localhost) |\n|---|---|---|---|");
      for (const c of candidates) {
        const cells = [await c.attempt({ password: "not-the-password" }), await c.attempt({ port: refused }), await c.attempt({ tls: true })];
        console.log(`| ${c.name} | ${cells.map((s) => s.replaceAll("|", "/")).join(" | ")} |`);
      }
    }
  } finally {
    await Promise.all([pg.stop(), my.stop(), rd.stop()]);
    rmSync(certs.dir, { recursive: true, force: true });
  }
  return 0;
}
