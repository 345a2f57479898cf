/**
 * WAL checkpoints on a worker thread (store/checkpoint-worker.ts), off the event loop.
 *
 * Why: with SQLite's automatic checkpoints, the commit that crosses wal_autocheckpoint copies the
 * whole WAL into the database file and fsyncs it, on the thread that serves requests: under a
 * steady write load that multiplied the heartbeat bench's p99 latency, and left the server's core
 * idle while it waited on the disk (BENCHMARKS.md, "What changed to get here"). A second connection
 * on a worker runs PASSIVE checkpoints every few hundred ms instead: they copy what the writer has
 * committed without blocking it, and the writer restarts the WAL from its start once a checkpoint
 * has caught up. If the WAL still grows past a bound (a writer that never pauses), one RESTART
 * checkpoint waits for a gap in the writes and resets it.
 */
import { FixedWindowLimiter } from "../lib/fixed-window.ts";
import type { Logger } from "../lib/logger.ts";
import { startWorkerThread, workerModule, type WorkerThread } from "../lib/worker-thread.ts";
import type { FromCheckpointWorker, ToCheckpointWorker } from "./checkpoint-worker.ts";
import type { SqliteStore } from "./database.ts";
import { autoCheckpoint, setAutoCheckpoint } from "./pragmas.ts";

export interface CheckpointerOptions {
  /** how often the worker checkpoints (default 250 ms) */
  everyMs?: number;
  /** WAL frames (pages) past which a RESTART checkpoint resets the log (default RESTART_ABOVE_FRAMES) */
  restartAboveFrames?: number;
  log?: Logger;
  /** the worker's module (tests); default checkpoint-worker.ts */
  module?: string;
  /** after each checkpoint: how long it took, and whether it had to RESTART the log */
  onCheckpoint?(seconds: number, restarted: boolean): void;
}

export interface Checkpointer {
  /** checkpoints run so far, and the last one's WAL size in frames */
  readonly stats: { runs: number; restarts: number; walFrames: number; errors: number };
  /** false when the worker did not start or failed since: the writing connection checkpoints itself */
  readonly running: boolean;
  /** Stops the worker and gives checkpoints back to the writing connection. */
  stop(): Promise<void>;
}

/**
 * 262,144 frames: 1 GiB of WAL. The writer restarts the log itself whenever a checkpoint has caught
 * up and it starts a transaction; a RESTART is for a writer that never pauses. The bound sits above
 * what one fold pass of the ping journal writes at the highest ping rate (BENCHMARKS.md,
 * "Sustained load"): below it, every such pass met a RESTART, which holds the fold worker's next
 * transaction until it is done.
 */
export const RESTART_ABOVE_FRAMES = 262_144;

const WORKER_MODULE = workerModule("store/checkpoint-worker.ts");

/**
 * Starts the worker and takes checkpoints away from the writing connection. A worker that does not
 * start, or fails later, is logged and the writing connection gets its own checkpoints back: the
 * WAL must never grow without bound because a thread died.
 */
export async function startCheckpointer(store: SqliteStore, opts: CheckpointerOptions = {}): Promise<Checkpointer> {
  const stats = { runs: 0, restarts: 0, walFrames: 0, errors: 0 };
  // failures logged once a minute, not every few hundred milliseconds
  const errorLog = new FixedWindowLimiter<"failed">(60_000);
  const own = autoCheckpoint(store.sqlite);
  let handedBack = false;
  const handBack = () => {
    if (handedBack) return;
    handedBack = true;
    try {
      setAutoCheckpoint(store.sqlite, own);
    } catch {
      // the store is closed already (a failure during shutdown): there is nothing to hand back to
    }
  };
  let thread: WorkerThread<ToCheckpointWorker>;
  try {
    thread = await startWorkerThread<ToCheckpointWorker, FromCheckpointWorker>({
      name: "the checkpoint worker",
      url: opts.module ?? WORKER_MODULE,
      threadName: "vigil-checkpnt",
      start: { type: "start", path: store.path, everyMs: opts.everyMs ?? 250, restartAbove: opts.restartAboveFrames ?? RESTART_ABOVE_FRAMES },
      onMessage(m) {
        if (m.type === "ran") {
          stats.runs++;
          if (m.restarted) stats.restarts++;
          stats.walFrames = m.log;
          opts.onCheckpoint?.(m.ms / 1000, m.restarted);
        } else if (m.type === "error") {
          stats.errors++;
          if (errorLog.take("failed", 1, Date.now())) opts.log?.warn("WAL checkpoint failed; retrying", { error: m.message, failures: stats.errors });
        }
      },
      onFailed(error) {
        handBack();
        opts.log?.error("the checkpoint worker failed; the writing connection checkpoints the WAL itself from now on", { error });
      },
    });
  } catch (err) {
    opts.log?.error("the checkpoint worker did not start; the writing connection checkpoints the WAL itself", { error: err instanceof Error ? err.message : String(err) });
    return { stats, running: false, stop: async () => {} };
  }
  // only once the worker runs: the writer never goes without checkpoints; on stop, or when the
  // worker fails, it gets its own threshold (store/pragmas.ts) back
  setAutoCheckpoint(store.sqlite, 0);
  return {
    stats,
    get running() {
      return thread.alive;
    },
    async stop() {
      handBack();
      await thread.stop({ type: "stop" }, 2000);
    },
  };
}
