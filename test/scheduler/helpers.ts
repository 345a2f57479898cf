/** A scheduler wired to a real store and the real engine, with knobs for short tests. */
import type { CheckResult } from "../../src/domain/check-result.ts";
import { recordCheckResult } from "../../src/engine/record-check.ts";
import { dbMonitorSource } from "../../src/scheduler/db-source.ts";
import { Scheduler, type SchedulerOptions } from "../../src/scheduler/scheduler.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import type { EngineHarness } from "../engine/helpers.ts";

export interface SinkCall {
  monitorId: number;
  region: string;
  result: CheckResult;
}

export function makeScheduler(h: EngineHarness, over: Partial<SchedulerOptions> = {}): { scheduler: Scheduler; sunk: SinkCall[] } {
  const sunk: SinkCall[] = [];
  const scheduler = new Scheduler({
    region: h.ctx.config.region,
    sink: async (monitorId, region, result) => {
      sunk.push({ monitorId, region, result });
      await recordCheckResult(h.ctx, monitorId, region, result);
    },
    source: dbMonitorSource(h.ctx, h.ctx.config.region),
    clock: h.ctx.clock,
    log: h.ctx.log.child("scheduler"),
    maxConcurrent: 10,
    events: h.ctx.events,
    persistDelayMs: 10,
    ...over,
  });
  return { scheduler, sunk };
}

/**
 * An HTTP target whose routes can be held open: `/gate` answers only when `release()` is called,
 * `/slow` after `slowMs`; it records how many requests were in flight at most, per path.
 */
export interface ControlledTarget extends HttpTarget {
  maxInFlight: Record<string, number>;
  inFlight: Record<string, number>;
  release(): void;
  status: { code: number };
}

export async function startControlledTarget(slowMs = 300): Promise<ControlledTarget> {
  const maxInFlight: Record<string, number> = {};
  const inFlight: Record<string, number> = {};
  let waiting: (() => void)[] = [];
  const status = { code: 200 };
  const track = async (path: string, work: () => Promise<void>) => {
    inFlight[path] = (inFlight[path] ?? 0) + 1;
    maxInFlight[path] = Math.max(maxInFlight[path] ?? 0, inFlight[path]!);
    try {
      await work();
    } finally {
      inFlight[path]!--;
    }
  };
  const target = await startHttpTarget({
    "/ok": () => new Response("fine", { status: status.code }),
    "/other": () => new Response("other"),
    "/slow": async () => {
      await track("/slow", () => Bun.sleep(slowMs));
      return new Response("slow");
    },
    "/gate": async () => {
      await track("/gate", () => new Promise<void>((resolve) => waiting.push(resolve)));
      return new Response("released");
    },
  });
  const release = () => {
    const w = waiting;
    waiting = [];
    for (const fn of w) fn();
  };
  return {
    ...target,
    maxInFlight,
    inFlight,
    status,
    release,
    async close() {
      release();
      await target.close();
    },
  };
}
