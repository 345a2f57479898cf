import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { registerRuntimeMetrics } from "./runtime-metrics.ts";

/**
 * The process's Prometheus instruments, one registry per instance (tests run several in one
 * process). Parts that own a queue or a timer structure report it through `gauge` callbacks, read
 * only when /metrics is scraped, so the hot paths pay nothing for them.
 */
export interface Metrics {
  registry: Registry;
  /** checks recorded, by status, monitor type and region */
  checks: Counter<"status" | "type" | "region">;
  /** how late a scheduled check started, in seconds */
  schedulerLateness: Histogram<never>;
  /** runs skipped because the monitor's previous check was still running */
  schedulerRunsSkipped: Counter<never>;
  /** degraded-by-latency verdicts set aside because the latency was measured while saturated */
  latencyNotJudged: Counter<never>;
  /** check results dropped because more were held than the bound while the database was unreachable */
  checkResultsDropped: Counter<never>;
  /** alert delivery attempts by result (delivered, retry, failed, interrupted, dropped) */
  alertDeliveries: Counter<"result">;
  /** heartbeat pings by result (accepted, rejected, ignored, not_found, rate_limited) */
  pings: Counter<"result">;
  /** how long each WAL checkpoint took, by mode (passive, or restart when the log had grown past its bound) */
  walCheckpoint: Histogram<"mode">;
  /** API request durations, by method, route pattern and status */
  httpDuration: Histogram<"method" | "route" | "status">;
  /** a gauge whose value is read from `read` at scrape time */
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  registerRuntimeMetrics(registry);
  return {
    registry,
    checks: new Counter({ name: "vigil_checks_total", help: "Checks recorded, by status, monitor type and region", labelNames: ["status", "type", "region"], registers: [registry] }),
    schedulerLateness: new Histogram({
      name: "vigil_scheduler_lateness_seconds",
      help: "Delay between a check's due time and its start",
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    schedulerRunsSkipped: new Counter({ name: "vigil_scheduler_runs_skipped_total", help: "Runs skipped because the previous check of the monitor was still running", registers: [registry] }),
    latencyNotJudged: new Counter({
      name: "vigil_checks_latency_not_judged_total",
      help: "Checks not degraded by api_max_latency_ms because their latency was measured while the scheduler was saturated",
      registers: [registry],
    }),
    checkResultsDropped: new Counter({
      name: "vigil_check_results_dropped_total",
      help: "Check results dropped because more were held in memory than the bound while the database could not be reached",
      registers: [registry],
    }),
    alertDeliveries: new Counter({ name: "vigil_alert_deliveries_total", help: "Alert delivery attempts, by result", labelNames: ["result"], registers: [registry] }),
    pings: new Counter({ name: "vigil_heartbeat_pings_total", help: "Heartbeat pings received, by result", labelNames: ["result"], registers: [registry] }),
    walCheckpoint: new Histogram({
      name: "vigil_wal_checkpoint_duration_seconds",
      help: "Duration of each WAL checkpoint, by mode (passive; restart once the log outgrew its bound)",
      labelNames: ["mode"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "vigil_http_request_duration_seconds",
      help: "API request duration, by method, route and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    gauge(name, help, read) {
      registry.removeSingleMetric(name);
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          // a reading that fails (the store closing under a scrape) is NaN, not a failed scrape
          this.set(await Promise.resolve().then(read).catch(() => NaN));
        },
      });
    },
  };
}
