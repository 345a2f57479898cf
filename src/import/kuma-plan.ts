/**
 * The whole plan for an Uptime Kuma database (README "Coming from Uptime Kuma"): its notifications,
 * monitors, maintenances and status pages as planned items, in the order apply.ts creates them, and
 * what Vigil keeps elsewhere or not at all said once as notices.
 */
import { isValidSlug } from "../domain/slug.ts";
import type { KumaData, KumaRow } from "../store/uptime-kuma-file.ts";
import { mapKumaNotification } from "./kuma-channels.ts";
import { mapKumaMonitor } from "./kuma-monitors.ts";
import { count, fitTags, NameBook, type ImportPlan, type PlannedItem } from "./plan.ts";

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);
const flag = (v: unknown): boolean => v === 1 || v === true || v === "1";
/** A text column Kuma may hold JSON-encoded ("\"Europe/Berlin\"", as its settings are stored): its text. */
function textOf(v: unknown): string | null {
  const s = str(v);
  if (!s || !/^".*"$/.test(s)) return s;
  try {
    return str(JSON.parse(s));
  } catch {
    return s;
  }
}
const byWeight = (a: KumaRow, b: KumaRow) => Number(a.weight ?? 0) - Number(b.weight ?? 0) || Number(a.id) - Number(b.id);

function linksOf(rows: KumaRow[], from: string, to: string): Map<number, number[]> {
  const links = new Map<number, number[]>();
  for (const r of rows) {
    const list = links.get(Number(r[from])) ?? [];
    list.push(Number(r[to]));
    links.set(Number(r[from]), list);
  }
  return links;
}

function channels(data: KumaData, names: NameBook): PlannedItem[] {
  return data.notifications.map((row) => {
    const notes: string[] = [];
    const mapped = mapKumaNotification(row);
    const item: PlannedItem = {
      kind: "notification_channel",
      ref: `notification ${row.id}`,
      name: names.take("notification_channel", str(row.name) ?? `Kuma notification ${row.id}`, notes),
      what: `${mapped.provider} notification`,
      attributes: {},
      notes,
    };
    if ("skip" in mapped) return { ...item, skip: mapped.skip };
    notes.push(...mapped.notes);
    item.attributes = { name: item.name, ...mapped.attributes, is_enabled: flag(row.active ?? 1), default_for_new_monitors: flag(row.is_default) };
    return item;
  });
}

function monitors(data: KumaData, names: NameBook): PlannedItem[] {
  const dockerHosts = new Map(data.dockerHosts.map((h) => [Number(h.id), h]));
  const channelsOf = linksOf(data.monitorNotifications, "monitor_id", "notification_id");
  const tagNames = new Map(data.tags.map((t) => [Number(t.id), String(t.name)]));
  const tagsOf = new Map<number, string[]>();
  for (const mt of data.monitorTags) {
    const text = str(mt.value) ? `${tagNames.get(Number(mt.tag_id))}:${mt.value}` : String(tagNames.get(Number(mt.tag_id)));
    tagsOf.set(Number(mt.monitor_id), [...(tagsOf.get(Number(mt.monitor_id)) ?? []), text]);
  }
  const groups = new Map(data.monitors.filter((m) => m.type === "group").map((m) => [Number(m.id), m]));
  // Kuma nests groups; Vigil's are flat: a monitor joins the group it is directly in
  const groupOf = (m: KumaRow) => (m.parent && groups.has(Number(m.parent)) ? groups.get(Number(m.parent))! : null);
  return data.monitors.map((m) => {
    const notes: string[] = [];
    const isGroup = m.type === "group";
    const kind = isGroup ? "group" : "monitor";
    const item: PlannedItem = {
      kind,
      ref: `monitor ${m.id}`,
      name: names.take(kind, str(m.name) ?? `Kuma monitor ${m.id}`, notes),
      what: isGroup ? "group monitor" : `${m.type} monitor`,
      attributes: {},
      notes,
    };
    const parent = groupOf(m);
    if (isGroup) {
      if (parent) notes.push(`inside group "${parent.name}" in Kuma: Vigil's groups are not nested`);
      if (channelsOf.get(Number(m.id))?.length) notes.push("its notifications not kept: a Vigil group does not alert, its monitors do");
      item.attributes = { name: item.name, description: str(m.description) };
      return item;
    }
    const mapped = mapKumaMonitor(m, { dockerHosts });
    if ("skip" in mapped) return { ...item, skip: mapped.skip };
    notes.push(...mapped.notes);
    if (parent) item.groupRef = `monitor ${parent.id}`;
    item.attributes = { name: item.name, ...mapped.attributes, tags: fitTags(tagsOf.get(Number(m.id)) ?? [], notes) };
    item.channelRefs = (channelsOf.get(Number(m.id)) ?? []).map((id) => `notification ${id}`);
    return item;
  });
}

