/**
 * Saturation (README "State, scheduling and incidents"): the verdict with its hysteresis and log
 * lines, driven tick by tick on a manual clock; then a real scheduler whose one slot is held by a
 * target that does not answer, so due checks wait: it says so, sets aside the latency verdicts of
 * what ran meanwhile, and says when it is over.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { emptyResult, type CheckResult } from "../../src/domain/check-result.ts";
import { latencyReason } from "../../src/domain/cert-expiry.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { SaturationWatch, type LoadNow } from "../../src/scheduler/saturation.ts";
import type { Scheduler } from "../../src/scheduler/scheduler.ts";
import { engineHarness, insertMonitor, type EngineHarness } from "../engine/helpers.ts";
import { waitFor } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { makeScheduler } from "./helpers.ts";

const OPTS = { boundMs: 1000, windowMs: 10_000, tickMs: 1000, remindEveryMs: 60_000 };
const idle: LoadNow = { inFlight: 0, maxConcurrent: 10, waiting: 0, oldestWaitMs: 0, askedPerSec: 5 };

function watch() {
  let now = 1_800_000_000_000;
  const lines: Record<string, unknown>[] = [];
  const w = new SaturationWatch(OPTS, createLogger("debug", "scheduler", (l) => lines.push(JSON.parse(l))), () => now);
  /** `ticks` verdicts one tick apart, each after `starts` starts of the given lateness */
  const run = (ticks: number, starts: number[], load: LoadNow = idle) => {
    for (let i = 0; i < ticks; i++) {
      for (const s of starts) w.observeStart(s);
      now += OPTS.tickMs;
      w.tick(load);
    }
  };
  return { w, lines, run, now: () => now, msgs: () => lines.map((l) => `${l.level}: ${String(l.msg).split(":")[0]}`) };
}

