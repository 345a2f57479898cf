import { backupDatabase, restoreDatabase, verifyBackup } from "../store/backup.ts";
import { lockHolder } from "../store/data-lock.ts";
import { dataDirOf, parseCommand, UsageError, type CliIo } from "./io.ts";

export const BACKUP_HELP = `Usage:
  vigil backup FILE [--data DIR]     write a consistent copy of the database to FILE while the
                                     server keeps running (FILE must not exist)
  vigil restore FILE [--data DIR]    replace the data directory's database with FILE after checking
                                     it; the server must be stopped; the old database is kept as
                                     vigil.db.before-restore-<time>

Back up <data>/secret.key (or keep VIGIL_SECRET_KEY) with the database: stored secrets need it.`;

export async function backupCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, {}, 1);
  if (values.help) return io.out(BACKUP_HELP), 0;
  const file = positionals[0];
  if (!file) throw new UsageError("backup needs a target FILE");
  const started = performance.now();
  const { bytes, version, journaled } = backupDatabase(dataDirOf(values, io.env), file);
  const carried = journaled > 0 ? `, ${journaled} acknowledged pings not yet folded carried along` : "";
  io.out(`backup written to ${file}: ${(bytes / 1048576).toFixed(1)} MiB, schema version ${version}${carried}, ${Math.round(performance.now() - started)} ms`);
  return 0;
}

export async function restoreCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, {}, 1);
  if (values.help) return io.out(BACKUP_HELP), 0;
  const file = positionals[0];
  if (!file) throw new UsageError("restore needs the backup FILE");
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
