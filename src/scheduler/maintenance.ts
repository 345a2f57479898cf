import type { AppContext } from "../context.ts";
import { runMaintenance, type MaintenanceOptions, type MaintenanceReport } from "../engine/retention.ts";

/** How often rollups and pruning run. */
export const MAINTENANCE_EVERY_MS = 5 * 60_000;

export interface MaintenanceJob {
  /** runs the job now unless a run is under way (then waits for that one) */
  runNow(): Promise<MaintenanceReport | null>;
  stop(deadlineMs: number): Promise<void>;
}

/**
 * Runs the rollup-and-prune job on start and then every few minutes, one run at a time. On stop the
 * run under way ends at its next batch boundary (it is idempotent, so the next start resumes it).
 */
export function startMaintenance(ctx: AppContext, everyMs = MAINTENANCE_EVERY_MS, opts: MaintenanceOptions = {}): MaintenanceJob {
  const log = ctx.log.child("retention");
  let stopping = false;
  let current: Promise<MaintenanceReport | null> | null = null;
  const runNow = () =>
    (current ??= runMaintenance(ctx, { ...opts, shouldStop: () => stopping })
      .catch((err) => {
        log.error("maintenance run failed", { error: String(err) });
        return null;
      })
      .finally(() => {
        current = null;
      }));
  // on start, but after the current tick, so start-up work (loading the scheduler) goes first
  const first = setTimeout(() => void runNow(), 0);
  const timer = setInterval(() => void runNow(), everyMs);
  timer.unref?.();
  return {
    runNow,
    async stop(deadlineMs) {
      stopping = true;
      clearTimeout(first);
      clearInterval(timer);
      if (current) await Promise.race([current, Bun.sleep(Math.max(0, deadlineMs))]);
    },
  };
}
