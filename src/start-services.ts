import type { Service } from "./lib/service.ts";
import type { AppContext } from "./context.ts";
import { leaderOnly } from "./cluster/leader-only.ts";
import { startClusterService } from "./cluster/service.ts";
import { startCheckpointer } from "./store/checkpointer.ts";
import { startHeartbeatService } from "./heartbeat/service.ts";
import { startFollowupService } from "./engine/followup-service.ts";
import { HeldResults } from "./engine/held-results.ts";
import { followWindowChanges, startWindowBoundaries } from "./engine/window-boundaries.ts";
import { recordCheckResult } from "./engine/record-check.ts";
import { startNotifyService } from "./notify/service.ts";
import { startStatusMailer } from "./notify/status-mailer.ts";
import { startPeerLeaderService } from "./peers/leader/service.ts";
import { startProbeServices } from "./peers/probe/service.ts";
import { maintenanceService, startSchedulerService } from "./scheduler/service.ts";
import { countOpenIncidents } from "./store/incident-queries.ts";
import { startWebService } from "./web/service.ts";

/**
 * The long-running parts of a process besides the HTTP server start here, in one place, so `serve`
 * and the tests start the same set; they are stopped in reverse order on shutdown.
 */
export async function startServices(ctx: AppContext, o: { heldResultsLimit?: number } = {}): Promise<Service[]> {
  const services: Service[] = [];
  if (ctx.store.engine === "sqlite") {
    // WAL checkpoints on a worker, off the event loop; stopped after the write queue's last flush
    const checkpointer = await startCheckpointer(ctx.store, {
      log: ctx.log.child("store"),
      onCheckpoint: (seconds, restarted) => ctx.metrics.walCheckpoint.observe({ mode: restarted ? "restart" : "passive" }, seconds),
    });
    ctx.metrics.gauge("vigil_wal_frames", "Pages in the SQLite write-ahead log after the last checkpoint", () => checkpointer.stats.walFrames);
    services.push({ name: "checkpointer", stop: () => checkpointer.stop() });
  }
  // on PostgreSQL, the other instances on the database: who leads, which checks are this one's
  // (README "Several instances"); stopped after everything that writes, it leaves last
  const cluster = await startClusterService(ctx);
  if (cluster) services.push(cluster);
  // first in, so stopped last: every producer of writes has stopped before the queue is flushed
  services.push({ name: "write-queue", stop: () => ctx.writes.close() });
  const log = ctx.log.child("cluster");
  // the alert outbox is the leader's (the one instance leading, with several); started before the
  // producers of alerts, so stopped after them
  if (ctx.config.role === "leader") services.push(await leaderOnly(ctx.cluster, "notify", () => startNotifyService(ctx), log));
  // heartbeat pings and deadlines are the leader's: probes only run active checks. With several
  // instances every one takes pings; the leading one judges the deadlines
  if (ctx.config.role === "leader") services.push(await startHeartbeatService(ctx));
  // status page subscription mail, when --smtp-url is set: the leader's, as the alert outbox is.
  // Every mail links to --base-url, so without one nothing is sent (README "Email subscriptions")
  if (ctx.config.role === "leader" && ctx.config.smtpUrl && ctx.config.baseUrlFixed) services.push(await leaderOnly(ctx.cluster, "status-mail", () => startStatusMailer(ctx), log));
  else if (ctx.config.role === "leader" && ctx.config.smtpUrl) ctx.log.child("status-mail").warn("status page subscriptions are off until --base-url is set: the links in their mail must lead to this instance, and without it Vigil does not know its public address");
  // reminders and escalations of open incidents are the leader's too, queued into the outbox
  if (ctx.config.role === "leader") services.push(await leaderOnly(ctx.cluster, "followups", () => startFollowupService(ctx), log));
  if (ctx.config.role === "leader") {
    // maintenance windows (README "Maintenance windows"): the ends of their spans are acted on by
    // the leading instance; what a change of a window ends, by the instance that made the change
    services.push(followWindowChanges(ctx));
    services.push(await leaderOnly(ctx.cluster, "maintenance-windows", () => startWindowBoundaries(ctx), log));
  }
  if (ctx.config.role === "leader") {
    ctx.metrics.gauge("vigil_incidents_open", "Incidents open now, across every account", () => countOpenIncidents(ctx.db));
    // local checks run in this instance's --region (its share of them, with several instances) and go straight to the engine; while the
    // database cannot be reached their results wait in memory (stopped after the scheduler)
    const held = new HeldResults(async (id, region, result) => void (await recordCheckResult(ctx, id, region, result)), {
      log: ctx.log.child("engine"),
      limit: o.heldResultsLimit,
      onDropped: (n) => ctx.metrics.checkResultsDropped.inc(n),
    });
    ctx.metrics.gauge("vigil_check_results_held", "Check results waiting in memory for the database to come back", () => held.size);
    services.push({ name: "held-results", stop: (deadlineMs) => held.stop(deadlineMs) });
    const scheduler = await startSchedulerService(ctx, (id, region, result) => held.record(id, region, result));
    services.push(scheduler);
    services.push(await leaderOnly(ctx.cluster, "maintenance", async () => maintenanceService(ctx), log));
    // the /peer/v1 endpoints: probes pull definitions and push results
    services.push(startPeerLeaderService(ctx));
    // dashboard and status pages: the leader holds the data they show, and says when checks run late
    services.push(startWebService(ctx, { saturation: () => scheduler.scheduler.saturation() }));
  }
  // a probe: the leader's feed, the same scheduler and probes, a spool and its pusher
  if (ctx.config.role === "probe") services.push(...(await startProbeServices(ctx)));
  return services;
}
