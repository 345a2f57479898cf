import type { AppContext } from "../../context.ts";
import { publicErrorWording } from "../../domain/error-wording.ts";
import { bucketStart, DAY_MS, HOUR_MS, uptimeOf } from "../../domain/uptime.ts";
import { dailyCounts, hourlyLatency, pageIncidents, pageMonitors } from "../../store/status-history.ts";
import type { IncidentRow, StatusPageRow } from "../../store/tables.ts";
import { displayState, type DaySegment } from "../views/widgets.ts";

export const BAR_DAYS = 90;
export const SPARK_HOURS = 24;
/** Resolved incidents shown: those that started in the last two weeks. */
export const RECENT_INCIDENT_DAYS = 14;

export interface StatusMonitor {
  id: number;
  name: string;
  state: string;
  days: DaySegment[];
  uptime: number | null;
  latency: (number | null)[];
  avgLatency: number | null;
}

export interface StatusIncident {
  row: IncidentRow;
  monitorName: string;
}

export interface StatusData {
  page: StatusPageRow;
  overall: "up" | "degraded" | "down" | "unknown";
  monitors: StatusMonitor[];
  open: StatusIncident[];
  recent: StatusIncident[];
}

/** The page's overall state: down if any monitor is down, degraded if any is degraded, up if all are up. */
export function overallState(states: string[]): StatusData["overall"] {
  const active = states.filter((s) => s !== "paused" && s !== "maintenance");
  if (active.length === 0) return states.length ? "up" : "unknown";
  if (active.includes("down")) return "down";
  if (active.includes("degraded")) return "degraded";
  if (active.every((s) => s === "up")) return "up";
  return active.includes("up") ? "up" : "unknown";
}

/** Everything a status page shows, in a fixed number of queries whatever the number of monitors. */
export async function loadStatusData(ctx: AppContext, page: StatusPageRow): Promise<StatusData> {
  const now = ctx.clock.now();
  const monitors = await pageMonitors(ctx.db, page.id);
  const ids = monitors.map((m) => m.id);
  const firstDay = bucketStart(now, "d") - (BAR_DAYS - 1) * DAY_MS;
  const firstHour = bucketStart(now, "h") - (SPARK_HOURS - 1) * HOUR_MS;
  const [counts, latency, incidents] = await Promise.all([
    dailyCounts(ctx.db, ids, firstDay, now + 1),
    hourlyLatency(ctx.db, ids, firstHour, now + 1),
    pageIncidents(ctx.db, ids, now - RECENT_INCIDENT_DAYS * DAY_MS, 50),
  ]);
  const out: StatusMonitor[] = monitors.map((m) => {
    const perDay = counts.get(m.id) ?? new Map();
    const total = { up: 0, degraded: 0, down: 0 };
    const days: DaySegment[] = [];
    for (let i = 0; i < BAR_DAYS; i++) {
      const day = firstDay + i * DAY_MS;
      const c = perDay.get(day);
      if (c) {
        total.up += c.up;
        total.degraded += c.degraded;
        total.down += c.down;
      }
      days.push({ day, uptime: c ? uptimeOf(c).uptime : null });
    }
    const perHour = latency.get(m.id) ?? new Map();
    const points: (number | null)[] = [];
    let sum = 0, n = 0;
    for (let i = 0; i < SPARK_HOURS; i++) {
      const p = perHour.get(firstHour + i * HOUR_MS);
      points.push(p ? Math.round(p.sum / p.count) : null);
      if (p) (sum += p.sum), (n += p.count);
    }
    return { id: m.id, name: m.name, state: displayState(m), days, uptime: uptimeOf(total).uptime, latency: points, avgLatency: n ? Math.round(sum / n) : null };
  });
  const names = new Map(monitors.map((m) => [m.id, m.name]));
  const withName = (row: IncidentRow) => ({ row, monitorName: names.get(row.monitor_id) ?? "" });
  return {
    page,
    overall: overallState(out.map((m) => m.state)),
    monitors: out,
    open: incidents.filter((i) => i.status === "open").map(withName),
    recent: incidents.filter((i) => i.status !== "open").slice(0, 20).map(withName),
  };
}

/** The machine-readable summary served at /s/<slug>.json: what the page shows, no check messages. */
export function statusJson(d: StatusData, toIso: (ms: number | null) => string | null) {
  const incident = (i: StatusIncident) => ({
    monitor: i.monitorName,
    status: i.row.status,
    started_at: toIso(i.row.started_at),
    resolved_at: toIso(i.row.resolved_at),
    duration_ms: i.row.duration_ms,
    cause: publicErrorWording(i.row.last_error_code),
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
