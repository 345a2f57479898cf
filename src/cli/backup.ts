import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupDatabase, restoreDatabase, stageBackup, verifyBackup } from "../store/backup.ts";
import { backupPostgres } from "../store/backup-postgres.ts";
import { lockHolder } from "../store/data-lock.ts";
import { DATABASE_FILE } from "../store/database.ts";
import { openPostgresStore, redactDatabaseUrl } from "../store/postgres.ts";
import { progressPrinter, reportCounts } from "./copy-output.ts";
import { databaseUrlOf, dataDirOf, parseCommand, UsageError, type CliIo } from "./io.ts";
import { copyDataDirToPostgres, regionOf } from "./migrate.ts";

export const BACKUP_HELP = `Usage:
  vigil backup FILE [--data DIR | --database-url URL]
      write a consistent copy of the database to FILE while the server keeps running (FILE must
      not exist). On PostgreSQL too FILE is an SQLite database, read from one snapshot: a backup
      restores on either engine.
  vigil restore FILE [--data DIR]
      replace the data directory's database with FILE after checking it; the server must be
      stopped; the old database is kept as vigil.db.before-restore-<time>
  vigil restore FILE --database-url URL [--region NAME]
      load FILE into an EMPTY PostgreSQL database (a new one: CREATE DATABASE …), then point the
      instances at it; the database they used stays as it was. Pings the backup carried are folded
      in with --region (default VIGIL_REGION or "local"). Needs room for a copy of FILE in TMPDIR.

Back up <data>/secret.key (or keep VIGIL_SECRET_KEY) with the database: stored secrets need it.`;

export async function backupCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, {}, 1);
  if (values.help) return io.out(BACKUP_HELP), 0;
  const file = positionals[0];
  if (!file) throw new UsageError("backup needs a target FILE");
  const started = performance.now();
  const url = databaseUrlOf(values, io.env);
  if (url) {
    const store = await openPostgresStore(url, { poolSize: 2 });
    try {
      const { bytes, version, report } = await backupPostgres(store, file, { onProgress: progressPrinter(io).onProgress });
      if (!reportCounts(io, report, "PostgreSQL", "the backup", `Nothing was written to ${file}.`)) return 1;
      const rows = report.tables.reduce((s, t) => s + t.target, 0);
      io.out(`backup of ${redactDatabaseUrl(url)} written to ${file}: ${(bytes / 1048576).toFixed(1)} MiB, ${rows} rows from one snapshot, schema version ${version}, ${Math.round(performance.now() - started)} ms`);
      return 0;
    } finally {
      await store.close();
    }
  }
  const { bytes, version, journaled } = backupDatabase(dataDirOf(values, io.env), file);
  const carried = journaled > 0 ? `, ${journaled} acknowledged pings not yet folded carried along` : "";
  io.out(`backup written to ${file}: ${(bytes / 1048576).toFixed(1)} MiB, schema version ${version}${carried}, ${Math.round(performance.now() - started)} ms`);
  return 0;
}

export async function restoreCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, { region: { type: "string" } }, 1);
  if (values.help) return io.out(BACKUP_HELP), 0;
  const file = positionals[0];
  if (!file) throw new UsageError("restore needs the backup FILE");
  const url = databaseUrlOf(values, io.env);
  if (url) return restoreIntoPostgres(io, file, url, regionOf(values, io.env));
  const dataDir = dataDirOf(values, io.env);
  const holder = lockHolder(dataDir);
  if (holder !== null) {
    io.err(`error: a vigil server (pid ${holder}) is using ${dataDir}; stop it before restoring`);
    return 1;
  }
  verifyBackup(file);
  const { previous, version } = restoreDatabase(dataDir, file, Date.now());
  io.out(`restored ${file} (schema version ${version}) into ${dataDir}` + (previous ? `; the previous database is kept as ${previous}` : ""));
  return 0;
}

/**
 * A backup into an empty PostgreSQL database: a copy of the file is opened as a server would open
 * it (schema brought up to this build's, the pings it carries folded) and copied in as `vigil
 * migrate` copies a data directory. Never into a database in use: the database the instances use
 * stays as it was until they are pointed at the restored one, as SQLite's restore keeps the
 * replaced file (README, "Backup and restore").
 */
async function restoreIntoPostgres(io: CliIo, file: string, url: string, region: string): Promise<number> {
  const { version } = verifyBackup(file);
  const where = redactDatabaseUrl(url);
  const store = await openPostgresStore(url, { poolSize: 2 });
  // the copy that is opened and folded: the backup file itself is never written to (mkdtemp: 0700)
  const staging = mkdtempSync(join(tmpdir(), "vigil-restore-"));
  try {
    stageBackup(file, join(staging, DATABASE_FILE));
    io.out(`restoring ${file} (schema version ${version}) into ${where}`);
    if (!(await copyDataDirToPostgres(io, staging, region, store, where))) return 1;
    io.out(`Point the instances at ${where} (--database-url) and start them; the database they used before is unchanged.`);
    return 0;
  } finally {
    await store.close();
    rmSync(staging, { recursive: true, force: true });
  }
}
