import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Scheduler } from "../../src/scheduler/scheduler.ts";
import { waitFor } from "../helpers/server.ts";
import { engineHarness, insertMonitor, type EngineHarness } from "../engine/helpers.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { makeScheduler, startControlledTarget, type ControlledTarget } from "./helpers.ts";

let h: EngineHarness;
let target: ControlledTarget;
let scheduler: Scheduler | null = null;
beforeEach(async () => {
  h = await engineHarness();
  target = await startControlledTarget(300);
});
afterEach(async () => {
  await scheduler?.stop(1000);
  scheduler = null;
  await target.close();
  await h.close();
});

const checks = async (id?: number) => {
  let q = h.ctx.db.selectFrom("checks").selectAll();
  if (id !== undefined) q = q.where("monitor_id", "=", id);
  return q.orderBy("id").execute();
};
const row = (id: number) => h.ctx.db.selectFrom("monitors").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const requestsTo = (path: string) => target.requests.filter((r) => r.path === path).length;

describe("first runs", () => {
  test("monitors created together run at once, then spread over the interval; next_run_at is stored", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push(await insertMonitor(h, { target: `${target.url}/ok`, interval_sec: 60 }));
    const started = Date.now();
    ({ scheduler } = makeScheduler(h));
    await scheduler.start();
    expect(await waitFor(async () => (await checks()).length === 40)).toBe(true);

    const next = await waitFor(async () => {
      const rows = await h.ctx.db.selectFrom("monitors").select(["id", "next_run_at", "last_checked_at", "last_status"]).execute();
      return rows.every((r) => r.next_run_at !== null && r.next_run_at > started + 1000) ? rows : null;
    });
    expect(next).not.toBeNull();
    const times = next!.map((r) => r.next_run_at!);
    for (const r of next!) {
      expect(r.last_status).toBe("up");
      expect(r.last_checked_at).not.toBeNull();
      expect(r.next_run_at).toBe(scheduler.nextRunAt(r.id));
      // 0.5 to 1.5 intervals after the first run
      expect(r.next_run_at! - r.last_checked_at!).toBeGreaterThanOrEqual(29_000);
      expect(r.next_run_at! - r.last_checked_at!).toBeLessThanOrEqual(91_000);
    }
    // spread: not bunched into one moment
    expect(new Set(times.map((t) => Math.floor(t / 1000))).size).toBeGreaterThan(20);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(40_000);
    expect(scheduler.stats()).toMatchObject({ scheduled: 40, runs: 40, skipped: 0 });
  });

  test("a stored future next_run_at is kept across a restart (one too far ahead rejoins its phase); paused and heartbeat monitors are not scheduled", async () => {
    const future = Date.now() + 45_000;
    const kept = await insertMonitor(h, { target: `${target.url}/ok`, next_run_at: future, last_checked_at: Date.now() - 15_000 });
    const paused = await insertMonitor(h, { target: `${target.url}/ok`, is_paused: 1 });
    const hb = await insertMonitor(h, { monitor_type: "heartbeat", target: null });
    const elsewhere = await insertMonitor(h, { target: `${target.url}/ok`, regions: JSON.stringify(["mars"]) });
    // interval shortened while the service was down: the stored time is days away
    const tooFar = await insertMonitor(h, { target: `${target.url}/ok`, interval_sec: 60, next_run_at: Date.now() + 3 * 86_400_000, last_checked_at: Date.now() - 15_000 });
    ({ scheduler } = makeScheduler(h));
    await scheduler.start();
    expect(scheduler.nextRunAt(kept)).toBe(future);
    expect(scheduler.nextRunAt(tooFar)! - Date.now()).toBeLessThanOrEqual(90_000);
    for (const id of [paused, hb, elsewhere]) expect(scheduler.nextRunAt(id)).toBeNull();
    expect(scheduler.stats().scheduled).toBe(2);
    expect(scheduler.stats().runs).toBe(0);
  });
});

