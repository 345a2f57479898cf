/**
 * Which store engine the suite runs on. `npm test` runs on SQLite; `npm run test:postgres` sets
 * VIGIL_TEST_ENGINE=postgres and the same tests run against one PostgreSQL cluster this process
 * starts (test/helpers/postgres.ts) on first use and stops at exit.
 *
 * A test names its data directory and nothing else: every server, CLI command and store a test
 * starts on the same data directory gets the same database, a fresh one per directory, so the tests
 * need not know the engine. On PostgreSQL the data directory still holds what an instance keeps
 * locally (the secret key, the bootstrap token, the instance lock).
 */
import { openStore, type Store } from "../../src/store/database.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { startPostgres, type PostgresServer } from "./postgres.ts";

export type TestEngine = "sqlite" | "postgres";

export const TEST_ENGINE: TestEngine = process.env.VIGIL_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";

let cluster: Promise<PostgresServer> | null = null;
const databases = new Map<string, Promise<string>>();

/** The test run's PostgreSQL cluster, started on first use. */
export function testCluster(): Promise<PostgresServer> {
  cluster ??= startPostgres().then((pg) => {
    if (!pg) throw new Error("VIGIL_TEST_ENGINE=postgres needs PostgreSQL's server binaries (apt-get install -y postgresql)");
    return pg;
  });
  return cluster;
}

/** The database of a data directory on PostgreSQL (created on first use), or null on SQLite. */
export async function databaseUrlFor(dataDir: string): Promise<string | null> {
  if (TEST_ENGINE === "sqlite") return null;
  let url = databases.get(dataDir);
  if (!url) {
    url = testCluster().then((pg) => pg.createDatabase());
    databases.set(dataDir, url);
  }
  return url;
}

/** `--database-url URL` for a command or server given `--data DIR`, on PostgreSQL; nothing on SQLite or when one is given. */
export async function engineArgs(args: readonly string[]): Promise<string[]> {
  if (TEST_ENGINE === "sqlite" || args.includes("--database-url")) return [];
  const i = args.indexOf("--data");
  if (i < 0 || i + 1 >= args.length) return [];
  return ["--database-url", (await databaseUrlFor(args[i + 1]!))!];
}

/** The store of a data directory on the suite's engine, as a server started on it would open it. */
export async function openTestStore(dataDir: string): Promise<Store> {
  const url = await databaseUrlFor(dataDir);
  return url ? openPostgresStore(url) : openStore(dataDir);
}
