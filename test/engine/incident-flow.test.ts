import { afterEach, beforeEach, expect, test } from "bun:test";
import type { Scheduler } from "../../src/scheduler/scheduler.ts";
import { waitFor } from "../helpers/server.ts";
import { makeScheduler, startControlledTarget, type ControlledTarget } from "../scheduler/helpers.ts";
import { engineHarness, insertMonitor, type EngineHarness } from "./helpers.ts";

let h: EngineHarness;
let target: ControlledTarget;
let scheduler: Scheduler;
beforeEach(async () => {
  h = await engineHarness();
  target = await startControlledTarget();
});
afterEach(async () => {
  await scheduler?.stop(1000);
  await target.close();
  await h.close();
});

const monitor = (id: number) => h.ctx.db.selectFrom("monitors").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const checks = (id: number) => h.ctx.db.selectFrom("checks").selectAll().where("monitor_id", "=", id).orderBy("id").execute();
const incidents = (id: number) => h.ctx.db.selectFrom("incidents").selectAll().where("monitor_id", "=", id).orderBy("id").execute();

test("a real target that fails and recovers: state, re-check after the first failure, incident", async () => {
  const id = await insertMonitor(h, { target: `${target.url}/ok`, interval_sec: 60, timeout_ms: 2000 });
  const states: string[] = [];
  h.ctx.events.on("monitor.state", (e) => e.monitorId === id && states.push(`${e.from}>${e.to}`));
  // the re-check delay is min(interval, 10 s); a 100 ms cap keeps the test short
  ({ scheduler } = makeScheduler(h, { recheckMaxMs: 100 }));
  await scheduler.start();

  expect(await waitFor(async () => (await monitor(id)).last_status === "up")).toBe(true);

  // the target breaks: one scheduled run sees it, the re-check confirms it without waiting an interval
  target.status.code = 500;
  scheduler.runNow(id);
  expect(await waitFor(async () => (await monitor(id)).last_status === "down")).toBe(true);
  const all = await checks(id);
  expect(all.map((c) => c.status)).toEqual(["up", "down", "down"]);
  expect(all[1]!.error_code).toBe("http_error");
  expect(all[1]!.http_code).toBe(500);
  let [inc] = await incidents(id);
  expect(inc).toMatchObject({ status: "open", failure_count: 2, last_error_code: "http_error", last_http_code: 500, root_check_id: all[2]!.id, started_at: all[2]!.checked_at });
  expect(inc!.last_error_message).toContain("500");
  // after the re-check the monitor rejoins its cadence: the next run is about an interval away
  expect(scheduler.nextRunAt(id)! - Date.now()).toBeGreaterThan(25_000);

  // still failing on the next run: counted into the open incident, no second re-check burst
  scheduler.runNow(id);
  expect(await waitFor(async () => (await incidents(id))[0]!.failure_count === 3)).toBe(true);

  // the target recovers
  target.status.code = 200;
  scheduler.runNow(id);
  expect(await waitFor(async () => (await monitor(id)).last_status === "up")).toBe(true);
  const final = await checks(id);
  expect(final.map((c) => c.status)).toEqual(["up", "down", "down", "down", "up"]);
  [inc] = await incidents(id);
  expect(inc).toMatchObject({ status: "resolved", failure_count: 3, resolved_check_id: final[4]!.id, resolved_at: final[4]!.checked_at });
  expect(inc!.duration_ms).toBe(Math.round((inc!.resolved_at! - inc!.started_at) / 1000) * 1000);
  expect(await incidents(id)).toHaveLength(1);
  expect(states).toEqual(["unknown>up", "up>degraded", "degraded>down", "down>up"]);
  expect(scheduler.stats().runs).toBe(5);
});
