/**
 * The heartbeat service: the ping endpoint, the group-commit intake, the ping store and the
 * deadline timers, started once per leader process from start-services.ts.
 *
 * Start-up rebuilds the timers from monitors.heartbeat_deadline_at; a deadline that passed while the
 * server was down fires at once, and the conditional UPDATE in applyStateChange keeps a transition
 * that did commit before a crash from firing twice. `monitor.changed` (pause, resume, edits,
 * deletion, token rotation) re-evaluates the monitor without a restart.
 *
 * The ping store (store/ping-store.ts) starts first: pings an earlier run acknowledged and left
 * (SQLite's ping journal, a restored backup's) are in their rows before the timers are rebuilt, so
 * the deadlines are judged from every acknowledged ping.
 */
import type { AppContext } from "../context.ts";
import type { Service } from "../lib/service.ts";
import { nothingJournaled } from "../store/ping-journal.ts";
import { openPingStore } from "../store/ping-store.ts";
import { followHeartbeatDeadlines, loadDeadlines, type DeadlineSink } from "./deadline-follower.ts";
import { DeadlineTimers } from "./deadline-timers.ts";
import { heartbeatEndpoint } from "./endpoint.ts";
import { PingBatches, type Committed } from "./ping-batches.ts";
import { TokenCache } from "./token-cache.ts";

/** after a batch failed to commit, its evaluations are tried again this much later */
const RETRY_MS = 1000;

export async function startHeartbeatService(ctx: AppContext): Promise<Service> {
  const log = ctx.log.child("heartbeat");
  const tokens = new TokenCache(ctx.db);

  const onCommitted = (r: Committed) => {
    for (const [id, at] of r.deadlines) timers.set(id, at);
    for (const t of r.transitions) {
      log.info("transition", { monitor_id: t.monitorId, from: t.from, to: t.to, at: new Date(t.at).toISOString(), late_ms: t.lateMs });
    }
    for (const s of r.stateChanges) ctx.events.emit("monitor.state", s);
  };
  const pings = openPingStore(ctx.store, { dataDir: ctx.config.dataDir, region: ctx.config.region, writes: ctx.writes, log });
  const batches = new PingBatches(ctx, pings, {
    onCommitted,
    onEvaluateFailed: (ids) => {
      for (const id of ids) timers.set(id, ctx.clock.now() + RETRY_MS);
    },
    log,
  });
  // with several instances on PostgreSQL, only the leader judges deadlines (README "Several instances")
  const timers = new DeadlineTimers(ctx.clock, (ids) => ctx.cluster.leading && batches.evaluate(ids));
  await pings.start();
  ctx.pings = pings.reads;

  const cached = await tokens.warm();
  const sink: DeadlineSink = { set: (id, at) => timers.set(id, at), evaluate: (ids) => batches.evaluate(ids) };
  const loaded = await loadDeadlines(ctx.db, sink, ctx.clock.now());
  log.info("heartbeat timers rebuilt", { monitors: cached, deadlines: timers.size, overdue: loaded.overdue });

  // deadlines set by pings other instances took: the leader reads them from the database
  const follower = pings.sharedByInstances ? followHeartbeatDeadlines(ctx, sink) : null;

  ctx.metrics.gauge("vigil_heartbeat_deadlines", "Heartbeat monitors with a pending deadline timer", () => timers.size);
  ctx.metrics.gauge("vigil_heartbeat_queue_length", "Pings and deadline evaluations waiting to be written", () => batches.pending);
  ctx.metrics.gauge("vigil_heartbeat_journaled_pings", "Acknowledged pings in the ping journal, not yet folded into events and checks", () => pings.waiting);

  const off = ctx.events.on("monitor.changed", ({ monitorId, deleted, remote }) => {
    tokens.changed(monitorId, deleted === true).catch((err) => log.error("token cache reload failed", { monitor_id: monitorId, error: String(err) }));
    pings.forget(monitorId);
    if (deleted) timers.set(monitorId, null);
    // a change made on another instance was evaluated there
    else if (!remote) batches.evaluate([monitorId]);
  });

  const endpoint = heartbeatEndpoint(ctx, { resolveToken: (t) => tokens.resolve(t), submit: (p) => batches.submit(p) });
  return {
    name: "heartbeat",
    plugin: endpoint.plugin,
    routes: endpoint.routes,
    async stop(deadlineMs) {
      off();
      follower?.stop();
      timers.stop();
      await Promise.race([
        (async () => {
          await batches.close();
          await pings.close();
        })(),
        Bun.sleep(deadlineMs),
      ]);
      ctx.pings = nothingJournaled(ctx.db);
    },
  };
}
