import { readFileSync } from "node:fs";
import type { AppContext } from "../context.ts";
import type { Service } from "../lib/service.ts";
import { dbMonitorSource, type MonitorSource } from "./db-source.ts";
import { startMaintenance } from "./maintenance.ts";
import { patternThread } from "./pattern-thread.ts";
import { Scheduler, type ResultSink, type SchedulerOptions } from "./scheduler.ts";

/** PEM text of --extra-ca, read once; a missing file stops the start with a message naming it. */
export function readExtraCa(path: string | null): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read --extra-ca file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/**
 * The check scheduler as a service: region from --region, concurrency from
 * --max-concurrent-checks and --max-concurrent-checks-per-account, results to `sink` (the engine on the leader; a probe's spool later).
 */
export async function startSchedulerService(
  ctx: AppContext,
  sink: ResultSink,
  source: MonitorSource = dbMonitorSource(ctx, ctx.config.region, (id) => ctx.cluster.owns(id)),
  extra: Partial<SchedulerOptions> = {},
): Promise<Service & { scheduler: Scheduler }> {
  const log = ctx.log.child("scheduler");
  // checks' regular expressions match on a worker, account by account, bounded by each check's
  // deadline and --pattern-time-limit-ms
  const patterns = patternThread(ctx.log.child("patterns"), { timeLimitMs: ctx.config.patternTimeLimitMs });
  const scheduler = new Scheduler({
    region: ctx.config.region,
    sink,
    source,
    clock: ctx.clock,
    log,
    maxConcurrent: Math.max(1, ctx.config.maxConcurrentChecks),
    maxPerAccount: ctx.config.maxConcurrentChecksPerAccount,
    events: ctx.events,
    extraCa: readExtraCa(ctx.config.extraCaFile),
    rdapBootstrapUrl: ctx.config.rdapBootstrapUrl ?? undefined,
    // on the leader the instance flag is the accounts' default, applied through each monitor's account
    // rule; a probe's own flag refuses private targets whatever the leader's accounts say
    blockPrivateTargets: ctx.config.role === "probe" && ctx.config.blockPrivateTargets,
    metrics: ctx.metrics,
    patterns,
    ...extra,
  });
  // the monitors this instance checks changed as a whole: an instance of its region came or went
  // (README "Several instances"), or changes made on other instances may have been missed. Heard
  // from before the start, so a change while the monitors load (a join's share, with many of them)
  // is applied once they are
  let starting: string[] | null = [];
  const reconcile = (why: string) => {
    if (starting) return void starting.push(why);
    void scheduler.reconcile().then(
      (r) => log.info("scheduled monitors brought up to date", { reason: why, ...r }),
      (err) => log.error("reloading the scheduled monitors failed", { reason: why, error: String(err) }),
    );
  };
  const offShare = ctx.cluster.onShareChange(() => reconcile("share changed"));
  const offResync = ctx.events.on("monitors.resync", () => reconcile("resync"));
  try {
    await scheduler.start();
  } catch (err) {
    offShare();
    offResync();
    await patterns.stop();
    throw err;
  }
  const missed = starting;
  starting = null;
  if (missed.length > 0) reconcile([...new Set(missed)].join(", "));
  ctx.metrics.gauge("vigil_scheduler_monitors", "Monitors this instance checks: its region's, or its share of them with several instances", () => scheduler.stats().scheduled);
  ctx.metrics.gauge("vigil_scheduler_checks_in_flight", "Checks running now", () => scheduler.stats().in_flight);
  ctx.metrics.gauge("vigil_scheduler_checks_waiting", "Due checks waiting for a free slot", () => scheduler.stats().waiting);
  ctx.metrics.gauge("vigil_scheduler_saturated", "1 while checks are not starting on time (start lateness p99 or a wait for a slot over the bound), else 0", () => (scheduler.saturation().saturated ? 1 : 0));
  ctx.metrics.gauge("vigil_scheduler_recent_lateness_p99_seconds", "Start lateness p99 over the last 10 s, as of the last saturation verdict", () => scheduler.saturation().lateness_p99_ms / 1000);
  ctx.metrics.gauge("vigil_scheduler_oldest_wait_seconds", "How long the longest-waiting due check has waited for a free slot, as of the last saturation verdict", () => scheduler.saturation().oldest_wait_ms / 1000);
  ctx.metrics.gauge("vigil_write_queue_length", "Writes waiting for the next group commit", () => ctx.writes.length);
  return {
    name: "scheduler",
    scheduler,
    ready: () => scheduler.running,
    status: () => ({ monitors: scheduler.stats().scheduled }),
    stop: async (deadlineMs) => {
      offShare();
      offResync();
      await scheduler.stop(deadlineMs);
      await patterns.stop();
    },
  };
}

export function maintenanceService(ctx: AppContext): Service {
  const job = startMaintenance(ctx);
  return { name: "maintenance", stop: (deadlineMs) => job.stop(deadlineMs) };
}
