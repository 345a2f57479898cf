/**
 * Checks' regular expressions matched on a worker thread (scheduler/pattern-worker.ts), each
 * batch bounded by its check's deadline and by a time limit of its own (README "Regular
 * expressions").
 *
 * Why: the engine is linear-time (domain/user-patterns.ts), but linear in a 4 MiB body still
 * takes seconds for some patterns (BENCHMARKS.md, "Regular expressions"), and a scenario may hold
 * hundreds. On the serving thread that would hold every request and every other check behind it.
 * Here the serving thread only waits on the event loop; a batch still running when its check's
 * deadline fires, or past the time limit, is ended by ending its worker, and the next batch gets a
 * new one.
 *
 * Accounts share the workers: waiting batches are taken account by account in turn, so a batch
 * waits behind at most one batch of each other account with work waiting, and each of those
 * matches for at most the time limit. One account's slow patterns cannot hold another's checks
 * past their timeout.
 *
 * Workers are started on the first batch, so an instance whose monitors hold no pattern runs none.
 */
import type { Logger } from "../lib/logger.ts";
import { RoundRobinQueue } from "../lib/round-robin-queue.ts";
import { startWorkerThread, workerModule, type WorkerThread } from "../lib/worker-thread.ts";
import type { PatternBatch, PatternMatcher, PatternOutcome } from "../domain/user-patterns.ts";
import type { FromPatternWorker, ToPatternWorker } from "./pattern-worker.ts";

export interface PatternThreadOptions {
  /** how long one batch may match before its check fails (--pattern-time-limit-ms) */
  timeLimitMs: number;
  /** workers matching at once (default 1: README "Regular expressions" says why) */
  workers?: number;
  module?: string;
}

export interface PatternThread {
  /** The matcher of one account's checks: its batches take turns with other accounts'. */
  forAccount(account: number): PatternMatcher;
  /** Ends the workers; batches not done are refused. */
  stop(): Promise<void>;
}

interface Pending {
  id: number;
  account: number;
  batch: PatternBatch;
  signal: AbortSignal;
  /** the worker matching it, once taken from the queue */
  slot: Slot | null;
  resolve(outcomes: PatternOutcome[]): void;
  reject(err: Error): void;
  onAbort(): void;
}

/** One worker and the batch it is matching. */
interface Slot {
  thread: WorkerThread<ToPatternWorker> | null;
  starting: Promise<WorkerThread<ToPatternWorker>> | null;
  current: Pending | null;
  limit: ReturnType<typeof setTimeout> | undefined;
}

const WORKER_MODULE = workerModule("scheduler/pattern-worker.ts");

const ended = () => new Error("the check's timeout_ms passed before its patterns were matched");

const overLimit = (ms: number) =>
  new Error(`the patterns were still matching after ${ms} ms, the time one check's batch of patterns may take on this server (--pattern-time-limit-ms); match against a smaller part of the answer or simplify the patterns`);

