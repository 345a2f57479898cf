/**
 * The worker that matches checks' regular expressions (scheduler/pattern-thread.ts): one batch at
 * a time, compiled patterns kept between batches. It answers the handshake of lib/worker-thread.ts.
 *
 * Loaded as a module (scripts/build.ts lists it as an entry point, so the single binary has it).
 */
import { CompiledPatterns, runPatternBatch, type PatternBatch, type PatternOutcome } from "../domain/user-patterns.ts";

export type ToPatternWorker = { type: "start" } | { type: "run"; id: number; batch: PatternBatch } | { type: "stop" };

export type FromPatternWorker = { type: "done"; id: number; outcomes: PatternOutcome[] } | { type: "failed"; id: number; message: string };

declare const self: Worker;

const compiled = new CompiledPatterns();

self.onmessage = (e: MessageEvent<ToPatternWorker>) => {
  const m = e.data;
  if (m.type === "start") postMessage({ type: "started" });
  else if (m.type === "stop") postMessage({ type: "stopped" });
  else {
    try {
      postMessage({ type: "done", id: m.id, outcomes: runPatternBatch(m.batch, compiled) } satisfies FromPatternWorker);
    } catch (err) {
      postMessage({ type: "failed", id: m.id, message: err instanceof Error ? err.message : String(err) } satisfies FromPatternWorker);
    }
  }
};
