/**
 * Checks' regular expressions matched on a worker thread (scheduler/pattern-worker.ts), each
 * batch bounded by its check's deadline (README "Regular expressions").
 *
 * Why: the engine is linear-time (domain/user-patterns.ts), but linear in a 4 MiB body still
 * takes seconds for some patterns (BENCHMARKS.md, "Regular expressions"), and a scenario may hold
 * hundreds. On the serving thread that would hold every request and every other check behind it.
 * Here the serving thread only waits on the event loop; a batch still running when its check's
 * deadline fires is ended by ending the worker, and the next batch gets a new one.
 *
 * The worker is started on the first batch, so an instance whose monitors hold no pattern runs
 * none. Batches run one at a time, in the order they come.
 */
import type { Logger } from "../lib/logger.ts";
import { startWorkerThread, workerModule, type WorkerThread } from "../lib/worker-thread.ts";
import type { PatternBatch, PatternMatcher, PatternOutcome } from "../domain/user-patterns.ts";
import type { FromPatternWorker, ToPatternWorker } from "./pattern-worker.ts";

export interface PatternThread extends PatternMatcher {
  /** Ends the worker; batches not done are refused. */
  stop(): Promise<void>;
}

interface Pending {
  id: number;
  batch: PatternBatch;
  signal: AbortSignal;
  resolve(outcomes: PatternOutcome[]): void;
  reject(err: Error): void;
  onAbort(): void;
}

const WORKER_MODULE = workerModule("scheduler/pattern-worker.ts");

const ended = () => new Error("the check's timeout_ms passed before its patterns were matched");

export function patternThread(log: Logger, module = WORKER_MODULE): PatternThread {
  const waiting: Pending[] = [];
  let current: Pending | null = null;
  let thread: WorkerThread<ToPatternWorker> | null = null;
  let starting: Promise<WorkerThread<ToPatternWorker>> | null = null;
  let stopped = false;
  let nextId = 1;

  const finish = (p: Pending, outcome: { ok: PatternOutcome[] } | { err: Error }) => {
    p.signal.removeEventListener("abort", p.onAbort);
    if ("ok" in outcome) p.resolve(outcome.ok);
    else p.reject(outcome.err);
  };

  /**
   * Ends the worker at once, whatever it is doing (it reads no message while it matches). One still
   * starting is doing nothing yet, and is kept.
   */
  const endWorker = () => {
    const t = thread;
    if (!t) return;
    thread = null;
    starting = null;
    void t.stop({ type: "stop" }, 0);
  };

  const worker = (): Promise<WorkerThread<ToPatternWorker>> => {
    if (thread?.alive) return Promise.resolve(thread);
    starting ??= startWorkerThread<ToPatternWorker, FromPatternWorker>({
      name: "the pattern worker",
      url: module,
      threadName: "vigil-patterns",
      start: { type: "start" },
      onMessage(m) {
        if (!current || m.id !== current.id) return;
        const p = current;
        current = null;
        finish(p, m.type === "done" ? { ok: m.outcomes } : { err: new Error(`the pattern worker failed: ${m.message}`) });
        pump();
      },
      onFailed(error) {
        log.error("the pattern worker failed", { error });
        thread = null;
        starting = null;
        const p = current;
        current = null;
        if (p) finish(p, { err: new Error(`the pattern worker failed: ${error}`) });
        pump();
      },
    }).then(
      (t) => {
        if (stopped) void t.stop({ type: "stop" }, 0);
        else thread = t;
        return t;
      },
      (err: unknown) => {
        starting = null;
        throw err;
      },
    );
    return starting;
  };

  const pump = () => {
    if (current || stopped) return;
    const p = waiting.shift();
    if (!p) return;
    current = p;
    worker().then(
      (t) => {
        if (current === p) t.send({ type: "run", id: p.id, batch: p.batch });
      },
      (err: unknown) => {
        log.error("the pattern worker did not start", { error: String(err) });
        if (current !== p) return;
        current = null;
        finish(p, { err: new Error(`the pattern worker did not start: ${(err as Error).message}`) });
        pump();
      },
    );
  };

  return {
    run(batch, signal) {
      if (stopped) return Promise.reject(new Error("the pattern worker was stopped"));
      if (signal.aborted) return Promise.reject(ended());
      return new Promise<PatternOutcome[]>((resolve, reject) => {
        const p: Pending = {
          id: nextId++,
          batch,
          signal,
          resolve,
          reject,
          onAbort() {
            if (current === p) {
              // the worker is busy with this batch and reads no message until it is done
              current = null;
              endWorker();
              log.warn("patterns still running at their check's deadline: the pattern worker was ended", { patterns: batch.jobs.length });
              finish(p, { err: ended() });
              pump();
            } else {
              const i = waiting.indexOf(p);
              if (i >= 0) waiting.splice(i, 1);
              finish(p, { err: ended() });
            }
          },
        };
        signal.addEventListener("abort", p.onAbort, { once: true });
        waiting.push(p);
        pump();
      });
    },
    async stop() {
      stopped = true;
      const refused = new Error("the pattern worker was stopped");
      for (const p of waiting.splice(0)) finish(p, { err: refused });
      if (current) finish(current, { err: refused });
      current = null;
      const t = thread ?? (await starting?.catch(() => null)) ?? null;
      thread = null;
      if (t) await t.stop({ type: "stop" }, 1000);
    },
  };
}
