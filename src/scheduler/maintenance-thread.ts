/**
 * The maintenance job on a worker thread (scheduler/maintenance-worker.ts), for the SQLite store.
 *
 * Why: bun:sqlite is synchronous, so on the serving thread every statement of the job holds every
 * request behind it. After an hour ends, the job reads that hour of every monitor to roll it up;
 * under heavy ping traffic that is millions of rows, and even in 10 ms transactions it added up to
 * 10 ms to every request for seconds at a time (BENCHMARKS.md, "The maintenance job's stalls").
 * On a worker the reads and the work on them run on another core, at a lower priority; the serving
 * thread meets the worker only at the write lock, which it waits for on the event loop.
 */
import type { Logger } from "../lib/logger.ts";
import { startWorkerThread, workerModule, type WorkerThread } from "../lib/worker-thread.ts";
import type { MaintenanceReport } from "../engine/retention.ts";
import type { FromMaintenanceWorker, ToMaintenanceWorker, WorkerRunOptions } from "./maintenance-worker.ts";

export interface MaintenanceThread {
  /** false once the worker failed or was stopped */
  readonly alive: boolean;
  /** why the worker failed, once it has (also between runs) */
  readonly failure: string | null;
  /** One run on the worker; rejects when the run fails or the worker does. */
  run(now: number, retentionDays: number, options: WorkerRunOptions): Promise<MaintenanceReport>;
  /** Stops the run under way at its next batch and ends the worker, waiting at most `waitMs`. */
  stop(waitMs: number): Promise<void>;
}

const WORKER_MODULE = workerModule("scheduler/maintenance-worker.ts");

/** Starts the worker on the store at `path`; rejects if it does not start. */
export async function startMaintenanceThread(path: string, log: Logger, module = WORKER_MODULE): Promise<MaintenanceThread> {
  let pending: { resolve(r: MaintenanceReport): void; reject(err: Error): void } | null = null;
  let failure: string | null = null;
  const settle = (fn: (p: NonNullable<typeof pending>) => void) => {
    const p = pending;
    pending = null;
    if (p) fn(p);
  };
  const thread: WorkerThread<ToMaintenanceWorker> = await startWorkerThread<ToMaintenanceWorker, FromMaintenanceWorker>({
    name: "the maintenance worker",
    url: module,
    threadName: "vigil-maint",
    start: { type: "start", path },
    onMessage(m) {
      if (m.type === "log") log.child(m.component)[m.level](m.msg, m.fields);
      else if (m.type === "done") settle((p) => p.resolve(m.report));
      else if (m.type === "failed") settle((p) => p.reject(new Error(m.message)));
    },
    onFailed(error) {
      failure = error;
      settle((p) => p.reject(new Error(`the maintenance worker failed: ${error}`)));
    },
  });
  return {
    get alive() {
      return thread.alive;
    },
    get failure() {
      return failure;
    },
    run(now, retentionDays, options) {
      if (!thread.alive) return Promise.reject(new Error("the maintenance worker is not running"));
      if (pending) return Promise.reject(new Error("a maintenance run is under way"));
      return new Promise<MaintenanceReport>((resolve, reject) => {
        pending = { resolve, reject };
        thread.send({ type: "run", now, retentionDays, options });
      });
    },
    async stop(waitMs) {
      await thread.stop({ type: "stop" }, waitMs);
      settle((p) => p.reject(new Error("the maintenance worker was stopped")));
    },
  };
}
