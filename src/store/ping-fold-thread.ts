/**
 * The serving thread's handle on the fold worker (ping-fold-worker.ts): starts it, asks it for passes
 * one at a time, and hands on what each of its commits folded.
 */
import { FixedWindowLimiter } from "../lib/fixed-window.ts";
import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure } from "../lib/storage-errors.ts";
import { startWorkerThread, workerModule } from "../lib/worker-thread.ts";
import type { FromFoldWorker, ToFoldWorker } from "./ping-fold-worker.ts";

export interface FoldThread {
  /** false once the worker has failed: the writer folds on its own thread from then on */
  readonly alive: boolean;
  /** Folds the journal's batches after `after` up to `through`; true once the pass is through, false if it failed or was stopped. */
  fold(after: number, through: number): Promise<boolean>;
  /** Stops after the slice under way; a pass under way resolves false. */
  stop(): Promise<void>;
}

export interface FoldThreadOptions {
  databasePath: string;
  dataDir: string;
  region: string;
  slice: number;
  /** the worker's module (tests); default ping-fold-worker.ts */
  module?: string;
  /** after each commit of the worker's: (monitor, newest ping id folded) */
  onFolded(monitors: [number, number][]): void;
  log: Logger;
}

const WORKER_MODULE = workerModule("store/ping-fold-worker.ts");

/** Starts the worker; rejects if it does not start (its module missing, a failure in it) within 10 s. */
export async function startFoldThread(o: FoldThreadOptions): Promise<FoldThread> {
  let pass: ((ok: boolean) => void) | null = null;
  // a pass's failures other than the store's: once a minute in the log, not every few seconds
  const errorLog = new FixedWindowLimiter<"failed">(60_000);
  const settle = (ok: boolean) => {
    const p = pass;
    pass = null;
    p?.(ok);
  };
  const thread = await startWorkerThread<ToFoldWorker, FromFoldWorker>({
    name: "the fold worker",
    threadName: "vigil-fold",
    url: o.module ?? WORKER_MODULE,
    start: { type: "start", databasePath: o.databasePath, dataDir: o.dataDir, region: o.region, slice: o.slice },
    onMessage(m) {
      if (m.type === "folded") o.onFolded(m.monitors);
      else if (m.type === "passed") settle(true);
      else if (m.type === "interrupted") settle(false);
      else if (m.type === "failed") {
        // a full disk fails every pass: reported as every writer reports it, once a minute
        const storage = storageFailure({ code: m.code });
        if (storage) logStorageFailure(o.log, storage, { journaled_pings_waiting: true });
        else if (errorLog.take("failed", 1, Date.now())) o.log.error("folding the ping journal failed; its pings stay journaled", { error: m.message });
        settle(false);
      }
    },
    // A worker that failed is not trusted again: what it left pending is folded by the serving
    // thread (ping-fold-scheduler.ts), whose passes are as correct, only on the thread that serves pings.
    onFailed(error) {
      o.log.error("the fold worker failed; the serving thread folds the ping journal from now on", { error });
      settle(false);
    },
  });
  let stopped = false;
  return {
    get alive() {
      return thread.alive;
    },
    fold(after, through) {
      if (stopped || !thread.alive) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        pass = resolve;
        thread.send({ type: "fold", after, through });
      });
    },
    async stop() {
      stopped = true;
      await thread.stop({ type: "stop" }, 5000);
      settle(false);
    },
  };
}
