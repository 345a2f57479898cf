/**
 * The throwaway PostgreSQL that the PostgreSQL tests run against (test/helpers/postgres.ts): it
 * starts from Debian's binaries, each createDatabase() is a separate empty database reachable
 * through Kysely with Bun's SQL client (the client the PostgreSQL store uses, see README "Storage"),
 * it listens on loopback only with the settings the harness promises, survives a stop and start
 * with its data, and stop() leaves neither a server nor a directory behind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { Kysely, sql } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import { postgresAvailable, startPostgres, type PostgresServer } from "../helpers/postgres.ts";

function open(url: string): Kysely<any> {
  // kysely-postgres-js is typed for postgres.js; Bun's SQL has the reserve()/unsafe()/end() it calls.
  return new Kysely<any>({ dialect: new PostgresJSDialect({ postgres: new SQL({ url, max: 2 }) as never }) });
}

describe.skipIf(!postgresAvailable("PostgreSQL harness tests"))("PostgreSQL test harness", () => {
  let pg: PostgresServer;
  let stopped = false;

  beforeAll(async () => {
    pg = (await startPostgres())!;
  });
  afterAll(async () => {
    if (!stopped) await pg.stop();
  });

  test("each createDatabase() is its own empty database, reachable through Kysely", async () => {
    const a = open(await pg.createDatabase());
    const b = open(await pg.createDatabase());
    try {
      await sql`CREATE TABLE notes (id bigserial PRIMARY KEY, at bigint NOT NULL, body text NOT NULL)`.execute(a);
      const inserted = await a.insertInto("notes").values({ at: 1_764_000_000_000, body: "hello" }).returning("id").executeTakeFirstOrThrow();
      expect(String(inserted.id)).toBe("1");
      const rows = await a.selectFrom("notes").select(["body", "at"]).execute();
      expect(rows.map((r) => [r.body, String(r.at)])).toEqual([["hello", "1764000000000"]]);
      const elsewhere = await sql<{ t: string | null }>`SELECT to_regclass('notes')::text AS t`.execute(b);
      expect(elsewhere.rows[0]!.t).toBeNull();
    } finally {
      await a.destroy();
      await b.destroy();
    }
  });

  test("listens on loopback only, socket inside its dir, durability off, not as root", async () => {
    const db = open(await pg.createDatabase());
    try {
      const show = async (name: string) => (await sql<{ v: string }>`SELECT current_setting(${name}) AS v`.execute(db)).rows[0]!.v;
      expect(await show("listen_addresses")).toBe("127.0.0.1");
      expect((await show("unix_socket_directories")).startsWith(pg.dir)).toBe(true);
      expect(await show("fsync")).toBe("off");
      expect(await show("synchronous_commit")).toBe("off");
      expect(await show("full_page_writes")).toBe("off");
      expect(Number(await show("server_version_num"))).toBeGreaterThanOrEqual(130000);
      const owner = Bun.spawnSync(["stat", "-c", "%u", `${pg.dir}/data`]).stdout.toString().trim();
      expect(owner).not.toBe("0");
    } finally {
      await db.destroy();
    }
  });

  test("stopServer() and startServer() keep the data and the port", async () => {
    const url = await pg.createDatabase();
    const before = open(url);
    await sql`CREATE TABLE kept (v int)`.execute(before);
    await sql`INSERT INTO kept VALUES (7)`.execute(before);
    await before.destroy();
    const port = pg.port;
    await pg.stopServer();
    expect(pg.pid()).toBeNull();
    await pg.startServer();
    expect(pg.port).toBe(port);
    expect(pg.pid()).toBeGreaterThan(0);
    const after = open(url);
    try {
      expect((await sql<{ v: number }>`SELECT v FROM kept`.execute(after)).rows).toEqual([{ v: 7 }]);
    } finally {
      await after.destroy();
    }
  });

  test("stop() ends the server and removes its dir", async () => {
    const pid = pg.pid()!;
    const dir = pg.dir;
    await pg.stop();
    stopped = true;
    expect(existsSync(dir)).toBe(false);
    // The postmaster is not our child (pg_ctl daemonizes it): it may linger as a zombie until init
    // reaps it, which is not running.
    const state = (() => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      } catch {
        return "gone";
      }
    })();
    expect(["gone", "Z", "X"]).toContain(state);
    const refused = await Bun.connect({ hostname: "127.0.0.1", port: pg.port, socket: { data() {} } }).then(
      (s) => (s.end(), false),
      () => true,
    );
    expect(refused).toBe(true);
  });

  test("a process that ends without stop(), even by SIGKILL, leaves no server behind", async () => {
    // bun test fires no 'exit' event and a SIGKILL none at all: only the watchdog can clean up
    const script = `
      import { startPostgres } from ${JSON.stringify(join(import.meta.dir, "../helpers/postgres.ts"))};
      const pg = await startPostgres();
      console.log(JSON.stringify({ dir: pg.dir, pid: pg.pid() }));
      process.kill(process.pid, "SIGKILL");
    `;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const out = await new Response(child.stdout).text();
    await child.exited;
    const { dir, pid } = JSON.parse(out.trim().split("\n").at(-1)!) as { dir: string; pid: number };
    expect(pid).toBeGreaterThan(0);
    const running = () => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!);
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 20_000;
    while ((running() || existsSync(dir)) && Date.now() < deadline) await Bun.sleep(100);
    expect({ running: running(), dir: existsSync(dir) }).toEqual({ running: false, dir: false });
  }, 60_000);
});
