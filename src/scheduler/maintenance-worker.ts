/**
 * The maintenance job's worker (scheduler/maintenance.ts): a thread with a connection of its own to
 * the SQLite store that runs the job (engine/retention.ts) when asked, so rolling up, pruning and
 * packing checks read and write on a core of their own instead of the thread that serves requests.
 * It answers the handshake of lib/worker-thread.ts; its log lines go to the serving thread's log.
 *
 * Loaded as a module (scripts/build.ts lists it as an entry point, so the single binary has it).
 */
import { runAsBackgroundThread } from "../lib/background-thread.ts";
import type { Logger, LogLevel } from "../lib/logger.ts";
import { runMaintenance, type MaintenanceOptions, type MaintenanceReport } from "../engine/retention.ts";
import { connectStore, type SqliteStore } from "../store/database.ts";
import { setAutoCheckpoint } from "../store/pragmas.ts";

/** The options a run can be given across threads (functions cannot be sent). */
export type WorkerRunOptions = Pick<MaintenanceOptions, "batchSize" | "maxPrunedPerRun" | "maxPackedPerRun">;

export type ToMaintenanceWorker =
  | { type: "start"; path: string }
  /** `now` and `retentionDays` are the serving thread's, so a run sees the clock and settings it would */
  | { type: "run"; now: number; retentionDays: number; options: WorkerRunOptions }
  | { type: "stop" };

export type FromMaintenanceWorker =
  | { type: "log"; level: Exclude<LogLevel, "silent">; component: string; msg: string; fields?: Record<string, unknown> }
  | { type: "done"; report: MaintenanceReport }
  | { type: "failed"; message: string };

declare const self: Worker;

let store: SqliteStore | null = null;
let stopping = false;
let running: Promise<void> | null = null;

const post = (m: FromMaintenanceWorker | { type: "started" } | { type: "stopped" }) => postMessage(m);

/** Every line goes to the serving thread, whose logger keeps the ones its level asks for. */
function forwardingLog(component: string): Logger {
  const line = (level: Exclude<LogLevel, "silent">) => (msg: string, fields?: Record<string, unknown>) => post({ type: "log", level, component, msg, fields });
  return { level: "debug", debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error"), child: forwardingLog };
}

async function run(m: Extract<ToMaintenanceWorker, { type: "run" }>): Promise<void> {
  try {
    const ctx = { db: store!.db, clock: { now: () => m.now }, config: { retentionDays: m.retentionDays }, log: forwardingLog("vigil") };
    const report = await runMaintenance(ctx, { ...m.options, shouldStop: () => stopping, pause: () => Bun.sleep(1) });
    post({ type: "done", report });
  } catch (err) {
    post({ type: "failed", message: err instanceof Error ? err.message : String(err) });
  }
}

self.onmessage = async (e: MessageEvent<ToMaintenanceWorker>) => {
  const m = e.data;
  if (m.type === "start") {
    runAsBackgroundThread();
    store = connectStore(m.path);
    // the checkpointer (store/checkpointer.ts) checkpoints; a commit here must not do it inline
    setAutoCheckpoint(store.sqlite, 0);
    post({ type: "started" });
  } else if (m.type === "run") {
    // the serving thread asks for one run at a time; an answer either way, so it never waits for nothing
    if (stopping || running) return post({ type: "failed", message: stopping ? "the worker is stopping" : "a run is under way" });
    running = run(m).finally(() => {
      running = null;
    });
  } else if (m.type === "stop") {
    stopping = true;
    await running;
    try {
      await store?.close();
    } catch {
      // closing is all that is left to do; a failure here changes nothing
    }
    post({ type: "stopped" });
  }
};