describe("the saturation verdict", () => {
  test("a check waiting for a slot longer than the bound: one warning with the figures", () => {
    const { w, lines, run } = watch();
    run(3, [5, 5]);
    expect(w.saturated).toBe(false);
    run(1, [5], { inFlight: 10, maxConcurrent: 10, waiting: 29, oldestWaitMs: 1500, askedPerSec: 5000 });
    expect(w.saturated).toBe(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", component: "scheduler", in_flight: 10, max_concurrent: 10, waiting: 29, oldest_wait_ms: 1500, checks_per_sec_asked: 5000, bound_ms: 1000 });
    expect(String(lines[0]!.msg)).toContain("not starting on time");
    expect(w.report()).toMatchObject({ saturated: true, waiting: 29, in_flight: 10 });
  });

  test("more than 1% of starts later than the bound saturates; 1% does not", () => {
    const a = watch();
    a.run(1, [...new Array(99).fill(3), 1500]);
    expect(a.w.saturated).toBe(false);
    const b = watch();
    b.run(1, [...new Array(98).fill(3), 1500, 1500]);
    expect(b.w.saturated).toBe(true);
    expect(b.w.report().lateness_p99_ms).toBe(1500);
  });

  test("it ends only after a whole quiet window; starts between half the bound and the bound keep it; reminders meanwhile", () => {
    const { w, run, msgs } = watch();
    run(1, [2000]);
    expect(w.saturated).toBe(true);
    // later than half the bound: not quiet, however long it lasts
    run(70, [600]);
    expect(w.saturated).toBe(true);
    expect(msgs().filter((m) => m.startsWith("warn: still saturated"))).toHaveLength(1);
    // quiet, but not yet for a whole window
    run(9, [5]);
    expect(w.saturated).toBe(true);
    run(1, [5]);
    expect(w.saturated).toBe(false);
    expect(msgs()).toEqual(["warn: saturated", "warn: still saturated", "info: saturation over"]);
    run(20, [5]);
    expect(msgs()).toHaveLength(3);
  });

  test("latency verdicts are set aside for checks that started late, ran during saturation, or overlapped its end", () => {
    const { w, run, now } = watch();
    const degraded = (startedAt: number): CheckResult => ({ ...emptyResult(startedAt), latency_ms: 300, status: "degraded", degraded_reason: latencyReason(300, 100) });
    // on time, no saturation: judged
    expect(w.judge(degraded(now()), 100, now(), 5).status).toBe("degraded");
    // started later than the bound: not judged
    const late = w.judge(degraded(now()), 100, now(), 1600);
    expect(late).toMatchObject({ status: "up", degraded_reason: null });
    expect(late.error_message).toBe("latency 300 ms above 100 ms not judged: measured while this Vigil instance was saturated (this check started 1.6 s late)");
    // started before a saturation that has ended since: not judged
    const startedBefore = now();
    run(1, [2000]);
    expect(w.judge(degraded(now()), 100, now(), 5).status).toBe("up");
    run(11, [5]);
    expect(w.saturated).toBe(false);
    expect(w.judge(degraded(startedBefore), 100, startedBefore, 5).status).toBe("up");
    // started after it ended: judged again
    expect(w.judge(degraded(now()), 100, now(), 5).status).toBe("degraded");
  });

  test("short of saturation, an excess over the limit no larger than how late checks start is not judged; a larger one is", () => {
    const { w, run, now } = watch();
    // one stall: too few late starts to move the p99, but answers read meanwhile were late too
    run(1, [...new Array(199).fill(2), 200]);
    expect(w.saturated).toBe(false);
    expect(w.report()).toMatchObject({ lateness_p99_ms: 2, lateness_max_ms: 200 });
    const degraded = (latency: number): CheckResult => ({ ...emptyResult(now()), latency_ms: latency, status: "degraded", degraded_reason: latencyReason(latency, 100) });
    const near = w.judge(degraded(280), 100, now(), 5);
    expect(near).toMatchObject({ status: "up", degraded_reason: null });
    expect(near.error_message).toBe("latency 280 ms above 100 ms not judged: this Vigil instance was running up to 200 ms behind (its checks' longest start lateness over the last 10 s), enough to account for the 180 ms over the limit");
    expect(w.judge(degraded(2000), 100, now(), 5)).toMatchObject({ status: "degraded", degraded_reason: "latency 2000 ms above 100 ms" });
  });
});

describe("a scheduler whose slots are all held", () => {
  let h: EngineHarness;
  let target: HttpTarget;
  let scheduler: Scheduler | null = null;
  afterEach(async () => {
    await scheduler?.stop(1000);
    scheduler = null;
    await target.close();
    await h.close();
  });

  test("says it is saturated, records what ran meanwhile as not judged for latency, and says when it is over", async () => {
    // /held answers only once opened, and from then on 20 ms after it is asked: every check's
    // latency is then above its 1 ms limit (a loopback answer at once may take under a millisecond)
    let open = false;
    const waiting: (() => void)[] = [];
    target = await startHttpTarget({
      "/held": async () => {
        if (!open) await new Promise<void>((resolve) => waiting.push(resolve));
        await Bun.sleep(20);
        return new Response("ok");
      },
    });
    h = await engineHarness();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push(await insertMonitor(h, { target: `${target.url}/held`, api_max_latency_ms: 1, timeout_ms: 30_000 }));
    ({ scheduler } = makeScheduler(h, { maxConcurrent: 1, saturation: { boundMs: 100, windowMs: 300, tickMs: 50, remindEveryMs: 60_000 } }));
    const sched = scheduler;
    await sched.start();

    // on a loaded machine the first start alone may already be late enough to saturate, before anything
    // waits; so the warning is taken as it comes and the held slot is read from the report once visible
    const warned = await waitFor(() => h.logs().find((l) => l.level === "warn" && String(l.msg).startsWith("saturated")));
    expect(warned).toMatchObject({ component: "scheduler", max_concurrent: 1, bound_ms: 100 });
    const held = await waitFor(() => {
      const r = sched.saturation();
      return r.waiting === 2 && r.oldest_wait_ms > 100 ? r : null;
    });
    expect(held).toMatchObject({ saturated: true, in_flight: 1, max_concurrent: 1, waiting: 2 });

    open = true;
    for (const w of waiting.splice(0)) w();
    const checks = await waitFor(async () => {
      const rows = await h.ctx.db.selectFrom("checks").selectAll().execute();
      return rows.length === 3 ? rows : null;
    });
    // each took longer than its api_max_latency_ms of 1 ms, and none is degraded for it
    for (const c of checks!) {
      expect(c).toMatchObject({ status: "up", degraded_reason: null });
      expect(c.error_message).toMatch(/^latency \d+ ms above 1 ms not judged: measured while this Vigil instance was saturated/);
    }
    expect(await waitFor(() => h.logs().some((l) => l.level === "info" && String(l.msg).startsWith("saturation over")))).toBe(true);
    expect(sched.saturation().saturated).toBe(false);
    const over = h.logs().find((l) => String(l.msg).startsWith("saturation over"))!;
    expect(over.latency_not_judged).toBe(3);
  });
});
