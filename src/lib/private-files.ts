import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";

/**
 * Modes of what Vigil writes: the data directory it creates is 0700 and every file in it (database,
 * WAL, ping journal, keys, tokens), its backups and before-restore copies 0600, as their contents
 * are the instance (README "Security"). `vigil` also runs under umask 077 (main.ts); these are for
 * code that runs without it (tests, embedding) and for files an older build left open.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) with mode 0700; an existing directory keeps its mode. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates `path` as an empty file with mode 0600; false when it already exists. */
export function createPrivateFile(path: string): boolean {
  try {
    closeSync(openSync(path, "wx", PRIVATE_FILE_MODE));
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === "EEXIST") return false;
    throw err;
  }
}

/**
 * Takes the group and other bits off a file or directory this process owns (one an older build
 * wrote 0644, a copy renamed from one); returns whether it changed. A path that does not exist, or
 * belongs to another user, is left as it is.
 */
export function restrictToOwner(path: string): boolean {
  if (!existsSync(path)) return false;
  const st = statSync(path);
  if ((st.mode & 0o077) === 0 || (process.getuid !== undefined && st.uid !== process.getuid())) return false;
  chmodSync(path, st.mode & 0o700);
  return true;
}
