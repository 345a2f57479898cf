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
import type { Store } from "./database.ts";

export interface CheckpointerOptions {
  /** how often the worker checkpoints (default 250 ms) */
  everyMs?: number;
  /** WAL frames (pages) past which a RESTART checkpoint resets the log (default 65,536: 256 MiB) */
  restartAboveFrames?: number;
  log?: Logger;
}

export interface Checkpointer {
  /** checkpoints run so far, and the last one's WAL size in frames */
  readonly stats: { runs: number; walFrames: number; errors: number };
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

export async function startCheckpointer(store: Store, opts: CheckpointerOptions = {}): Promise<Checkpointer> {
  const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  const stats = { runs: 0, walFrames: 0, errors: 0 };
  // failures logged once a minute, not every few hundred milliseconds
  const errorLog = new FixedWindowLimiter<"failed">(60_000);
  let onStopped: (() => void) | null = null;
  let onStarted: (() => void) | null = null;
  worker.onmessage = (e: MessageEvent) => {
    const m = e.data as { type: string; log?: number; message?: string };
    if (m.type === "ran") {
      stats.runs++;
      stats.walFrames = m.log ?? 0;
    } else if (m.type === "error") {
      stats.errors++;
      if (errorLog.take("failed", 1, Date.now())) opts.log?.warn("WAL checkpoint failed; retrying", { error: m.message, failures: stats.errors });
    } else if (m.type === "started") onStarted?.();
    else if (m.type === "stopped") onStopped?.();
  };
  await new Promise<void>((resolve) => {
    onStarted = resolve;
    worker.postMessage({ type: "start", path: store.path, everyMs: opts.everyMs ?? 250, restartAbove: opts.restartAboveFrames ?? 65_536 });
  });
  // only once the worker runs: the writer never goes without checkpoints; on stop it gets its
  // own threshold (store/pragmas.ts) back
  const own = (store.sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
  store.sqlite.exec("PRAGMA wal_autocheckpoint = 0");
  let stopped = false;
  return {
    stats,
    async stop() {
      if (stopped) return;
      stopped = true;
      store.sqlite.exec(`PRAGMA wal_autocheckpoint = ${Number(own)}`);
      await Promise.race([new Promise<void>((resolve) => ((onStopped = resolve), worker.postMessage({ type: "stop" }))), Bun.sleep(2000)]);
      worker.terminate();
      URL.revokeObjectURL(url);
    },
  };
}
