/**
 * Heartbeat deadlines written by pings other instances took reach the leader's timers
 * (src/heartbeat/deadline-follower.ts, README "Several instances"): two instances' contexts on one
 * real PostgreSQL, each with its membership; a deadline written to a monitor row, as the ping path
 * of another instance writes it, is read by the leader once it is near and by nobody else; the
 * instance that takes the leadership over reads every pending deadline at once.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { followHeartbeatDeadlines } from "../../src/heartbeat/deadline-follower.ts";
import { ClusterMembership } from "../../src/cluster/membership.ts";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox, type AppContext } from "../../src/context.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";
import { postgresAvailable, type PostgresServer } from "../helpers/postgres.ts";
import { tempDir, waitFor } from "../helpers/server.ts";

const POLL_MS = 100;

interface Instance {
  ctx: AppContext;
  membership: ClusterMembership;
  set: [number, number][];
  evaluated: number[];
  stopFollower(): void;
  close(): Promise<void>;
}

/** starting the suite's PostgreSQL server (the first file to need it does) takes seconds on a loaded machine */
const HOOK_TIMEOUT_MS = 60_000;

// several instances exist on PostgreSQL only: `npm run test:postgres` runs these, on the suite\'s server
describe.skipIf(TEST_ENGINE !== "postgres" || !postgresAvailable("heartbeat deadline follower tests"))("heartbeat deadlines on the leader", () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await testCluster();
  }, HOOK_TIMEOUT_MS);

  async function instance(url: string, id: string): Promise<Instance> {
    const dataDir = tempDir("vigil-follower-");
    const config = loadConfig(["--data", dataDir, "--database-url", url], {});
    const store = await openPostgresStore(url, { poolSize: 4 });
    const log = createLogger("silent");
    const ctx = buildContext({ config, store, log, clock: { now: () => Date.now() }, secrets: loadSecretBox(dataDir, null) });
    const membership = new ClusterMembership(store.db, { id, region: "local", host: "test:0", pid: process.pid, version: "test" }, log, { leaseMs: 1500, renewMs: 200, marginMs: 400 });
    await membership.start();
    ctx.cluster = membership;
    const set: [number, number][] = [];
    const evaluated: number[] = [];
    const follower = followHeartbeatDeadlines(ctx, { set: (m, at) => set.push([m, at]), evaluate: (ids) => evaluated.push(...ids) }, POLL_MS);
    return {
      ctx,
      membership,
      set,
      evaluated,
      stopFollower: () => follower.stop(),
      async close() {
        follower.stop();
        await membership.stop();
        await ctx.writes.close();
        await store.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }

  test("the leader reads deadlines other instances wrote once they are near; the one taking over reads them all", async () => {
    const url = await pg.createDatabase();
    const a = await instance(url, "a");
    const b = await instance(url, "b");
    try {
      expect(a.membership.leading).toBe(true);
      const now = Date.now();
      const account = await createAccount(a.ctx.db, "acme", "pro", now);
      const heartbeat = (name: string, status: string) =>
        a.ctx.db
          .insertInto("monitors")
          .values({ account_id: account.id, name, monitor_type: "heartbeat", heartbeat_token: `tok-${name}`, interval_sec: 60, timeout_ms: 1000, created_at: now, updated_at: now, last_status: status })
          .returning("id")
          .executeTakeFirstOrThrow()
          .then((r) => r.id);
      const near = await heartbeat("near", "up");
      const far = await heartbeat("far", "up");

      // as a ping taken on another instance writes them
      const nearAt = Date.now() + 2000;
      const farAt = Date.now() + 600_000;
      await a.ctx.db.updateTable("monitors").set({ heartbeat_deadline_at: nearAt }).where("id", "=", near).execute();
      await a.ctx.db.updateTable("monitors").set({ heartbeat_deadline_at: farAt }).where("id", "=", far).execute();
      expect(await waitFor(() => a.set.some(([m, at]) => m === near && at === nearAt), { timeoutMs: 3000, intervalMs: 20 })).toBe(true);
      // the far one is not read yet: only deadlines about to fall due are polled
      expect(a.set.some(([m]) => m === far)).toBe(false);
      // the instance that does not lead reads nothing
      expect(b.set).toEqual([]);
      expect(b.evaluated).toEqual([]);

      // the leader goes: the next one reads every pending deadline, the far one included
      a.stopFollower();
      await a.membership.stop();
      expect(await waitFor(() => b.membership.leading, { timeoutMs: 5000, intervalMs: 20 })).toBe(true);
      expect(await waitFor(() => b.set.some(([m, at]) => m === far && at === farAt), { timeoutMs: 3000, intervalMs: 20 })).toBe(true);
      expect(b.set.some(([m, at]) => m === near && at === nearAt)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
