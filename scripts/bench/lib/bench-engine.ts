/**
 * The store a bench's server runs on: SQLite under its data directory (the default), or with
 * `--engine postgres` a database of a throwaway PostgreSQL started here (test/helpers/postgres.ts,
 * as the pg-clients bench does), which `vigil serve` is given with --database-url.
 *
 * The test helper turns PostgreSQL's durability off (fsync, synchronous_commit, full_page_writes),
 * since nothing in a test's cluster has to survive the machine. A bench measures what a deployment
 * gets, so by default they are set back to PostgreSQL's own defaults (`fsync: true`): a commit waits
 * for its WAL to be flushed to disk.
 */
import { SQL } from "bun";
import { join } from "node:path";
import { openStore, type Store } from "../../../src/store/database.ts";
import { openPostgresStore } from "../../../src/store/postgres.ts";
import { startPostgres, type PostgresServer } from "../../../test/helpers/postgres.ts";
import { postgresCpuSeconds, ROOT } from "./proc.ts";

export type EngineName = "sqlite" | "postgres";

export interface BenchStore {
  /** what points `vigil serve --data DIR` at this store */
  flags: string[];
  /** the store, opened by the bench itself (seeding, the durability check) */
  open(): Promise<Store>;
}

export interface BenchEngine {
  name: EngineName;
  /** one line for the bench's header */
  describe: string;
  /** a fresh store for a data directory */
  fresh(dir: string): Promise<BenchStore>;
  /**
   * The data of an SQLite directory the bench seeded (bun:sqlite is the fast way to write millions
   * of fixture rows), in a fresh store of this engine: on PostgreSQL copied by `vigil migrate`, as
   * a user moving over would. The directory keeps its secret key, so `vigil serve --data DIR` with
   * the returned flags reads the copied secrets and tokens.
   */
  adopt(dir: string): Promise<BenchStore & { seconds: number }>;
  /** CPU seconds the database's own processes have used so far (SQLite has none: it runs inside the server) */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

export function parseEngine(v: string | undefined): EngineName {
  if (v === "sqlite" || v === "postgres") return v;
  throw new Error(`--engine takes sqlite or postgres, not ${v}`);
}

/** PostgreSQL's own durability defaults, which the test harness turns off, back on. */
export async function durable(pg: PostgresServer): Promise<void> {
  const admin = new SQL({ url: pg.url(), max: 1 });
  try {
    for (const setting of ["fsync", "synchronous_commit", "full_page_writes"]) await admin.unsafe(`ALTER SYSTEM SET ${setting} = on`);
    await admin.unsafe("SELECT pg_reload_conf()");
  } finally {
    await admin.close();
  }
}

export async function startBenchEngine(name: EngineName, o: { fsync: boolean } = { fsync: true }): Promise<BenchEngine> {
  if (name === "sqlite") {
    return {
      name,
      describe: "SQLite (WAL, synchronous=NORMAL) under the data directory",
      fresh: async (dir) => ({ flags: [], open: async () => openStore(dir) }),
      adopt: async (dir) => ({ flags: [], open: async () => openStore(dir), seconds: 0 }),
      cpuSeconds: () => 0,
      stop: async () => {},
    };
  }
  const pg = await startPostgres();
  if (!pg) throw new Error("--engine postgres needs PostgreSQL's server binaries (apt-get install -y postgresql)");
  if (o.fsync) await durable(pg);
  return {
    name,
    describe: `PostgreSQL ${pg.version} on ${pg.host}:${pg.port}, ${o.fsync ? "fsync and synchronous_commit on (PostgreSQL's defaults)" : "fsync, synchronous_commit and full_page_writes off (--pg-fsync off)"}`,
    async fresh() {
      const url = await pg.createDatabase();
      return { flags: ["--database-url", url], open: () => openPostgresStore(url, { poolSize: 2 }) };
    },
    async adopt(dir) {
      const url = await pg.createDatabase();
      const started = performance.now();
      const proc = Bun.spawn([process.execPath, join(ROOT, "src", "main.ts"), "migrate", "--from", dir, "--to", url], { cwd: ROOT, stdout: "inherit", stderr: "pipe", stdin: "ignore" });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      if (code !== 0) throw new Error(`vigil migrate exited with ${code}:\n${stderr}`);
      return { flags: ["--database-url", url], open: () => openPostgresStore(url, { poolSize: 2 }), seconds: (performance.now() - started) / 1000 };
    },
    cpuSeconds: () => {
      const pid = pg.pid();
      return pid === null ? 0 : postgresCpuSeconds(pid);
    },
    stop: () => pg.stop(),
  };
}
