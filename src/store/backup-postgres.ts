import { Database as SqliteDatabase } from "bun:sqlite";
import { renameSync, rmSync, statSync } from "node:fs";
import { createPrivateFile } from "../lib/private-files.ts";
import { migrate } from "./database.ts";
import { copyPostgresToSqlite, countMismatches, type CopyOptions, type CopyReport } from "./engine-copy.ts";
import { LATEST_SCHEMA_VERSION } from "./migrations/index.ts";
import type { PostgresStore } from "./database.ts";

/**
 * `vigil backup FILE` on PostgreSQL: the same file as on SQLite (an SQLite database with this
 * build's schema), so one backup restores on either engine (README, "Backup and restore"). Read
 * from one REPEATABLE READ snapshot while the instances keep writing. It is built beside FILE and
 * renamed onto it once complete and its counts match, so FILE never names half a backup; FILE is
 * created 0600 first, so an existing one is never overwritten.
 */
export async function backupPostgres(store: PostgresStore, target: string, o: CopyOptions = {}): Promise<{ bytes: number; version: number; report: CopyReport }> {
  if (!createPrivateFile(target)) throw new Error(`${target} already exists; choose a new file name`);
  const partial = `${target}.partial`;
  let done = false;
  try {
    rmSync(partial, { force: true });
    createPrivateFile(partial);
    const db = new SqliteDatabase(partial);
    let report: CopyReport;
    try {
      // a half-written file is deleted, never used: nothing here needs to survive a crash
      db.exec("PRAGMA synchronous = OFF");
      migrate(db);
      report = await copyPostgresToSqlite(store.sql, db, o);
    } finally {
      db.close();
    }
    if (countMismatches(report).length > 0) return { bytes: 0, version: LATEST_SCHEMA_VERSION, report };
    renameSync(partial, target);
    done = true;
    return { bytes: statSync(target).size, version: LATEST_SCHEMA_VERSION, report };
  } finally {
    if (!done) {
      rmSync(partial, { force: true });
      rmSync(target, { force: true }); // the empty file made above, so a retry may use the name
    }
  }
}
