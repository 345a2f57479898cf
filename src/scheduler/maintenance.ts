import type { AppContext } from "../context.ts";
import { runMaintenance, type MaintenanceReport } from "../engine/retention.ts";
import { startMaintenanceThread, type MaintenanceThread } from "./maintenance-thread.ts";
import type { WorkerRunOptions } from "./maintenance-worker.ts";

/** How often rollups and pruning run. */
export const MAINTENANCE_EVERY_MS = 5 * 60_000;

export interface MaintenanceJob {
  /** runs the job now unless a run is under way (then waits for that one) */
  runNow(): Promise<MaintenanceReport | null>;
  stop(deadlineMs: number): Promise<void>;
}

export interface MaintenanceJobOptions extends WorkerRunOptions {
  /**
   * On SQLite the job runs on a worker thread (scheduler/maintenance-thread.ts); `false` keeps it on
   * the serving thread, `module` names the worker's module (tests). PostgreSQL runs it here: its
   * statements wait on the network, not on this thread.
   */
  thread?: false | { module?: string };
}

/**
 * Runs the rollup-and-prune job on start and then every few minutes, one run at a time. On stop the
 * run under way ends at its next batch boundary (it is idempotent, so the next start resumes it).
 * A worker that does not start, or fails later, is logged, and the serving thread runs the job from
 * then on: rollups and pruning must not stop because a thread died.
 */
export function startMaintenance(ctx: AppContext, everyMs = MAINTENANCE_EVERY_MS, opts: MaintenanceJobOptions = {}): MaintenanceJob {
  const log = ctx.log.child("retention");
  const { thread: where, ...options } = opts;
  let stopping = false;
  let current: Promise<MaintenanceReport | null> | null = null;
  let worker: MaintenanceThread | null = null;
  const starting: Promise<unknown> | null =
    ctx.store.engine === "sqlite" && where !== false
      ? startMaintenanceThread(ctx.store.path, ctx.log, where?.module).then(
          (t) => {
            // stopped while it started: it ends now instead of running unowned
            if (stopping) return t.stop(1000);
            worker = t;
          },
          (err) => {
            log.error("the maintenance worker did not start; the job runs on the serving thread", { error: err instanceof Error ? err.message : String(err) });
          },
        )
      : null;
  const runHere = () => runMaintenance(ctx, { ...options, shouldStop: () => stopping });
  const runOnce = async (): Promise<MaintenanceReport> => {
    await starting;
    const t = worker;
    const lost = (error: string) => {
      log.error("the maintenance worker failed; the job runs on the serving thread from now on", { error });
      worker = null;
      return runHere();
    };
    if (stopping || !t) return runHere();
    // it died between runs: said once, here, as when it dies during one
    if (!t.alive) return lost(t.failure ?? "it ended");
    try {
      return await t.run(ctx.clock.now(), ctx.config.retentionDays, options);
    } catch (err) {
      if (t.alive || stopping) throw err;
      return lost(err instanceof Error ? err.message : String(err));
    }
  };
  const runNow = () =>
    (current ??= runOnce()
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
      const until = Date.now() + Math.max(0, deadlineMs);
      const left = () => Math.max(0, until - Date.now());
      if (starting) await Promise.race([starting, Bun.sleep(left())]);
      // the worker stops its run at the next batch and answers it before it ends
      await worker?.stop(left());
      if (current) await Promise.race([current, Bun.sleep(left())]);
    },
  };
}
