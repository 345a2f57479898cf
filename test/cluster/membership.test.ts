/**
 * Membership and the leader lease on a real PostgreSQL (src/cluster/membership.ts, README "Several
 * instances"), with several memberships in one process and short periods: exactly one leader among
 * instances claiming at once, a clean stop handing the lease over, a leader whose renewals stall
 * giving the leadership up by itself before the lease could pass to another, regions sharing
 * their own checks only, and a late joiner waiting for the others to hand its share over.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { ClusterMembership, type MembershipTiming } from "../../src/cluster/membership.ts";
import { createLogger } from "../../src/lib/logger.ts";
import type { PostgresStore } from "../../src/store/database.ts";
import { claimLease, listLiveInstances } from "../../src/store/instances.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";
import { postgresAvailable, type PostgresServer } from "../helpers/postgres.ts";
import { waitFor } from "../helpers/server.ts";

const FAST: MembershipTiming = { leaseMs: 1500, renewMs: 200, marginMs: 400 };

/** starting the suite's PostgreSQL server (the first file to need it does) takes seconds on a loaded machine */
const HOOK_TIMEOUT_MS = 60_000;

// several instances exist on PostgreSQL only: `npm run test:postgres` runs these, on the suite\'s server
describe.skipIf(TEST_ENGINE !== "postgres" || !postgresAvailable("cluster membership tests"))("cluster membership on PostgreSQL", () => {
  let pg: PostgresServer;
  const stores: PostgresStore[] = [];
  const members: ClusterMembership[] = [];
  beforeAll(async () => {
    pg = await testCluster();
  }, HOOK_TIMEOUT_MS);
  afterAll(async () => {
    for (const m of members) await m.stop();
    for (const s of stores) await s.close();
  }, HOOK_TIMEOUT_MS);

  async function database(): Promise<{ url: string; store: PostgresStore }> {
    const url = await pg.createDatabase();
    const store = await openPostgresStore(url, { poolSize: 4 });
    stores.push(store);
    return { url, store };
  }

  function member(store: PostgresStore, id: string, region = "local", lines?: string[]): ClusterMembership {
    const log = createLogger("info", "cluster", (l) => lines?.push(l));
    const m = new ClusterMembership(store.db, { id, region, host: "test:0", pid: process.pid, version: "test" }, log, FAST);
    members.push(m);
    return m;
  }

  test("instances claiming at once: exactly one leads and all name it; every region shares only its own instances", async () => {
    const { store } = await database();
    const all = [member(store, "a1", "eu"), member(store, "b2", "eu"), member(store, "c3", "eu"), member(store, "d4", "us")];
    await Promise.all(all.map((m) => m.start()));
    // the late ones of a region join after one renewal period
    const settled = await waitFor(() => all.every((m) => m.status().region_instances.includes(m.instanceId)), { timeoutMs: 5000, intervalMs: 50 });
    expect(settled).toBe(true);
    await waitFor(() => new Set(all.map((m) => m.status().leader_instance)).size === 1, { timeoutMs: 3000, intervalMs: 50 });
    expect(all.filter((m) => m.leading).length).toBe(1);
    const leader = all.find((m) => m.leading)!.instanceId;
    for (const m of all) expect(m.status().leader_instance).toBe(leader);
    for (const m of all.slice(0, 3)) expect(m.status().region_instances).toEqual(["a1", "b2", "c3"]);
    expect(all[3]!.status().region_instances).toEqual(["d4"]);
    // each monitor of a region is checked by one of its instances
    for (let id = 1; id <= 300; id++) expect(all.slice(0, 3).filter((m) => m.owns(id)).length).toBe(1);
    expect(Array.from({ length: 300 }, (_, i) => all[3]!.owns(i + 1)).every(Boolean)).toBe(true);
    for (const m of all) await m.stop();
    expect((await listLiveInstances(store.db)).instances).toEqual([]);
  });

  test("a leader that stops hands the lease over: another takes it at its next renewal", async () => {
    const { store } = await database();
    const a = member(store, "a");
    await a.start();
    const b = member(store, "b");
    const seen: boolean[] = [];
    b.onLeadership((leading) => seen.push(leading));
    await b.start();
    expect(a.leading).toBe(true);
    expect(b.leading).toBe(false);
    await a.stop();
    expect(await waitFor(() => b.leading, { timeoutMs: 3000, intervalMs: 20 })).toBe(true);
    expect(seen).toEqual([true]);
    expect(await waitFor(() => b.status().region_instances.join() === "b", { timeoutMs: 3000, intervalMs: 20 })).toBe(true);
  });

  test("a leader whose renewals stall gives the leadership up by itself, before the lease could pass to another", async () => {
    const { url, store } = await database();
    const lines: string[] = [];
    const a = member(store, "a", "local", lines);
    await a.start();
    expect(a.leading).toBe(true);
    // another session holds the leases table: the leader's renewals wait on it
    const blocker = new SQL({ url, max: 1 });
    const locked = blocker.begin(async (tx) => {
      await tx`LOCK TABLE leases IN ACCESS EXCLUSIVE MODE`;
      const given = await waitFor(() => !a.leading, { timeoutMs: FAST.leaseMs * 3, intervalMs: 10 });
      expect(given).toBe(true);
      // given up while the database still has the lease as a's: nobody else could hold it yet
      const rows = await tx`SELECT holder, expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint AS live FROM leases`;
      expect([...rows]).toEqual([{ holder: "a", live: true }]);
    });
    await locked;
    await blocker.close();
    expect(lines.some((l) => l.includes('"msg":"leadership given up"') && l.includes("could not be renewed in time"))).toBe(true);
    // the renewals go on once the lock is gone, and it leads again
    expect(await waitFor(() => a.leading, { timeoutMs: 5000, intervalMs: 20 })).toBe(true);
  });

  test("the lease is judged by the database's clock: held until it expires there, then free to claim", async () => {
    const { store } = await database();
    expect(await claimLease(store.db, "leader", "a", 600)).toMatchObject({ holder: "a" });
    expect(await claimLease(store.db, "leader", "b", 600)).toMatchObject({ holder: "a" });
    const renewed = await claimLease(store.db, "leader", "a", 600);
    expect(renewed.holder).toBe("a");
    expect(await waitFor(async () => (await claimLease(store.db, "leader", "b", 600)).holder === "b", { timeoutMs: 3000, intervalMs: 50 })).toBe(true);
    // a new holder's tenure starts at its claim
    const b = await claimLease(store.db, "leader", "b", 600);
    expect(b.acquiredAt).toBeGreaterThan(renewed.acquiredAt!);
  });

  test("an instance joining a region with others checks nothing until they have seen it", async () => {
    const { store } = await database();
    const a = member(store, "a");
    await a.start();
    const b = member(store, "b");
    await b.start();
    const ids = Array.from({ length: 200 }, (_, i) => i + 1);
    expect(ids.some((id) => b.owns(id))).toBe(false);
    expect(ids.every((id) => a.owns(id))).toBe(true);
    // a drops b's part first, at its next renewal; b takes it after a renewal period
    expect(await waitFor(() => !ids.every((id) => a.owns(id)), { timeoutMs: 2000, intervalMs: 10 })).toBe(true);
    expect(ids.some((id) => b.owns(id))).toBe(false);
    expect(await waitFor(() => ids.some((id) => b.owns(id)), { timeoutMs: 3000, intervalMs: 10 })).toBe(true);
    for (const id of ids) expect(a.owns(id) !== b.owns(id)).toBe(true);
  });
});
