/**
 * The WAL checkpointer's worker (store/checkpointer.ts): a thread with a connection of its own that
 * runs a PASSIVE checkpoint every `everyMs`, and a RESTART one when the WAL is still past
 * `restartAbove` frames after it. It answers the handshake of lib/worker-thread.ts.
 *
 * Loaded as a module (scripts/build.ts lists it as an entry point, so the single binary has it).
 */
import { Database } from "bun:sqlite";
import { runAsBackgroundThread } from "../lib/background-thread.ts";
import { checkpointWal, setBusyTimeout } from "./pragmas.ts";

export type ToCheckpointWorker = { type: "start"; path: string; everyMs: number; restartAbove: number } | { type: "stop" };
export type FromCheckpointWorker = { type: "ran"; log: number; ms: number; restarted: boolean } | { type: "error"; message: string };

/** how long a RESTART checkpoint waits for the writers to pause */
const BUSY_TIMEOUT_MS = 2000;

declare const self: Worker;

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;
let restartAbove = Infinity;

const post = (m: FromCheckpointWorker | { type: "started" } | { type: "stopped" }) => postMessage(m);

function tick(): void {
  try {
    const t = performance.now();
    let r = checkpointWal(db!, "PASSIVE");
    const restarted = r.log > restartAbove;
    if (restarted) r = checkpointWal(db!, "RESTART");
    post({ type: "ran", log: r.log, ms: performance.now() - t, restarted });
  } catch (err) {
    post({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
}

self.onmessage = (e: MessageEvent<ToCheckpointWorker>) => {
  const m = e.data;
  if (m.type === "start") {
    runAsBackgroundThread();
    db = new Database(m.path);
    setBusyTimeout(db, BUSY_TIMEOUT_MS);
    restartAbove = m.restartAbove;
    timer = setInterval(tick, m.everyMs);
    post({ type: "started" });
  } else if (m.type === "stop") {
    if (timer) clearInterval(timer);
    try {
      db?.close();
    } catch {
      // closing is all that is left to do; a failure here changes nothing
    }
    post({ type: "stopped" });
  }
};