export function patternThread(log: Logger, o: PatternThreadOptions): PatternThread {
  const module = o.module ?? WORKER_MODULE;
  const waiting = new RoundRobinQueue<Pending>();
  const slots: Slot[] = Array.from({ length: Math.max(1, o.workers ?? 1) }, () => ({ thread: null, starting: null, current: null, limit: undefined }));
  let stopped = false;
  let nextId = 1;

  const finish = (p: Pending, outcome: { ok: PatternOutcome[] } | { err: Error }) => {
    p.signal.removeEventListener("abort", p.onAbort);
    if ("ok" in outcome) p.resolve(outcome.ok);
    else p.reject(outcome.err);
  };

  /** The slot's batch is over: its timer is cleared, and the slot takes the next batch. */
  const release = (slot: Slot): Pending | null => {
    const p = slot.current;
    slot.current = null;
    clearTimeout(slot.limit);
    slot.limit = undefined;
    return p;
  };

  /**
   * Ends the slot's worker at once, whatever it is doing (it reads no message while it matches).
   * One still starting is doing nothing yet, and is kept.
   */
  const endWorker = (slot: Slot) => {
    const t = slot.thread;
    if (!t) return;
    slot.thread = null;
    slot.starting = null;
    void t.stop({ type: "stop" }, 0);
  };

  /** Ends the batch `slot` is matching, and its worker, with `err`. */
  const cut = (slot: Slot, err: Error) => {
    const p = release(slot);
    endWorker(slot);
    if (p) finish(p, { err });
    pump();
  };

  const worker = (slot: Slot): Promise<WorkerThread<ToPatternWorker>> => {
    if (slot.thread?.alive) return Promise.resolve(slot.thread);
    if (slot.starting) return slot.starting;
    const starting: Promise<WorkerThread<ToPatternWorker>> = startWorkerThread<ToPatternWorker, FromPatternWorker>({
      name: "the pattern worker",
      url: module,
      threadName: "vigil-patterns",
      start: { type: "start" },
      onMessage(m) {
        if (slot.starting !== starting || !slot.current || m.id !== slot.current.id) return;
        const p = release(slot)!;
        finish(p, m.type === "done" ? { ok: m.outcomes } : { err: new Error(`the pattern worker failed: ${m.message}`) });
        pump();
      },
      onFailed(error) {
        if (slot.starting !== starting) return;
        log.error("the pattern worker failed", { error });
        slot.thread = null;
        slot.starting = null;
        const p = release(slot);
        if (p) finish(p, { err: new Error(`the pattern worker failed: ${error}`) });
        pump();
      },
    }).then(
      (t) => {
        if (stopped || slot.starting !== starting) void t.stop({ type: "stop" }, 0);
        else slot.thread = t;
        return t;
      },
      (err: unknown) => {
        if (slot.starting === starting) slot.starting = null;
        throw err;
      },
    );
    slot.starting = starting;
    return starting;
  };

  const pump = () => {
    if (stopped) return;
    for (const slot of slots) {
      if (slot.current) continue;
      const p = waiting.shift();
      if (!p) return;
      slot.current = p;
      p.slot = slot;
      worker(slot).then(
        (t) => {
          if (slot.current !== p) return;
          t.send({ type: "run", id: p.id, batch: p.batch });
          // counted from here: a worker's start is not the batch's doing
          slot.limit = setTimeout(() => {
            if (slot.current !== p) return;
            log.warn("patterns still running at the time limit: the pattern worker was ended", { account_id: p.account, patterns: p.batch.jobs.length, limit_ms: o.timeLimitMs });
            cut(slot, overLimit(o.timeLimitMs));
          }, o.timeLimitMs);
        },
        (err: unknown) => {
          log.error("the pattern worker did not start", { error: String(err) });
          if (slot.current !== p) return;
          release(slot);
          finish(p, { err: new Error(`the pattern worker did not start: ${(err as Error).message}`) });
          pump();
        },
      );
    }
  };

  const run = (account: number, batch: PatternBatch, signal: AbortSignal): Promise<PatternOutcome[]> => {
    if (stopped) return Promise.reject(new Error("the pattern worker was stopped"));
    if (signal.aborted) return Promise.reject(ended());
    return new Promise<PatternOutcome[]>((resolve, reject) => {
      const p: Pending = {
        id: nextId++,
        account,
        batch,
        signal,
        slot: null,
        resolve,
        reject,
        onAbort() {
          if (p.slot?.current === p) {
            // the worker is busy with this batch and reads no message until it is done
            log.warn("patterns still running at their check's deadline: the pattern worker was ended", { account_id: account, patterns: batch.jobs.length });
            cut(p.slot, ended());
          } else {
            waiting.remove(account, p);
            finish(p, { err: ended() });
          }
        },
      };
      signal.addEventListener("abort", p.onAbort, { once: true });
      waiting.push(account, p);
      pump();
    });
  };

  return {
    forAccount: (account) => ({ run: (batch, signal) => run(account, batch, signal) }),
    async stop() {
      stopped = true;
      const refused = new Error("the pattern worker was stopped");
      for (const p of waiting.clear()) finish(p, { err: refused });
      const threads: WorkerThread<ToPatternWorker>[] = [];
      for (const slot of slots) {
        const p = release(slot);
        if (p) finish(p, { err: refused });
        const t = slot.thread ?? (await slot.starting?.catch(() => null)) ?? null;
        slot.thread = null;
        slot.starting = null;
        if (t) threads.push(t);
      }
      await Promise.all(threads.map((t) => t.stop({ type: "stop" }, 1000)));
    },
  };
}
