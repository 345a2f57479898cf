/**
 * WAL checkpoints on a worker thread, off the event loop.
 *
 * Why: with SQLite's automatic checkpoints, the commit that crosses wal_autocheckpoint copies the
 * whole WAL into the database file and fsyncs it, on the thread that serves requests. Under a
 * steady write load (heartbeat bench, 10,000 monitors) that made p99 latency 35-45 ms where it was
 * 4 ms without checkpoints, and left the server's core idle while it waited on the disk. A second
 * connection on a worker runs PASSIVE checkpoints every few hundred ms instead: they copy what the
 * writer has committed without blocking it, and the writer restarts the WAL from its start once a
 * checkpoint has caught up. If the WAL still grows past a bound (a writer that never pauses), one
 * RESTART checkpoint waits for a gap in the writes and resets it.
 *
 * The worker's code is inline (a Blob URL) so the single-binary build needs no extra entry point.
 */
import { FixedWindowLimiter } from "../lib/fixed-window.ts";
import type { Logger } from "../lib/logger.ts";
import { startWorkerThread, type WorkerThread } from "../lib/worker-thread.ts";
import type { Store } from "./database.ts";

export interface CheckpointerOptions {
  /** how often the worker checkpoints (default 250 ms) */
  everyMs?: number;
  /** WAL frames (pages) past which a RESTART checkpoint resets the log (default 65,536: 256 MiB) */
  restartAboveFrames?: number;
  log?: Logger;
  /** the worker's source (tests); default WORKER_SOURCE */
  workerSource?: string;
}

export interface Checkpointer {
  /** checkpoints run so far, and the last one's WAL size in frames */
  readonly stats: { runs: number; walFrames: number; errors: number };
  /** false when the worker did not start or failed since: the writing connection checkpoints itself */
  readonly running: boolean;
  /** Stops the worker and gives checkpoints back to the writing connection. */
  stop(): Promise<void>;
}

const WORKER_SOURCE = `
import { Database } from "bun:sqlite";
let db = null;
let timer = null;
let restartAbove = 65536;
function tick() {
  try {
    let r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    if (r.log > restartAbove) r = db.query("PRAGMA wal_checkpoint(RESTART)").get();
    postMessage({ type: "ran", log: r.log });
  } catch (err) {
    postMessage({ type: "error", message: String(err && err.message || err) });
  }
}
self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "start") {
    db = new Database(m.path);
    db.exec("PRAGMA busy_timeout = 2000");
    restartAbove = m.restartAbove;
    timer = setInterval(tick, m.everyMs);
    postMessage({ type: "started" });
  } else if (m.type === "stop") {
    if (timer) clearInterval(timer);
    try { db && db.close(); } catch {}
    postMessage({ type: "stopped" });
  }
};
`;

/**
 * Starts the worker and takes checkpoints away from the writing connection. A worker that does not
 * start, or fails later, is logged and the writing connection gets its own checkpoints back: the
 * WAL must never grow without bound because a thread died.
 */
export async function startCheckpointer(store: Store, opts: CheckpointerOptions = {}): Promise<Checkpointer> {
  const url = URL.createObjectURL(new Blob([opts.workerSource ?? WORKER_SOURCE], { type: "application/javascript" }));
  const stats = { runs: 0, walFrames: 0, errors: 0 };
  // failures logged once a minute, not every few hundred milliseconds
  const errorLog = new FixedWindowLimiter<"failed">(60_000);
  const own = (store.sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
  let handedBack = false;
  const handBack = () => {
    if (handedBack) return;
    handedBack = true;
    try {
      store.sqlite.exec(`PRAGMA wal_autocheckpoint = ${Number(own)}`);
    } catch {
      // the store is closed already (a failure during shutdown): there is nothing to hand back to
    }
  };
  let thread: WorkerThread<ToWorker>;
  try {
    thread = await startWorkerThread<ToWorker, FromWorker>({
      name: "the checkpoint worker",
      url,
      start: { type: "start", path: store.path, everyMs: opts.everyMs ?? 250, restartAbove: opts.restartAboveFrames ?? 65_536 },
      onMessage(m) {
        if (m.type === "ran") {
          stats.runs++;
          stats.walFrames = m.log;
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
    URL.revokeObjectURL(url);
    opts.log?.error("the checkpoint worker did not start; the writing connection checkpoints the WAL itself", { error: err instanceof Error ? err.message : String(err) });
    return { stats, running: false, stop: async () => {} };
  }
  // only once the worker runs: the writer never goes without checkpoints; on stop, or when the
  // worker fails, it gets its own threshold (store/pragmas.ts) back
  store.sqlite.exec("PRAGMA wal_autocheckpoint = 0");
  return {
    stats,
    get running() {
      return thread.alive;
    },
    async stop() {
      handBack();
      await thread.stop({ type: "stop" }, 2000);
      URL.revokeObjectURL(url);
    },
  };
}

type ToWorker = { type: "start"; path: string; everyMs: number; restartAbove: number } | { type: "stop" };
type FromWorker = { type: "ran"; log: number } | { type: "error"; message: string };