describe("limits", () => {
  test("no more than maxConcurrent checks are in flight; waiting ones all run", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await insertMonitor(h, { target: `${target.url}/slow`, interval_sec: 60 }));
    ({ scheduler } = makeScheduler(h, { maxConcurrent: 2 }));
    await scheduler.start();
    expect(await waitFor(() => scheduler!.stats().waiting > 0 || scheduler!.stats().runs === 6)).toBeTruthy();
    expect(await waitFor(async () => (await checks()).length === 6)).toBe(true);
    expect(target.maxInFlight["/slow"]).toBe(2);
    expect(scheduler.stats()).toMatchObject({ runs: 6, in_flight: 0, waiting: 0 });
  });

  test("a monitor still running when due again is skipped, and the skip is logged and counted", async () => {
    const id = await insertMonitor(h, { target: `${target.url}/gate` });
    ({ scheduler } = makeScheduler(h, { metrics: h.ctx.metrics }));
    await scheduler.start();
    expect(await waitFor(() => target.inFlight["/gate"] === 1)).toBe(true);
    expect(scheduler.runNow(id)).toBe(true);
    expect(await waitFor(() => scheduler!.stats().skipped === 1)).toBe(true);
    expect(h.logs().some((l) => l.msg === "run skipped: the previous check is still running" && l.monitor_id === id)).toBe(true);
    expect((await h.ctx.metrics.schedulerRunsSkipped.get()).values[0]?.value).toBe(1);
    target.release();
    expect(await waitFor(async () => (await checks(id)).length === 1)).toBe(true);
    expect(target.maxInFlight["/gate"]).toBe(1);
    expect(requestsTo("/gate")).toBe(1);

    // once it finished, it can run again
    scheduler.runNow(id);
    expect(await waitFor(() => target.inFlight["/gate"] === 1)).toBe(true);
    target.release();
    expect(await waitFor(async () => (await checks(id)).length === 2)).toBe(true);
  });
});

describe("accounts share the slots", () => {
  test("one account's hanging checks hold at most its share; another account's monitor is checked while they all still hang", async () => {
    const quietAccount = (await createAccount(h.ctx.db, "quiet", "pro", Date.now())).id;
    // the busy account: more checks than there are slots, each hanging on a target that never answers
    const busy: number[] = [];
    for (let i = 0; i < 8; i++) busy.push(await insertMonitor(h, { target: `${target.url}/gate`, timeout_ms: 60_000 }));
    // the quiet account's monitor falls due once the busy checks hold their slots
    const now = Date.now();
    const quiet = await insertMonitor(h, { account_id: quietAccount, target: `${target.url}/ok`, next_run_at: now + 300, last_checked_at: now - 59_700 });
    ({ scheduler } = makeScheduler(h, { maxConcurrent: 4 }));
    await scheduler.start();
    expect(await waitFor(() => target.inFlight["/gate"] === 2 && scheduler!.stats().waiting === 6)).toBe(true);
    expect(await waitFor(async () => (await checks(quiet)).length === 1)).toBe(true);
    // meanwhile no busy check ended: all still hang, at most two at once (half of the four slots)
    expect(target.inFlight["/gate"]).toBe(2);
    expect(target.maxInFlight["/gate"]).toBe(2);
    expect(await h.ctx.db.selectFrom("checks").select("id").where("monitor_id", "in", busy).execute()).toHaveLength(0);
  });

  test("when every slot is taken, the next free one goes to the account whose turn it is, not to the longest backlog", async () => {
    const quietAccount = (await createAccount(h.ctx.db, "quiet", "pro", Date.now())).id;
    for (let i = 0; i < 6; i++) await insertMonitor(h, { target: `${target.url}/slow` });
    const now = Date.now();
    const quiet = await insertMonitor(h, { account_id: quietAccount, target: `${target.url}/ok`, next_run_at: now + 100, last_checked_at: now - 59_900 });
    // no share held back: two slots, either account may take both
    ({ scheduler } = makeScheduler(h, { maxConcurrent: 2, maxPerAccount: 2 }));
    await scheduler.start();
    expect(await waitFor(async () => (await checks(quiet)).length === 1)).toBe(true);
    expect(await waitFor(async () => (await checks()).length === 7)).toBe(true);
    // first in, first out it would have been the seventh request; in turn it comes after at most one more of the backlog
    expect(target.requests.findIndex((r) => r.path === "/ok")).toBeLessThanOrEqual(3);
  });
});

describe("starting on time", () => {
  test("a run that fell due while the timer had not fired yet starts as soon as another check finishes", async () => {
    // a clock the test moves: the scheduler's timer for the second monitor is armed for an hour
    // of real time, so only a finishing check can start it within this test
    let now = Date.now();
    await h.close();
    h = await engineHarness([], { now: () => now });
    const gated = await insertMonitor(h, { target: `${target.url}/gate` });
    const later = await insertMonitor(h, { target: `${target.url}/ok`, interval_sec: 3600, next_run_at: now + 3_000_000, last_checked_at: now - 600_000 });
    ({ scheduler } = makeScheduler(h));
    await scheduler.start();
    expect(await waitFor(() => target.inFlight["/gate"] === 1)).toBe(true);
    expect(requestsTo("/ok")).toBe(0);
    now += 3_000_001;
    target.release();
    expect(await waitFor(async () => (await checks(later)).length === 1)).toBe(true);
    expect(requestsTo("/ok")).toBe(1);
    expect((await checks(gated)).length).toBe(1);
    expect(scheduler.nextRunAt(later)).toBe(now - 1 + 3_600_000);
  });
});

