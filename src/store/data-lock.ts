import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PRIVATE_FILE_MODE, restrictToOwner } from "../lib/private-files.ts";

export const LOCK_FILE = "serve.lock";

/** The pid of a live `vigil serve` holding the data directory, or null. */
export function lockHolder(dataDir: string): number | null {
  const path = join(dataDir, LOCK_FILE);
  if (!existsSync(path)) return null;
  const pid = Number(readFileSync(path, "utf8").trim());
  if (!Number.isInteger(pid) || pid < 1) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null; // stale lock from a process that died
  }
}

/**
 * Marks the data directory as served by this process, so `restore` refuses to swap the database
 * under a running server and a second `serve` on the same directory is refused. A stale lock left
 * by a killed process is taken over.
 */
export function acquireDataLock(dataDir: string): () => void {
  const holder = lockHolder(dataDir);
  if (holder !== null && holder !== process.pid) {
    // a process killed a moment ago still exists until the kernel has finished ending it and its
    // parent has reaped it; the caller's remedy is to wait, not to delete the lock
    throw new Error(`the data directory ${dataDir} is in use by another vigil process (pid ${holder}); if it was just stopped or killed, it is still exiting: start again in a moment`);
  }
  const path = join(dataDir, LOCK_FILE);
  writeFileSync(path, String(process.pid) + "\n", { mode: PRIVATE_FILE_MODE });
  restrictToOwner(path);
  return () => {
    if (lockHolder(dataDir) === process.pid) rmSync(path, { force: true });
  };
}
