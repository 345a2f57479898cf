/**
 * The scheduler following its share (README "Several instances"): two schedulers on one store, as
 * two instances of a region are, each running the monitors a predicate gives it. When the share
 * moves, `reconcile()` drops what is no longer its own (a run in flight still finishes and is
 * recorded) and takes up the rest at the next run the previous owner stored, so a monitor handed
 * over keeps its cadence; nobody resets the stored next run of a monitor it hands over.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { soloCluster } from "../../src/cluster/view.ts";
import { dbMonitorSource } from "../../src/scheduler/db-source.ts";
import { startSchedulerService } from "../../src/scheduler/service.ts";
import type { Scheduler } from "../../src/scheduler/scheduler.ts";
import { engineHarness, insertMonitor, type EngineHarness } from "../engine/helpers.ts";
import { waitFor } from "../helpers/server.ts";
import { makeScheduler, startControlledTarget, type ControlledTarget } from "./helpers.ts";

let h: EngineHarness;
let target: ControlledTarget;
const running: Scheduler[] = [];
beforeEach(async () => {
  h = await engineHarness();
  target = await startControlledTarget();
});
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop(1000);
  await target.close();
  await h.close();
});

/** A scheduler running the monitors `owns` gives it, as an instance runs its share. */
function instance(owns: (id: number) => boolean): Scheduler {
  const { scheduler } = makeScheduler(h, { source: dbMonitorSource(h.ctx, h.ctx.config.region, owns) });
  running.push(scheduler);
  return scheduler;
}

const nextRuns = async () => new Map((await h.ctx.db.selectFrom("monitors").select(["id", "next_run_at"]).execute()).map((r) => [r.id, r.next_run_at]));

test("a share that moves: dropped at once by one, taken up by the other at the stored next run", async () => {
  const stored = Date.now() + 40_000;
  const ids: number[] = [];
  for (let i = 0; i < 10; i++) ids.push(await insertMonitor(h, { target: `${target.url}/ok`, next_run_at: stored + i, last_checked_at: Date.now() - 20_000 }));
  let aOwnsAll = true;
  const a = instance((id) => aOwnsAll || id % 2 === 0);
  const b = instance((id) => !aOwnsAll && id % 2 === 1);
  await a.start();
  await b.start();
  expect(a.stats().scheduled).toBe(10);
  expect(b.stats().scheduled).toBe(0);

  aOwnsAll = false;
  // one monitor changes before the share is reconciled: each reloads it by its new share
  const odd = ids.find((id) => id % 2 === 1)!;
  h.ctx.events.emit("monitor.changed", { monitorId: odd, accountId: h.accountId });
  expect(await waitFor(() => a.nextRunAt(odd) === null && b.nextRunAt(odd) !== null)).toBe(true);
  expect(await a.reconcile()).toEqual({ added: 0, removed: 4, scheduled: 5 });
  expect(await b.reconcile()).toEqual({ added: 4, removed: 0, scheduled: 5 });
  for (const [i, id] of ids.entries()) {
    const [owner, other] = id % 2 === 0 ? [a, b] : [b, a];
    expect(owner.nextRunAt(id)).toBe(stored + i);
    expect(other.nextRunAt(id)).toBeNull();
  }
  // nothing was checked early, and nobody reset a stored next run on the way
  expect(target.requests.length).toBe(0);
  await Bun.sleep(50);
  expect([...(await nextRuns()).values()]).toEqual(ids.map((_, i) => stored + i));
});

test("a monitor handed over while its check runs: the check finishes and is recorded, the new owner runs it next", async () => {
  const id = await insertMonitor(h, { target: `${target.url}/gate`, interval_sec: 60 });
  let mine = true;
  const a = instance(() => mine);
  await a.start();
  expect(await waitFor(() => target.inFlight["/gate"] === 1)).toBe(true);
  mine = false;
  expect(await a.reconcile()).toMatchObject({ removed: 1, scheduled: 0 });
  target.release();
  expect(await waitFor(async () => (await h.ctx.db.selectFrom("checks").select("id").where("monitor_id", "=", id).execute()).length === 1)).toBe(true);
  const stored = (await nextRuns()).get(id)!;
  expect(stored).toBeGreaterThan(Date.now());
  const b = instance(() => true);
  await b.start();
  expect(b.nextRunAt(id)).toBe(stored);
});

test("a change to a monitor reaches only the instance whose share it is in; a new one there runs at once", async () => {
  const a = instance((id) => id % 2 === 0);
  const b = instance((id) => id % 2 === 1);
  await a.start();
  await b.start();
  const first = await insertMonitor(h, { target: `${target.url}/ok` });
  const second = await insertMonitor(h, { target: `${target.url}/ok` });
  for (const id of [first, second]) h.ctx.events.emit("monitor.changed", { monitorId: id, accountId: h.accountId });
  expect(await waitFor(() => target.requests.length === 2)).toBe(true);
  for (const id of [first, second]) {
    const [owner, other] = id % 2 === 0 ? [a, b] : [b, a];
    expect(owner.nextRunAt(id)).not.toBeNull();
    expect(other.nextRunAt(id)).toBeNull();
  }
});

test("a share that changes while the scheduler loads its monitors is applied once they are loaded", async () => {
  const id = await insertMonitor(h, { target: `${target.url}/ok` });
  let mine = false;
  const listeners: (() => void)[] = [];
  h.ctx.cluster = { ...soloCluster(h.ctx.config.region), owns: () => mine, onShareChange: (l) => (listeners.push(l), () => {}) };
  const db = dbMonitorSource(h.ctx, h.ctx.config.region, (m) => h.ctx.cluster.owns(m));
  // the first list is read while the monitor is another instance's, and arrives after the share moved
  let read = false;
  let open = () => {};
  const gate = new Promise<void>((r) => (open = r));
  const source = {
    ...db,
    async loadAll() {
      const rows = await db.loadAll();
      read = true;
      await gate;
      return rows;
    },
  };
  const starting = startSchedulerService(h.ctx, async () => {}, source);
  expect(await waitFor(() => read)).toBe(true);
  mine = true;
  for (const l of listeners) l();
  open();
  const { scheduler } = await starting;
  running.push(scheduler);
  expect(await waitFor(() => scheduler.nextRunAt(id) !== null)).toBe(true);
});
