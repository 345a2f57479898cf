/**
 * The fold worker: a thread that folds the ping journal (store/ping-journal.ts) into the main
 * database with a connection of its own, so the fold's inserts are not spent on the thread that
 * serves pings, where they were a fifth of its time (BENCHMARKS.md, heartbeat: "the journal in its
 * own file, folded by a worker").
 *
 * Asked to fold the batches in a range of ids, it reads them from the journal's segment files, folds
 * them monitor by monitor in id order, FOLD_SLICE pings a transaction (store/ping-fold.ts), tells
 * after each commit what it folded, and when the pass is through says so: the serving thread then
 * drops those pings from memory and deletes the segments that hold nothing newer. Each monitor's
 * watermark makes a fold of pings a reader's settle folded meanwhile write nothing.
 *
 * Loaded as a module (scripts/build.ts lists it as an entry point, so the single binary has it).
 */
import { Database } from "bun:sqlite";
import { runAsBackgroundThread } from "../lib/background-thread.ts";
import { preparePingFold, takeSlice } from "./ping-fold.ts";
import { readJournalBatches, type JournaledPing } from "./ping-journal-file.ts";
import { applyPragmas, setAutoCheckpoint } from "./pragmas.ts";

export type ToFoldWorker =
  | { type: "start"; databasePath: string; dataDir: string; region: string; slice: number }
  /** the batches after `after` up to `through` */
  | { type: "fold"; after: number; through: number }
  | { type: "stop" };

export type FromFoldWorker =
  | { type: "started" }
  | { type: "folded"; monitors: [number, number][] }
  | { type: "passed"; through: number; pings: number }
  /** `code` is the error's (SQLITE_FULL, ...), so the serving thread can tell a full disk */
  | { type: "failed"; through: number; message: string; code: string | null }
  /** a stop came before the pass was through: what it folded is told, the rest stays journaled */
  | { type: "interrupted"; through: number }
  | { type: "stopped" };

declare const self: Worker;

let main: Database | null = null;
let dataDir = "";
let fold: ReturnType<typeof preparePingFold> | null = null;
let slice = 500;
let stopping = false;
let running: Promise<void> | null = null;

const post = (m: FromFoldWorker) => postMessage(m);

async function pass(after: number, through: number): Promise<void> {
  // by monitor, in id order (records hold pings in id order, and are read in theirs); as the
  // objects read, not packed as store/pending-pings.ts holds them: they are folded at once
  const byMonitor = new Map<number, JournaledPing[]>();
  for (const batch of readJournalBatches(dataDir, after, through)) {
    for (const p of batch.pings) {
      const list = byMonitor.get(p.monitorId);
      if (list === undefined) byMonitor.set(p.monitorId, [p]);
      else list.push(p);
    }
  }
  const order = [...byMonitor.keys()].sort((a, b) => a - b);
  let pings = 0;
  for (let i = 0; i < order.length && !stopping; ) {
    const { monitors, done, next } = takeSlice(order, i, slice, (id) => byMonitor.get(id));
    i = next;
    pings += main!.transaction(() => fold!.fold(monitors)).immediate();
    post({ type: "folded", monitors: done });
    // the lock is free between slices: a writer on the serving thread waiting for it gets its turn
    await Bun.sleep(1);
  }
  post(stopping ? { type: "interrupted", through } : { type: "passed", through, pings });
}

self.onmessage = (e: MessageEvent<ToFoldWorker>) => {
  const m = e.data;
  if (m.type === "start") {
    runAsBackgroundThread();
    main = new Database(m.databasePath, { strict: false });
    applyPragmas(main);
    // the checkpointer (store/checkpointer.ts) checkpoints; a commit here must not do it inline
    setAutoCheckpoint(main, 0);
    dataDir = m.dataDir;
    fold = preparePingFold(main, m.region);
    slice = m.slice;
    post({ type: "started" });
  } else if (m.type === "fold") {
    const { after, through } = m;
    running = (running ?? Promise.resolve()).then(() =>
      pass(after, through).catch((err: unknown) => {
        const code = (err as { code?: unknown } | null)?.code;
        post({ type: "failed", through, message: err instanceof Error ? err.message : String(err), code: typeof code === "string" ? code : null });
      }),
    );
  } else if (m.type === "stop") {
    stopping = true;
    void (running ?? Promise.resolve()).then(() => {
      main?.close();
      post({ type: "stopped" });
    });
  }
};
