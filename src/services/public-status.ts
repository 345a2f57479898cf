import type { AppContext } from "../context.ts";
import { spanHolds } from "../domain/maintenance-schedule.ts";
import { displayState, type DisplayState } from "../domain/display-state.ts";
import { isValidSlug } from "../domain/slug.ts";
import { isInstanceHost } from "../domain/status-page-schema.ts";
import { isOpenUpdate, type IncidentStatus, type UpdateKind } from "../domain/status-page-update-schema.ts";
import { bucketStart, DAY_MS, HOUR_MS, uptimeOf } from "../domain/uptime.ts";
import { expiryWarnDays } from "../domain/expiry-stage.ts";
import { inActiveWindow, windowsAround } from "../store/maintenance-windows.ts";
import { dailyCounts, findStatusPageByDomain, findStatusPageBySlug, hourlyLatency, pageIncidents, pageMonitor, pageMonitors } from "../store/status-history.ts";
import { groupsAmong } from "../store/groups.ts";
import { monitorIdsByUpdate, shownUpdates } from "../store/status-page-updates.ts";
import type { IncidentRow, StatusPageRow, StatusPageUpdateRow } from "../store/tables.ts";

/**
 * What visitors of a status page see (README "Status pages"): the page found by slug or custom
 * domain, and its monitors' states, uptime bars, response times and incidents. Who may see a page
 * (public, private, access token) is decided by the web layer before it asks for the data.
 */
export const BAR_DAYS = 90;
export const SPARK_HOURS = 24;
/** Resolved incidents shown: those that started in the last two weeks; and updates published since. */
export const RECENT_DAYS = 14;
/** Updates read for the page at most: the open ones and the recent ones, newest first. */
const SHOWN_UPDATES = 50;
/** Maintenance windows shown: those in effect, and those that start within a week. */
export const UPCOMING_MAINTENANCE_DAYS = 7;

export interface PublicStatusPage {
  id: number;
  accountId: number;
  name: string;
  slug: string;
  headline: string | null;
  description: string | null;
  isPublic: boolean;
  isEnabled: boolean;
  isTokenProtected: boolean;
  accessToken: string | null;
  theme: string;
  createdAt: number;
}

/** One segment of an uptime bar: a UTC day and its uptime (null: no checks that day). */
export interface DaySegment {
  day: number;
  uptime: number | null;
}

export interface StatusMonitor {
  id: number;
  name: string;
  groupId: number | null;
  /** false for heartbeat monitors: a ping has no response time to show */
  measuresLatency: boolean;
  /** as every surface shows it (domain/display-state.ts): "maintenance" while its switch or a window holds it */
  state: DisplayState;
  /** the end of the maintenance window holding it now, or null */
  maintenanceUntil: number | null;
  days: DaySegment[];
  uptime: number | null;
  latency: (number | null)[];
  avgLatency: number | null;
}

/** An incident as visitors see it: the error code is shown in plain words, never the check's message. */
export interface StatusIncident {
  id: number;
  monitorName: string;
  status: string;
  startedAt: number;
  resolvedAt: number | null;
  durationMs: number | null;
  errorCode: string | null;
}

/** A maintenance window as visitors see it: in effect now, or starting within a week; the page's monitors it holds. */
export interface StatusMaintenance {
  name: string;
  description: string | null;
  from: number;
  until: number;
  active: boolean;
  monitorNames: string[];
}

/** An update written by people, as visitors see it: its text is shown as text, never as HTML. */
export interface StatusUpdate {
  id: number;
  title: string;
  body: string;
  kind: UpdateKind;
  status: IncidentStatus | null;
  publishedAt: number;
  updatedAt: number;
  /** whether it was changed after it was written (a later status, a corrected text) */
  edited: boolean;
  /** names of the affected monitors still on the page, in page order */
  affected: string[];
}

/**
 * The page's monitors in sections (README "Groups, tags and status page updates"): one per group, in
 * the groups' order, then the ungrouped ones (name null); each in page order. A page whose monitors
 * are in no group has one section, named null.
 */
export interface StatusSection {
  name: string | null;
  /** its monitors' state taken together, as the page's overall state is */
  state: StatusData["overall"];
  monitors: StatusMonitor[];
}

export interface StatusData {
  page: PublicStatusPage;
  overall: "up" | "degraded" | "down" | "unknown";
  monitors: StatusMonitor[];
  sections: StatusSection[];
  open: StatusIncident[];
  recent: StatusIncident[];
  /** open incident updates (shown at the top), then those published in the last RECENT_DAYS */
  openUpdates: StatusUpdate[];
  recentUpdates: StatusUpdate[];
  maintenance: StatusMaintenance[];
}

