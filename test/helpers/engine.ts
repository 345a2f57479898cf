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
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { DATABASE_FILE, openStore, type Store } from "../../src/store/database.ts";
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

/**
 * `--database-url URL` for a command or server given `--data DIR` (or VIGIL_DATA=DIR in `env`), on
 * PostgreSQL; nothing on SQLite or when a database URL is given.
 */
export async function engineArgs(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<string[]> {
  if (TEST_ENGINE === "sqlite" || args.includes("--database-url") || env.VIGIL_DATABASE_URL) return [];
  const i = args.indexOf("--data");
  const dataDir = i >= 0 && i + 1 < args.length ? args[i + 1]! : env.VIGIL_DATA;
  if (!dataDir) return [];
  return ["--database-url", (await databaseUrlFor(dataDir))!];
}

/** The store of a data directory on the suite's engine, as a server started on it would open it. */
export async function openTestStore(dataDir: string): Promise<Store> {
  const url = await databaseUrlFor(dataDir);
  return url ? openPostgresStore(url) : openStore(dataDir);
}

/**
 * The bytes a data directory's database keeps at rest, as latin1 text, for tests that search them
 * for a plaintext secret. On SQLite: the database file, its WAL and shared memory, as they are. On
 * PostgreSQL: after a CHECKPOINT, which writes every committed row into the data files, the files
 * of that database (base/<oid>). `files` names what was read; a test proves the right bytes were
 * read by finding something it wrote.
 */
export async function databaseAtRest(dataDir: string): Promise<{ files: string[]; text: string }> {
  let dir = dataDir;
  let files: string[];
  const url = await databaseUrlFor(dataDir);
  if (!url) {
    files = readdirSync(dataDir).filter((f) => f.startsWith(DATABASE_FILE));
  } else {
    const store = await openPostgresStore(url, { poolSize: 1 });
    try {
      await sql`CHECKPOINT`.execute(store.db);
      const { oid } = (await sql<{ oid: number }>`SELECT oid::int AS oid FROM pg_database WHERE datname = current_database()`.execute(store.db)).rows[0]!;
      dir = join((await testCluster()).dir, "data", "base", String(oid));
    } finally {
      await store.close();
    }
    files = existsSync(dir) ? readdirSync(dir) : [];
  }
  return { files, text: Buffer.concat(files.map((f) => readFileSync(join(dir, f)))).toString("latin1") };
}