describe("changes through monitor.changed", () => {
  test("interval and target edits, pause, resume and delete take effect without a restart", async () => {
    const id = await insertMonitor(h, { target: `${target.url}/ok`, interval_sec: 3600 });
    ({ scheduler } = makeScheduler(h));
    await scheduler.start();
    expect(await waitFor(async () => (await checks(id)).length === 1)).toBe(true);
    expect(scheduler.nextRunAt(id)! - Date.now()).toBeGreaterThan(1_700_000);

    // PATCH interval 3600 → 60 and a new target
    await h.ctx.db.updateTable("monitors").set({ interval_sec: 60, target: `${target.url}/other` }).where("id", "=", id).execute();
    h.ctx.events.emit("monitor.changed", { monitorId: id, accountId: h.accountId });
    expect(await waitFor(() => scheduler!.nextRunAt(id)! - Date.now() < 91_000)).toBe(true);
    expect(await waitFor(async () => (await row(id)).next_run_at === scheduler!.nextRunAt(id))).toBe(true);
    scheduler.runNow(id);
    expect(await waitFor(() => requestsTo("/other") === 1)).toBe(true);

    // pause: unscheduled, next_run_at null
    await h.ctx.db.updateTable("monitors").set({ is_paused: 1, next_run_at: null }).where("id", "=", id).execute();
    h.ctx.events.emit("monitor.changed", { monitorId: id, accountId: h.accountId });
    expect(await waitFor(() => scheduler!.nextRunAt(id) === null)).toBe(true);
    expect(scheduler.runNow(id)).toBe(false);
    expect(scheduler.stats().scheduled).toBe(0);
    await Bun.sleep(50); // let a stray next_run_at write (the bug this guards against) land
    expect((await row(id)).next_run_at).toBeNull();

    // resume: checked at once
    const before = target.requests.length;
    await h.ctx.db.updateTable("monitors").set({ is_paused: 0, last_status: "unknown", state_changed_at: Date.now() }).where("id", "=", id).execute();
    h.ctx.events.emit("monitor.changed", { monitorId: id, accountId: h.accountId });
    expect(await waitFor(() => target.requests.length === before + 1)).toBe(true);
    expect(await waitFor(async () => (await row(id)).last_status === "up")).toBe(true);
  });

  test("deleting a monitor aborts its running check and records nothing", async () => {
    const id = await insertMonitor(h, { target: `${target.url}/gate` });
    const { scheduler: s, sunk } = makeScheduler(h);
    scheduler = s;
    await s.start();
    expect(await waitFor(() => target.inFlight["/gate"] === 1)).toBe(true);
    await h.ctx.db.deleteFrom("monitors").where("id", "=", id).execute();
    h.ctx.events.emit("monitor.changed", { monitorId: id, accountId: h.accountId, deleted: true });
    expect(await waitFor(() => s.stats().in_flight === 0)).toBe(true);
    expect(sunk).toHaveLength(0);
    expect(s.stats().scheduled).toBe(0);
    expect(s.runNow(id)).toBe(false);
  });
});

describe("stop", () => {
  test("stop waits for in-flight checks until the deadline, then aborts them without recording", async () => {
    await insertMonitor(h, { target: `${target.url}/gate`, timeout_ms: 5000 });
    const { scheduler: s, sunk } = makeScheduler(h);
    await s.start();
    expect(await waitFor(() => target.inFlight["/gate"] === 1)).toBe(true);
    await s.stop(100);
    expect(s.stats().in_flight).toBe(0);
    expect(sunk).toHaveLength(0);
    expect(h.logs().some((l) => l.msg === "aborting checks still running at shutdown")).toBe(true);
  });

  test("a check that finishes within the deadline is recorded", async () => {
    const id = await insertMonitor(h, { target: `${target.url}/slow` });
    const { scheduler: s, sunk } = makeScheduler(h);
    await s.start();
    expect(await waitFor(() => target.inFlight["/slow"] === 1)).toBe(true);
    await s.stop(5000);
    expect(sunk).toHaveLength(1);
    expect((await checks(id)).length).toBe(1);
  });
});
