/**
 * The probe role (`vigil serve --role probe --leader URL --peer-token T --region R`): the same
 * scheduler and probes as the leader, fed by the leader's definitions feed, writing results to the
 * probe's own spool, from which the pusher delivers them. No API, no accounts, no incidents here.
 */
import type { AppContext } from "../../context.ts";
import type { Service } from "../../lib/service.ts";
import { startSchedulerService } from "../../scheduler/service.ts";
import { spoolLength } from "../../store/spool.ts";
import { ProbeDefinitions } from "./definitions.ts";
import { FeedFollower, hello, ProbeConfigError } from "./feed-follower.ts";
import { probePeerTable } from "./local-sockets.ts";
import { LeaderClient, LeaderError } from "./leader-client.ts";
import { LinkState } from "./link-state.ts";
import { ResultPusher } from "./pusher.ts";
import { spoolSink } from "./spool-sink.ts";

/** How often the probe logs its health (last contact, queue length). */
export const PROBE_HEALTH_EVERY_MS = 15_000;

export async function startProbeServices(ctx: AppContext): Promise<Service[]> {
  const log = ctx.log.child("probe");
  const { leaderUrl, peerToken } = ctx.config;
  if (!leaderUrl || !peerToken) throw new ProbeConfigError("--role probe needs --leader URL and --peer-token TOKEN");
  const client = new LeaderClient(leaderUrl, peerToken);
  const link = new LinkState(ctx.clock, log);
  const defs = new ProbeDefinitions(ctx, log);
  await defs.loadCache();

  // A refused token or a wrong region stops the start with a message; an unreachable leader does
  // not: the probe runs what it has cached and spools until the leader is back.
  let greeted = false;
  try {
    await hello(ctx, client, link, log);
    greeted = true;
  } catch (err) {
    if (err instanceof ProbeConfigError) throw err;
    if (err instanceof LeaderError && err.refused) throw new ProbeConfigError(`the leader refused this probe: ${err.message}`);
    link.failed(err instanceof LeaderError ? err : new LeaderError(String(err), null, null));
    log.warn("starting without the leader: running the cached definitions and spooling results", { monitors: defs.size, leader: leaderUrl });
  }
  const follower = new FeedFollower(ctx, client, defs, link, log, greeted);
  if (greeted) {
    // the first definitions before the scheduler starts, so it starts with the current set
    await follower.pollOnce(0).catch((err) => link.failed(err instanceof LeaderError ? err : new LeaderError(String(err), null, null)));
  }

  const services: Service[] = [];
  const pusher = new ResultPusher(ctx, client, link, log);
  link.onRestored = () => pusher.leaderRestored();
  pusher.start();
  // stopped after the scheduler (services stop in reverse), so its last results still go out
  services.push({ name: "probe-pusher", stop: (deadlineMs) => pusher.stop(deadlineMs) });
  follower.start();
  services.push({ name: "probe-feed", ready: () => defs.loaded, stop: () => follower.stop() });
  services.push(await startSchedulerService(ctx, spoolSink(ctx, log, () => pusher.notify()), defs.source(), { probes: probePeerTable(ctx.config.region) }));

  const report = async () => {
    log.info("probe health", {
      leader_reachable: link.reachable,
      last_contact_at: link.lastContactAt === null ? null : new Date(link.lastContactAt).toISOString(),
      queue_length: await spoolLength(ctx.db),
      monitors: defs.size,
      skew_ms: link.skewMs,
      last_error: link.lastError,
    });
  };
  const timer = setInterval(() => void report().catch(() => {}), PROBE_HEALTH_EVERY_MS);
  timer.unref?.();
  ctx.metrics.gauge("vigil_probe_queue_length", "Results spooled on this probe, not yet acknowledged by the leader", () => pusher.queueLength);
  ctx.metrics.gauge("vigil_probe_leader_reachable", "1 while the leader answers this probe", () => (link.reachable ? 1 : 0));
  services.push({ name: "probe-health", stop: async () => clearInterval(timer) });
  log.info("probe started", { region: ctx.config.region, leader: leaderUrl, monitors: defs.size, queue_length: await spoolLength(ctx.db) });
  return services;
}
