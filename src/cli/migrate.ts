import { existsSync } from "node:fs";
import { join } from "node:path";
import { databaseUrl } from "../config/load.ts";
import { foldJournaledPings } from "../store/ping-fold-offline.ts";
import { createLogger } from "../lib/logger.ts";
import { acquireDataLock, lockHolder } from "../store/data-lock.ts";
import { DATABASE_FILE, type PostgresStore } from "../store/database.ts";
import { analyzeCopied, copySqliteToPostgres, postgresTablesWithRows, TargetNotEmptyError } from "../store/engine-copy.ts";
import { openPostgresStore, redactDatabaseUrl } from "../store/postgres.ts";
import { progressPrinter, reportCounts, secretKeyNote } from "./copy-output.ts";
import { parseCommand, UsageError, type CliIo } from "./io.ts";

export const MIGRATE_HELP = `Usage:
  vigil migrate --from DATA_DIR --to postgres://user:password@host:port/database [--region NAME]

Copies an SQLite instance (DATA_DIR/vigil.db) into an empty PostgreSQL database, ids and all, then
checks that every table has as many rows there as in the SQLite file. The server must be stopped
meanwhile; DATA_DIR is left as it was, apart from the pings it had journaled, which are folded into
its database first as a server start would (their checks get --region, default VIGIL_REGION or
"local": give the region the server ran with). Progress goes to stderr.

Stored secrets are sealed with the key in DATA_DIR/secret.key (or VIGIL_SECRET_KEY), which the copy
does not carry: every instance on the PostgreSQL database needs that same key.`;

const REGION = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

/** --region, else VIGIL_REGION, else "local": the region the folded pings' checks are recorded in, as the server's start-up would. */
export function regionOf(values: Record<string, unknown>, env: CliIo["env"]): string {
  const region = (values.region as string | undefined) ?? env.VIGIL_REGION ?? "local";
  if (!REGION.test(region)) throw new UsageError(`--region must be 1-63 letters, digits, - or _, got "${region}"`);
  return region;
}

export async function migrateCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, { from: { type: "string" }, to: { type: "string" }, region: { type: "string" } });
  if (values.help) return io.out(MIGRATE_HELP), 0;
  const from = values.from as string | undefined;
  if (!from) throw new UsageError("migrate needs --from DATA_DIR, the SQLite instance's data directory");
  let url: string | null;
  try {
    url = databaseUrl((values.to as string | undefined) ?? null);
  } catch (e) {
    throw new UsageError((e as Error).message.replace("--database-url", "--to"));
  }
  if (!url) throw new UsageError("migrate needs --to postgres://user:password@host:port/database, an empty database");
  const region = regionOf(values, io.env);

  if (!existsSync(join(from, DATABASE_FILE))) {
    io.err(`error: no Vigil database at ${join(from, DATABASE_FILE)}`);
    return 1;
  }
  const holder = lockHolder(from);
  if (holder !== null) {
    io.err(`error: a vigil server (pid ${holder}) is using ${from}; stop it before migrating`);
    return 1;
  }
  // no server may start on the directory while it is copied
  const release = acquireDataLock(from);
  try {
    const store = await openPostgresStore(url, { poolSize: 2 });
    try {
      const where = redactDatabaseUrl(url);
      io.out(`migrating ${from} into ${where}`);
      const ok = await copyDataDirToPostgres(io, from, region, store, where);
      if (!ok) return 1;
      secretKeyNote(io, from);
      io.out(`Start the instances with --database-url ${where}; ${from} stays as it was, to go back to until you have checked the result.`);
      return 0;
    } finally {
      await store.close();
    }
  } finally {
    release();
  }
}

/**
 * The SQLite store of `dataDir` copied into the empty PostgreSQL database of `store`: journaled
 * pings folded first, progress on stderr, counts compared at the end. False (after saying why)
 * when the database is not empty or the counts differ.
 */
export async function copyDataDirToPostgres(io: CliIo, dataDir: string, region: string, store: PostgresStore, where: string): Promise<boolean> {
  // said before the fold, which writes to the SQLite file
  const taken = await postgresTablesWithRows(store.sql);
  if (taken.length > 0) return refuseNotEmpty(io, where, new TargetNotEmptyError(taken));
  const log = createLogger("warn", "migrate", (line) => io.err(line));
  const folded = await foldJournaledPings(dataDir, region, log);
  if (folded > 0) io.out(`folded ${folded} journaled pings into the SQLite database first`);
  const started = performance.now();
  const progress = progressPrinter(io);
  let report;
  try {
    report = await copySqliteToPostgres(join(dataDir, DATABASE_FILE), store.sql, { onProgress: progress.onProgress });
  } catch (err) {
    if (err instanceof TargetNotEmptyError) return refuseNotEmpty(io, where, err);
    throw err;
  }
  const remedy = `The copy was committed but is not whole: do not use ${where}. Look for what removed rows there (a trigger, a rule), then drop it and copy into a new empty database.`;
  if (!reportCounts(io, report, "SQLite", "PostgreSQL", remedy)) return false;
  io.err("vacuuming and analysing the copied tables, so the first queries are planned on their real sizes");
  await analyzeCopied(store.sql);
  const total = report.tables.reduce((s, t) => s + t.target, 0);
  io.out(`copied ${total.toLocaleString("en-US")} rows of ${report.tables.length} tables in ${((performance.now() - started) / 1000).toFixed(1)} s; the row counts of every table match`);
  return true;
}

function refuseNotEmpty(io: CliIo, where: string, err: TargetNotEmptyError): false {
  io.err(`error: ${where} already holds Vigil data (${err.tables.map((t) => `${t.name}: ${t.rows} rows`).join(", ")}); only an empty database is copied into, so nothing was written. Create a new database (CREATE DATABASE …) and give its URL.`);
  return false;
}
