import { getPriority, setPriority } from "node:os";

/** The nice value of Vigil's housekeeping threads: the fold worker, the WAL checkpointer and the maintenance job. */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread's CPU priority, so a housekeeping thread (folding the ping journal,
 * checkpointing the WAL) yields to the thread that answers requests when both want a core, and
 * takes what is left otherwise. On Linux the nice value is per thread; elsewhere it would lower
 * the whole process, so it is left alone there, as it is where it may not be changed.
 */
export function runAsBackgroundThread(): void {
  if (process.platform !== "linux") return;
  try {
    if (getPriority() < BACKGROUND_NICE) setPriority(BACKGROUND_NICE);
  } catch {
    // not permitted: the thread keeps the priority it has
  }
}