/** Kuma's start/end dates ("2026-12-01 02:00:00", wall-clock in the maintenance's zone) as ISO text without an offset. */
const wallClock = (v: unknown): string | null => (str(v) ? str(v)!.replace(" ", "T").replace(/\.\d+$/, "") : null);

function windows(data: KumaData, names: NameBook, now: number): PlannedItem[] {
  const monitorsOf = linksOf(data.monitorMaintenances, "maintenance_id", "monitor_id");
  const pagesOf = linksOf(data.maintenanceStatusPages, "maintenance_id", "status_page_id");
  const pageMonitors = statusPageMonitors(data);
  const serverZone = str(data.settings.get("serverTimezone"));
  return data.maintenances.map((w) => {
    const notes: string[] = [];
    const strategy = String(w.strategy ?? "single");
    const item: PlannedItem = {
      kind: "maintenance_window",
      ref: `maintenance ${w.id}`,
      name: names.take("maintenance_window", str(w.title) ?? `Kuma maintenance ${w.id}`, notes),
      what: `${strategy} maintenance`,
      attributes: {},
      notes,
    };
    let timezone = textOf(w.timezone);
    if (!timezone || timezone === "SAME_AS_SERVER") {
      timezone = serverZone ?? "UTC";
      if (!serverZone) notes.push("Kuma's server time zone is not recorded in its database: times read as UTC");
    }
    const ids = new Set(monitorsOf.get(Number(w.id)) ?? []);
    for (const page of pagesOf.get(Number(w.id)) ?? []) for (const id of pageMonitors.get(page) ?? []) ids.add(id);
    item.monitorRefs = [...ids].map((id) => `monitor ${id}`);
    const a: Record<string, unknown> = { name: item.name, description: str(w.description), is_enabled: flag(w.active ?? 1), timezone };
    const end = wallClock(w.end_date);
    const ended = (at: string | null) => at !== null && Date.parse(`${at}Z`) + 14 * 3600_000 < now; // a day's worth of zones either way
    if (strategy === "manual") return { ...item, skip: "manual maintenance (on while switched on in Kuma) has no schedule; Vigil's switch for that is a monitor's is_in_maintenance" };
    if (strategy === "single") {
      const start = wallClock(w.start_date);
      if (!start || !end) return { ...item, skip: "it has no start or end date" };
      if (ended(end)) return { ...item, skip: `it ended on ${end.replace("T", " ")}` };
      item.attributes = { ...a, starts_at: start, ends_at: end };
      return item;
    }
    if (strategy === "recurring-interval" && Number(w.interval_day) > 1) return { ...item, skip: `it recurs every ${w.interval_day} days, which a cron schedule cannot say` };
    const cron = str(w.cron) ?? generatedCron(w);
    if (!cron) return { ...item, skip: "it has no schedule" };
    const duration = Number(w.duration) || durationOf(w);
    if (ended(end)) return { ...item, skip: `its date range ended on ${end!.replace("T", " ")}` };
    if (str(w.start_date) || end) notes.push("date range not kept: Vigil's recurring windows have no start or end date");
    if (strategy === "recurring-day-of-month" && /lastDay[234]/.test(String(w.days_of_month))) notes.push("the 2nd to 4th last days of the month not kept (Kuma does not run them either)");
    item.attributes = { ...a, schedule: cron.replace(/\s+/g, " "), duration_sec: duration };
    return item;
  });
}

/** Kuma's own cron for a recurring maintenance (server/model/maintenance.js generateCron), for rows that predate it. */
function generatedCron(w: KumaRow): string | null {
  const [h, mi] = String(w.start_time ?? "").split(":").map(Number);
  if (!Number.isInteger(h) || !Number.isInteger(mi)) return null;
  const list = (v: unknown): unknown[] => {
    try {
      return (JSON.parse(String(v ?? "[]")) as unknown[]) ?? [];
    } catch {
      return [];
    }
  };
  if (w.strategy === "recurring-interval") return `${mi} ${h} * * *`;
  if (w.strategy === "recurring-weekday") return `${mi} ${h} * * ${list(w.weekdays).join(",")}`;
  if (w.strategy === "recurring-day-of-month") {
    const days = list(w.days_of_month).flatMap((d) => (d === "lastDay1" ? ["L"] : typeof d === "string" && d.startsWith("lastDay") ? [] : [d]));
    return `${mi} ${h} ${[...new Set(days)].join(",")} * *`;
  }
  return null;
}

function durationOf(w: KumaRow): number {
  const toSec = (t: unknown) => String(t ?? "").split(":").map(Number).reduce((acc, v, i) => acc + v * [3600, 60, 1][i]!, 0);
  const d = toSec(w.end_time) - toSec(w.start_time);
  return d <= 0 ? d + 86400 : d;
}

