import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { AppContext } from "../context.ts";
import type { Service } from "../lib/service.ts";
import { openSidePool } from "../store/postgres.ts";
import { VERSION } from "../version.ts";
import { startChangeRelay } from "./change-relay.ts";
import { ClusterMembership } from "./membership.ts";

/**
 * Joins this instance to the others on its PostgreSQL database (README "Several instances"): its
 * membership and the leader lease (membership.ts), and the relay of their announcements
 * (change-relay.ts); `ctx.cluster` answers from then on. Started before every other service, so it
 * is stopped after them: the instance leaves once its last results are written. Nothing on SQLite
 * or on a probe: one instance, leading and checking everything.
 */
export async function startClusterService(ctx: AppContext): Promise<Service | null> {
  const store = ctx.store;
  if (store.engine !== "postgres" || ctx.config.role !== "leader") return null;
  const log = ctx.log.child("cluster");
  // two connections of their own: a renewal never waits behind the main pool, and one stuck on a
  // dead connection leaves the other for the next renewal
  const pool = openSidePool(store, 2);
  const membership = new ClusterMembership(
    pool.db,
    { id: randomBytes(6).toString("hex"), region: ctx.config.region, host: `${hostname()}:${ctx.config.port}`, pid: process.pid, version: VERSION },
    log,
  );
  let relay: Awaited<ReturnType<typeof startChangeRelay>>;
  try {
    await membership.start();
    relay = await startChangeRelay(ctx, store, membership.instanceId, log);
  } catch (err) {
    await membership.stop();
    await pool.close();
    throw err;
  }
  ctx.cluster = membership;
  log.info("joined the instances on the database", { ...membership.status() });
  ctx.metrics.gauge("vigil_cluster_leader", "1 while this instance holds the leadership (alert delivery, heartbeat deadlines, maintenance), else 0", () => (membership.leading ? 1 : 0));
  ctx.metrics.gauge("vigil_cluster_region_instances", "Live instances sharing this instance's region's checks, itself included once it has joined", () => membership.status().region_instances.length);
  return {
    name: "cluster",
    async stop() {
      await relay.stop();
      await membership.stop();
      await pool.close();
    },
  };
}
