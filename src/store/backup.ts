import { Database as SqliteDatabase } from "bun:sqlite";
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { createPrivateFile, restrictToOwner } from "../lib/private-files.ts";
import { DATABASE_FILE } from "./database.ts";
import { LATEST_SCHEMA_VERSION } from "./migrations/index.ts";
import { watermarks } from "./ping-fold.ts";
import { JOURNAL_DIR, readJournalFile, type JournaledPing } from "./ping-journal-file.ts";
import { carriedPings } from "./ping-journal.ts";
import { applyPragmas, checkpointWal, integrityCheck, schemaVersion, setBusyTimeout } from "./pragmas.ts";

/**
 * A consistent online copy. bun:sqlite exposes no binding for sqlite3_backup_*, so this uses
 * `VACUUM INTO`, which reads one snapshot inside a read transaction: the server keeps writing (WAL
 * readers do not block the writer) and the copy is a compact, checkpointed single file.
 *
 * Acknowledged pings not yet folded live in the journal (store/ping-journal-file.ts). It is read
 * first, the snapshot taken after, and the entries the copy has not folded (past its watermarks) go
 * into its ping_journal table, which a server started on the restored copy folds. An entry is either
 * still in the journal when it is read, or was folded before: the fold commits before its segment is
 * deleted, and so before the snapshot.
 *
 * The copy is the whole instance, so it is created 0600 wherever it goes (VACUUM INTO writes into an
 * empty file that exists).
 */
export function backupDatabase(dataDir: string, target: string): { bytes: number; version: number; journaled: number } {
  const source = join(dataDir, DATABASE_FILE);
  if (!existsSync(source)) throw new Error(`no database at ${source}`);
  if (!createPrivateFile(target)) throw new Error(`${target} already exists; choose a new file name`);
  let version: number;
  let journal: JournaledPing[];
  try {
    journal = readJournalFile(dataDir);
    const db = new SqliteDatabase(source, { readonly: false });
    try {
      setBusyTimeout(db);
      db.query("VACUUM INTO ?").run(target);
      version = schemaVersion(db);
    } finally {
      db.close();
    }
  } catch (err) {
    rmSync(target, { force: true }); // the empty file made above, so a retry may use the name
    throw err;
  }
  let journaled = 0;
  if (journal.length > 0) {
    const copy = new SqliteDatabase(target);
    try {
      const marks = watermarks(copy);
      const missing = journal.filter((e) => e.id > (marks.get(e.monitorId) ?? Infinity));
      if (missing.length > 0) copy.transaction(() => carriedPings(copy).add(missing))();
      journaled = missing.length;
    } finally {
      copy.close();
    }
  }
  return { bytes: statSync(target).size, version, journaled };
}

/** Checks that a file is a sound Vigil database this build can open. */
export function verifyBackup(file: string): { version: number } {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  let db: SqliteDatabase;
  try {
    db = new SqliteDatabase(file, { readonly: true });
  } catch (e) {
    throw new Error(`${file} is not an SQLite database: ${(e as Error).message}`);
  }
  try {
    const check = integrityCheck(db);
    if (check.length !== 1 || check[0] !== "ok") throw new Error(`${file} fails integrity_check: ${check.join("; ")}`);
    const tables = db.query("SELECT name FROM sqlite_master WHERE type='table' AND name IN ('accounts','api_tokens')").all();
    if (tables.length !== 2) throw new Error(`${file} is not a Vigil database`);
    const version = schemaVersion(db);
    if (version > LATEST_SCHEMA_VERSION) throw new Error(`${file} has schema version ${version}, newer than this build's ${LATEST_SCHEMA_VERSION}`);
    return { version };
  } catch (e) {
    if ((e as Error).message.includes(file)) throw e;
    throw new Error(`${file} cannot be read as a Vigil database: ${(e as Error).message}`);
  } finally {
    db.close();
  }
}

/**
 * Replaces the data directory's database with a verified backup. The old database is kept beside it
 * as vigil.db.before-restore-<time> so a wrong restore can be undone, and so is its ping journal
 * (ping-journal.before-restore-<time>). Run only while no server uses the directory (the CLI checks
 * the lock file first).
 */
export function restoreDatabase(dataDir: string, file: string, now: number): { previous: string | null; version: number } {
  const { version } = verifyBackup(file);
  const target = join(dataDir, DATABASE_FILE);
  const staging = `${target}.restoring`;
  rmSync(staging, { force: true });
  stageBackup(file, staging);
  const stamp = new Date(now).toISOString().replace(/[:.]/g, "-");
  const previous = setAside(target, stamp);
  // The journal's pings belong to the database being replaced (the backup carries its own): they go
  // aside with it.
  const journal = join(dataDir, JOURNAL_DIR);
  if (existsSync(journal)) renameSync(journal, `${journal}.before-restore-${stamp}`);
  renameSync(staging, target);
  return { previous, version };
}

/**
 * Copies a backup file to `target` (a new private file) through SQLite, so the copy is a clean
 * single-file database even if the backup had a WAL, and the backup itself is never written to.
 */
export function stageBackup(file: string, target: string): void {
  createPrivateFile(target);
  const src = new SqliteDatabase(file, { readonly: true });
  try {
    src.query("VACUUM INTO ?").run(target);
  } finally {
    src.close();
  }
}

/**
 * Renames a database file to <file>.before-restore-<stamp>, its WAL folded in first so the kept
 * copy is complete on its own, and removes its -wal and -shm; returns the new name (null: no file).
 */
function setAside(file: string, stamp: string): string | null {
  let kept: string | null = null;
  if (existsSync(file)) {
    const db = new SqliteDatabase(file);
    applyPragmas(db);
    checkpointWal(db, "TRUNCATE");
    db.close();
    kept = `${file}.before-restore-${stamp}`;
    renameSync(file, kept);
    restrictToOwner(kept); // an older build's database may be 0644
  }
  for (const ext of ["-wal", "-shm"]) rmSync(file + ext, { force: true });
  return kept;
}