/** Each status page's monitors in the order the page shows them (its groups, then their monitors, by weight). */
function statusPageMonitors(data: KumaData): Map<number, number[]> {
  const byGroup = new Map<number, KumaRow[]>();
  for (const mg of data.monitorGroups) byGroup.set(Number(mg.group_id), [...(byGroup.get(Number(mg.group_id)) ?? []), mg]);
  const pages = new Map<number, number[]>();
  for (const g of [...data.groups].sort(byWeight)) {
    const list = pages.get(Number(g.status_page_id)) ?? [];
    for (const mg of (byGroup.get(Number(g.id)) ?? []).sort(byWeight)) if (!list.includes(Number(mg.monitor_id))) list.push(Number(mg.monitor_id));
    pages.set(Number(g.status_page_id), list);
  }
  return pages;
}

function statusPages(data: KumaData, names: NameBook): PlannedItem[] {
  const pageMonitors = statusPageMonitors(data);
  return data.statusPages.map((p) => {
    const notes: string[] = [];
    const item: PlannedItem = {
      kind: "status_page",
      ref: `status page ${p.id}`,
      name: names.take("status_page", str(p.title) ?? `Kuma status page ${p.id}`, notes),
      what: "status page",
      attributes: {},
      notes,
    };
    const slug = str(p.slug)?.toLowerCase() ?? null;
    const a: Record<string, unknown> = { name: item.name, description: str(p.description), is_enabled: flag(p.published ?? 1), public_theme: p.theme === "dark" ? "dark" : "light" };
    if (slug && isValidSlug(slug)) a.slug = slug;
    else notes.push(`slug "${p.slug}" is not one Vigil takes (lowercase letters and digits joined by hyphens): one is made from the name`);
    if (p.theme === "auto") notes.push("theme auto not kept: light");
    const domain = data.statusPageDomains.find((d) => Number(d.status_page_id) === Number(p.id));
    if (domain && str(domain.domain)) {
      a.custom_domain = str(domain.domain)!.toLowerCase();
      notes.push(`custom domain ${a.custom_domain} serves the page once verified: publish the TXT record its page shows (README "Custom domains")`);
    }
    const sections = data.groups.filter((g) => Number(g.status_page_id) === Number(p.id));
    if (sections.length > 1) notes.push(`its ${sections.length} sections (${sections.map((s) => s.name).join(", ")}) not kept: a Vigil page shows its monitors by the group each is in`);
    // 1.23 names the analytics column google_analytics_tag_id, 2.x analytics_id
    for (const [col, what] of [["footer_text", "footer"], ["custom_css", "custom CSS"], ["analytics_id", "analytics"], ["google_analytics_tag_id", "analytics"], ["icon", "icon"]] as const) {
      if (str(p[col]) && !(col === "icon" && p.icon === "/icon.svg")) notes.push(`${what} not kept`);
    }
    item.attributes = a;
    item.monitorRefs = (pageMonitors.get(Number(p.id)) ?? []).map((id) => `monitor ${id}`);
    return item;
  });
}

function notices(data: KumaData): string[] {
  const out: string[] = [];
  const retries = new Map<number, number>();
  for (const m of data.monitors) if (m.type !== "group") retries.set(Number(m.maxretries ?? 0), (retries.get(Number(m.maxretries ?? 0)) ?? 0) + 1);
  if ([...retries.keys()].some((r) => r > 0))
    out.push(
      `retries: Kuma marks a monitor down after its own number of retries (${[...retries].sort((a, b) => a[0] - b[0]).map(([r, n]) => `${r} on ${n} monitor${n === 1 ? "" : "s"}`).join(", ")}); ` +
        "Vigil confirms a failure with one instance-wide number of consecutive failed checks (vigil serve --confirmations, default 2) and re-checks within 10 s after a first failure, so the retries were not imported",
    );
  if (data.monitors.some((m) => m.type === "push"))
    out.push("push monitors became heartbeat monitors with new ping URLs (printed on their lines): point your jobs at the new URLs; Kuma's push URLs stop working once Kuma is off");
  return out;
}

export function planKumaImport(data: KumaData, now: number): ImportPlan {
  const names = new NameBook();
  const counts = [count(data.monitors.length, "monitor"), count(data.notifications.length, "notification"), count(data.maintenances.length, "maintenance"), count(data.statusPages.length, "status page"), count(data.tags.length, "tag")].join(", ");
  return {
    source: "uptime-kuma",
    header: [`Uptime Kuma ${data.version} database${data.schemaMark ? ` (last schema change: ${data.schemaMark})` : ""}: ${counts}`],
    items: [...channels(data, names), ...monitors(data, names), ...windows(data, names, now), ...statusPages(data, names)],
    notices: notices(data),
  };
}
