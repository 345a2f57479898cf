/**
 * Services that run on the leading instance only (src/cluster/leader-only.ts, README "Several
 * instances"): started with the leadership, stopped when it is lost, started again when it comes
 * back, never two at once, and one that loses the leadership while it starts is stopped right after.
 * The leadership is driven by hand through a cluster view of the test's own.
 */
import { expect, test } from "bun:test";
import { leaderOnly } from "../../src/cluster/leader-only.ts";
import { soloCluster, type ClusterView } from "../../src/cluster/view.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { waitFor } from "../helpers/server.ts";

function handCluster(initially: boolean): ClusterView & { set(leading: boolean): void } {
  const listeners = new Set<(leading: boolean) => void>();
  let leading = initially;
  return {
    ...soloCluster("local"),
    get leading() {
      return leading;
    },
    onLeadership: (l) => (listeners.add(l), () => listeners.delete(l)),
    set(next) {
      leading = next;
      for (const l of listeners) l(next);
    },
  };
}

/** A service that notes its starts and stops; each start can be held open. */
function recorder() {
  const events: string[] = [];
  let running = 0;
  let maxRunning = 0;
  let hold: Promise<void> | null = null;
  return {
    events,
    get maxRunning() {
      return maxRunning;
    },
    holdNextStart(): () => void {
      let release = () => {};
      hold = new Promise<void>((r) => (release = r));
      return release;
    },
    start: async () => {
      events.push("start");
      if (hold) await hold;
      hold = null;
      maxRunning = Math.max(maxRunning, ++running);
      return {
        name: "inner",
        async stop() {
          running--;
          events.push("stop");
        },
      };
    },
  };
}

const log = createLogger("silent");

test("started with the leadership, stopped when it is lost, started again when it comes back", async () => {
  const cluster = handCluster(false);
  const r = recorder();
  const service = await leaderOnly(cluster, "notify", r.start, log);
  expect(r.events).toEqual([]);
  cluster.set(true);
  expect(await waitFor(() => r.events.length === 1)).toBe(true);
  cluster.set(false);
  expect(await waitFor(() => r.events.length === 2)).toBe(true);
  cluster.set(true);
  expect(await waitFor(() => r.events.length === 3)).toBe(true);
  // lost and back before the stop is done: stopped, then started once more
  cluster.set(false);
  cluster.set(true);
  expect(await waitFor(() => r.events.length === 5)).toBe(true);
  expect(r.events).toEqual(["start", "stop", "start", "stop", "start"]);
  await service.stop(1000);
  expect(r.events).toEqual(["start", "stop", "start", "stop", "start", "stop"]);
  expect(r.maxRunning).toBe(1);
  // after its stop, leadership changes start nothing
  cluster.set(false);
  cluster.set(true);
  await Bun.sleep(20);
  expect(r.events.length).toBe(6);
});

test("leading from the start (always, on SQLite): started before it returns; a leadership lost while starting stops it after", async () => {
  const cluster = handCluster(true);
  const r = recorder();
  const release = r.holdNextStart();
  const starting = leaderOnly(cluster, "maintenance", r.start, log);
  cluster.set(false);
  release();
  const service = await starting;
  expect(r.events[0]).toBe("start");
  expect(await waitFor(() => r.events.join() === "start,stop")).toBe(true);
  await service.stop(1000);
  expect(r.events).toEqual(["start", "stop"]);
});

test("a first start that fails fails the caller, as a service started directly would", async () => {
  const cluster = handCluster(true);
  await expect(leaderOnly(cluster, "notify", async () => Promise.reject(new Error("no database")), log)).rejects.toThrow("no database");
});
