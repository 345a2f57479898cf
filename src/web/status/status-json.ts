import { publicErrorWording } from "../../domain/error-wording.ts";
import type { StatusData, StatusIncident, StatusMaintenance, StatusUpdate } from "../../services/public-status.ts";

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
  const maintenance = (w: StatusMaintenance) => ({
    name: w.name,
    description: w.description,
    starts_at: toIso(w.from),
    ends_at: toIso(w.until),
    active: w.active,
    monitors: w.monitorNames,
  });
  const update = (u: StatusUpdate) => ({ title: u.title, body: u.body, kind: u.kind, status: u.status, published_at: toIso(u.publishedAt), affected: u.affected });
  return {
    page: { name: d.page.name, slug: d.page.slug, headline: d.page.headline, description: d.page.description },
    status: d.overall,
    monitors: d.monitors.map((m) => ({
      name: m.name,
      status: m.state,
      uptime_90d: m.uptime === null ? null : Math.floor(m.uptime * 1_000_000) / 10_000,
      avg_latency_ms_24h: m.measuresLatency ? m.avgLatency : null,
      maintenance_until: toIso(m.maintenanceUntil),
    })),
    maintenance: d.maintenance.map(maintenance),
    incidents: { open: d.open.map(incident), recent: d.recent.map(incident) },
    updates: { open: d.openUpdates.map(update), recent: d.recentUpdates.map(update) },
  };
}
