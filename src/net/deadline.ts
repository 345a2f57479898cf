/**
 * One abort signal per check that fires on `timeout_ms` or on the scheduler's signal, remembering
 * which of the two it was so a timeout is reported as a timeout and a shutdown as a cancellation.
 */
import { ProbeFailure } from "../domain/check-failure.ts";

export interface Deadline {
  signal: AbortSignal;
  timedOut(): boolean;
  /** throws the right ProbeFailure if the deadline has fired */
  throwIfDone(what: string): void;
  /** the failure to report when aborted while doing `what` */
  failure(what: string, timeoutCode?: "connection_timeout" | "dns_timeout" | "ping_timeout"): ProbeFailure;
  dispose(): void;
}

export function startDeadline(timeoutMs: number, outer: AbortSignal, timeoutCode: "connection_timeout" | "dns_timeout" | "ping_timeout" = "connection_timeout"): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error("timeout"));
  }, Math.max(1, timeoutMs));
  const onOuter = () => controller.abort(new Error("cancelled"));
  if (outer.aborted) onOuter();
  else outer.addEventListener("abort", onOuter, { once: true });
  const failure = (what: string, code = timeoutCode) =>
    timedOut
      ? new ProbeFailure(code, `timed out after ${timeoutMs} ms ${what}`)
      : new ProbeFailure("internal_error", `check cancelled ${what}`);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    throwIfDone(what) {
      if (controller.signal.aborted) throw failure(what);
    },
    failure,
    dispose() {
      clearTimeout(timer);
      outer.removeEventListener("abort", onOuter);
    },
  };
}

/**
 * Resolves with `work`, or rejects with the deadline's failure as soon as the signal fires. `what`
 * may be a function, asked when the deadline fires, for work whose step at that moment matters
 * (connecting, or waiting for an answer).
 */
export function raceDeadline<T>(work: Promise<T>, deadline: Deadline, what: string | (() => string)): Promise<T> {
  const describe = typeof what === "function" ? what : () => what;
  if (deadline.signal.aborted) {
    // nobody waits on `work` any more: its later failure (a lookup refused after the deadline) must
    // not surface as an unhandled rejection that takes the process down
    work.catch(() => {});
    return Promise.reject(deadline.failure(describe()));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(deadline.failure(describe()));
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => { deadline.signal.removeEventListener("abort", onAbort); resolve(v); },
      (e) => { deadline.signal.removeEventListener("abort", onAbort); reject(e); },
    );
  });
}

/** Elapsed ms as an integer, rounded up: a completed exchange never reports 0 ms. */
export function elapsedMs(startedAt: number): number {
  return Math.max(1, Math.ceil(performance.now() - startedAt));
}

/** Whole ms since `startedAt` (performance.now()), for timings: 0 allowed, unlike elapsedMs. */
export function sinceMs(startedAt: number): number {
  return Math.max(0, Math.round(performance.now() - startedAt));
}