function publicPage(r: StatusPageRow): PublicStatusPage {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    slug: r.slug,
    headline: r.headline,
    description: r.description,
    isPublic: r.is_public === 1,
    isEnabled: r.is_enabled === 1,
    isTokenProtected: r.is_token_protected === 1,
    accessToken: r.access_token,
    theme: r.public_theme,
    createdAt: r.created_at,
  };
}

export async function publicPageBySlug(ctx: AppContext, slug: string): Promise<PublicStatusPage | undefined> {
  if (!isValidSlug(slug)) return undefined;
  const row = await findStatusPageBySlug(ctx.db, slug);
  return row && publicPage(row);
}

/**
 * The page whose custom_domain is `host` (lower case, without port or trailing dot), unless `host`
 * is one of the instance's own (a page an older build let claim one does not take the instance's
 * `/` over).
 */
export async function publicPageByHost(ctx: AppContext, host: string): Promise<PublicStatusPage | undefined> {
  if (!host || !host.includes(".") || isInstanceHost(host, ctx.config.ownHostNames)) return undefined;
  const row = await findStatusPageByDomain(ctx.db, host);
  return row && publicPage(row);
}

/** The page's overall state: down if any monitor is down, degraded if any is degraded, up if all are up. */
function overallState(states: string[]): StatusData["overall"] {
  const active = states.filter((s) => s !== "paused" && s !== "maintenance");
  if (active.length === 0) return states.length ? "up" : "unknown";
  if (active.includes("down")) return "down";
  if (active.includes("degraded")) return "degraded";
  if (active.every((s) => s === "up")) return "up";
  return active.includes("up") ? "up" : "unknown";
}

/** Everything a status page shows, in a fixed number of queries whatever the number of monitors. */
export async function loadStatusData(ctx: AppContext, page: PublicStatusPage): Promise<StatusData> {
  const now = ctx.clock.now();
  const monitors = await pageMonitors(ctx.db, page.id);
  const ids = monitors.map((m) => m.id);
  const firstDay = bucketStart(now, "d") - (BAR_DAYS - 1) * DAY_MS;
  const firstHour = bucketStart(now, "h") - (SPARK_HOURS - 1) * HOUR_MS;
  const [counts, latency, incidents, windows] = await Promise.all([
    dailyCounts(ctx.pings, ids, firstDay, now + 1),
    hourlyLatency(ctx.pings, ids, firstHour, now + 1),
    pageIncidents(ctx.db, ids, now - RECENT_DAYS * DAY_MS, 50),
    windowsAround(ctx.db, ids, now, now + UPCOMING_MAINTENANCE_DAYS * DAY_MS),
  ]);
  // the page's monitors an active window holds, until when (the latest end when several hold one)
  const heldUntil = new Map<number, number>();
  const names = new Map(monitors.map((m) => [m.id, m.name]));
  const maintenance: StatusMaintenance[] = windows.map(({ row, monitorIds }) => {
    const active = spanHolds({ from: row.active_from, until: row.active_until }, now);
    if (active) for (const id of monitorIds) heldUntil.set(id, Math.max(heldUntil.get(id) ?? 0, row.active_until!));
    return { name: row.name, description: row.description, from: row.active_from!, until: row.active_until!, active, monitorNames: monitorIds.map((id) => names.get(id) ?? "") };
  });
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
    const until = heldUntil.get(m.id) ?? null;
    const state = displayState(m, until !== null);
    return {
      id: m.id, name: m.name, groupId: m.group_id, measuresLatency: m.monitor_type !== "heartbeat", state, maintenanceUntil: until,
      days, uptime: uptimeOf(total).uptime, latency: points, avgLatency: n ? Math.round(sum / n) : null,
    };
  });
  const incident = (r: IncidentRow) => statusIncident(r, names);
  // a monitor in maintenance is not an ongoing incident: the Maintenance list says what holds it
  const notHeld = new Set(out.filter((m) => m.state !== "maintenance").map((m) => m.id));
  const [sections, updates] = await Promise.all([sectionsOf(ctx, page.accountId, out), pageUpdates(ctx, page.id, names, now)]);
  return {
    page,
    overall: overallState(out.map((m) => m.state)),
    monitors: out,
    sections,
    open: incidents.filter((i) => i.status === "open" && notHeld.has(i.monitor_id)).map(incident),
    recent: incidents.filter((i) => i.status !== "open").slice(0, 20).map(incident),
    openUpdates: updates.filter(isOpenUpdate),
    recentUpdates: updates.filter((u) => !isOpenUpdate(u) && u.publishedAt >= now - RECENT_DAYS * DAY_MS),
    maintenance,
  };
}

