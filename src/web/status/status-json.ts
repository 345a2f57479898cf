import { publicErrorWording } from "../../domain/error-wording.ts";
import type { StatusData, StatusIncident } from "../../services/public-status.ts";

/** The machine-readable summary served at /s/<slug>.json: what the page shows, no check messages. */
export function statusJson(d: StatusData, toIso: (ms: number | null) => string | null) {
  const incident = (i: StatusIncident) => ({
    monitor: i.monitorName,
    status: i.status,
    started_at: toIso(i.startedAt),
    resolved_at: toIso(i.resolvedAt),
    duration_ms: i.durationMs,
    cause: publicErrorWording(i.errorCode),
  });
  return {
    page: { name: d.page.name, slug: d.page.slug, headline: d.page.headline, description: d.page.description },
    status: d.overall,
    monitors: d.monitors.map((m) => ({
      name: m.name,
      status: m.state,
      uptime_90d: m.uptime === null ? null : Math.floor(m.uptime * 1_000_000) / 10_000,
      avg_latency_ms_24h: m.avgLatency,
    })),
    incidents: { open: d.open.map(incident), recent: d.recent.map(incident) },
  };
}
