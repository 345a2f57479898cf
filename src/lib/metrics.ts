import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

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
  /** heartbeat pings by result (accepted, rejected, ignored, not_found, rate_limited) */
  pings: Counter<"result">;
  /** API request durations, by method, route pattern and status */
  httpDuration: Histogram<"method" | "route" | "status">;
  /** a gauge whose value is read from `read` at scrape time */
  gauge(name: string, help: string, read: () => number): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "vigil_" });
  // Under Bun, v8.getHeapSpaceStatistics walks the whole heap: ~55 ms per scrape with a million
  // objects, the event loop blocked meanwhile (scheduler bench profile: heapStats). The heap-space
  // breakdown goes; heap size and use (process.memoryUsage) and RSS stay.
  for (const kind of ["total", "used", "available"]) registry.removeSingleMetric(`vigil_nodejs_heap_space_size_${kind}_bytes`);
  return {
    registry,
    checks: new Counter({ name: "vigil_checks_total", help: "Checks recorded, by status, monitor type and region", labelNames: ["status", "type", "region"], registers: [registry] }),
    schedulerLateness: new Histogram({
      name: "vigil_scheduler_lateness_seconds",
      help: "Delay between a check's due time and its start",
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    pings: new Counter({ name: "vigil_heartbeat_pings_total", help: "Heartbeat pings received, by result", labelNames: ["result"], registers: [registry] }),
    httpDuration: new Histogram({
      name: "vigil_http_request_duration_seconds",
      help: "API request duration, by method, route and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    gauge(name, help, read) {
      registry.removeSingleMetric(name);
      new Gauge({ name, help, registers: [registry], collect() { this.set(read()); } });
    },
  };
}