/** `r` as visitors see it; `names` are the page's monitors (id → name). */
export function statusIncident(r: IncidentRow, names: Map<number, string>): StatusIncident {
  return {
    id: r.id,
    monitorName: names.get(r.monitor_id) ?? "",
    status: r.status,
    startedAt: r.started_at,
    resolvedAt: r.resolved_at,
    durationMs: r.duration_ms,
    errorCode: r.last_error_code,
  };
}

async function sectionsOf(ctx: AppContext, accountId: number, monitors: StatusMonitor[]): Promise<StatusSection[]> {
  const groupIds = [...new Set(monitors.map((m) => m.groupId).filter((id): id is number => id !== null))];
  const groups = await groupsAmong(ctx.db, accountId, groupIds);
  const section = (name: string | null, of: StatusMonitor[]): StatusSection => ({ name, state: overallState(of.map((m) => m.state)), monitors: of });
  const sections = groups.map((g) => section(g.name, monitors.filter((m) => m.groupId === g.id)));
  const known = new Set(groups.map((g) => g.id));
  const rest = monitors.filter((m) => m.groupId === null || !known.has(m.groupId));
  if (rest.length || sections.length === 0) sections.push(section(null, rest));
  return sections;
}

/** `row` as visitors see it; `names` are the page's monitors (id → name, in page order). */
export function statusUpdate(row: StatusPageUpdateRow, affectedIds: number[], names: Map<number, string>): StatusUpdate {
  const affected = new Set(affectedIds);
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    kind: row.kind as UpdateKind,
    status: row.status as IncidentStatus | null,
    publishedAt: row.published_at,
    updatedAt: row.updated_at,
    edited: row.updated_at > row.created_at + 60_000,
    affected: [...names].filter(([id]) => affected.has(id)).map(([, name]) => name),
  };
}

async function pageUpdates(ctx: AppContext, pageId: number, names: Map<number, string>, now: number): Promise<StatusUpdate[]> {
  const rows = await shownUpdates(ctx.db, pageId, now - RECENT_DAYS * DAY_MS, now, SHOWN_UPDATES);
  const affected = await monitorIdsByUpdate(ctx.db, rows.map((r) => r.id));
  return rows.map((r) => statusUpdate(r, affected.get(r.id) ?? [], names));
}

/** What one monitor's badges show (README "Badges"). */
export interface BadgeData {
  state: DisplayState;
  measuresLatency: boolean;
  /** uptime over the last `days` UTC days, today included; null: no checks */
  uptime: number | null;
  /** mean response time over the last 24 hours; null: none measured */
  avgLatency: number | null;
  /** the certificate's (or a domain monitor's registration's) expiry, as last seen; null: none */
  expiresAt: number | null;
  warnDays: number;
  now: number;
}

/** The figures of one monitor on the page; undefined when the page does not show it. */
export async function loadBadgeData(ctx: AppContext, page: PublicStatusPage, monitorId: number, days: number): Promise<BadgeData | undefined> {
  const m = await pageMonitor(ctx.db, page.id, monitorId);
  if (!m) return undefined;
  const now = ctx.clock.now();
  const firstDay = bucketStart(now, "d") - (days - 1) * DAY_MS;
  const measuresLatency = m.monitor_type !== "heartbeat";
  const [counts, latency, held] = await Promise.all([
    dailyCounts(ctx.pings, [m.id], firstDay, now + 1),
    measuresLatency ? hourlyLatency(ctx.pings, [m.id], now - 24 * HOUR_MS, now + 1) : null,
    inActiveWindow(ctx.db, m.id, now),
  ]);
  const total = { up: 0, degraded: 0, down: 0 };
  for (const c of counts.get(m.id)?.values() ?? []) (total.up += c.up), (total.degraded += c.degraded), (total.down += c.down);
  let sum = 0, n = 0;
  for (const p of latency?.get(m.id)?.values() ?? []) (sum += p.sum), (n += p.count);
  return {
    state: displayState(m, held),
    measuresLatency,
    uptime: uptimeOf(total).uptime,
    avgLatency: n ? Math.round(sum / n) : null,
    expiresAt: m.ssl_expiry_last_not_after,
    warnDays: expiryWarnDays(m),
    now,
  };
}
