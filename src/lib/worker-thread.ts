/**
 * A worker thread behind a handshake, as the fold worker (store/ping-fold-thread.ts), the WAL
 * checkpointer (store/checkpointer.ts) and the maintenance job (scheduler/maintenance-thread.ts)
 * use one: the worker is sent a start message and answers `{ type: "started" }`; asked to stop, it
 * answers `{ type: "stopped" }`. Every other message goes to the owner.
 *
 * Why in one place: a worker can fail to load (a module missing from a build), throw while
 * starting, hang, or fail later. Started without a time limit, a worker that never answers would
 * keep the server from starting; one that failed unnoticed would leave its work undone. Here the
 * start is refused within a time limit, a later failure is reported once, and a stop never waits
 * longer than it is told to.
 */

/**
 * Where a worker's module is, by its path below src/ ("store/checkpoint-worker.ts"). In the single
 * binary every module's import.meta.url is the binary's own (file:///$bunfs/root/...) and each
 * worker's entry point (scripts/build.ts) sits at its path below src/; from source it is that file.
 */
export function workerModule(pathBelowSrc: string): string {
  return import.meta.url.startsWith("file:///$bunfs/") ? `/$bunfs/root/${pathBelowSrc}` : new URL(`../${pathBelowSrc}`, import.meta.url).href;
}

export interface WorkerThread<To> {
  /** false once the worker failed or was stopped */
  readonly alive: boolean;
  send(message: To): void;
  /** Sends `message` and waits for the worker's "stopped", at most `waitMs`; then ends it. Once. */
  stop(message: To, waitMs: number): Promise<void>;
}

export interface WorkerThreadOptions<To, From> {
  /** how errors name it: "the fold worker" */
  name: string;
  /** the OS thread's name (at most 15 characters: `/proc/<pid>/task/<tid>/comm`), so per-thread CPU can be told apart */
  threadName?: string;
  /** the worker's module: a path, a file URL or a Blob URL */
  url: string;
  start: To;
  /** default 10 s */
  startTimeoutMs?: number;
  /** every message but "started" and "stopped" */
  onMessage(message: From): void;
  /** the worker failed after it had started: it is ended, and `alive` is false from now on */
  onFailed(error: string): void;
}

type Handshake = { type: "started" } | { type: "stopped" };

/** Starts the worker; rejects if it fails to load or start, or does not start in time. */
export async function startWorkerThread<To, From>(o: WorkerThreadOptions<To, From>): Promise<WorkerThread<To>> {
  const worker = new Worker(o.url, o.threadName === undefined ? undefined : { name: o.threadName });
  let alive = true;
  let started: (() => void) | null = null;
  let startFailed: ((err: Error) => void) | null = null;
  let stoppedNow: (() => void) | null = null;
  worker.onmessage = (e: MessageEvent<From | Handshake>) => {
    const m = e.data as { type?: unknown };
    if (m?.type === "started") started?.();
    else if (m?.type === "stopped") stoppedNow?.();
    else o.onMessage(e.data as From);
  };
  worker.onerror = (e) => {
    if (!alive) return;
    alive = false;
    worker.terminate();
    if (startFailed) startFailed(new Error(`${o.name} failed to start: ${e.message}`));
    else o.onFailed(e.message);
    stoppedNow?.();
  };
  const timeoutMs = o.startTimeoutMs ?? 10_000;
  const limit = setTimeout(() => startFailed?.(new Error(`${o.name} did not start within ${timeoutMs / 1000} s`)), timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      started = resolve;
      startFailed = reject;
      worker.postMessage(o.start);
    });
  } catch (err) {
    alive = false;
    worker.terminate();
    throw err;
  } finally {
    clearTimeout(limit);
    started = null;
    startFailed = null;
  }
  let stopping: Promise<void> | null = null;
  return {
    get alive() {
      return alive;
    },
    send: (message) => worker.postMessage(message),
    stop(message, waitMs) {
      return (stopping ??= (async () => {
        if (alive) {
          await Promise.race([
            new Promise<void>((resolve) => {
              stoppedNow = resolve;
              worker.postMessage(message);
            }),
            Bun.sleep(waitMs),
          ]);
        }
        alive = false;
        worker.terminate();
      })());
    },
  };
}
