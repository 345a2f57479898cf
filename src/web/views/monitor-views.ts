import { MONITOR_TYPES, type MonitorType } from "../../domain/monitor.ts";
import type { MonitorAttributes } from "../../domain/monitor-schema.ts";
import type { MonitorItem } from "../../services/monitors.ts";
import { html, raw, type SafeHtml } from "../html.ts";
import { TAG_RULE } from "../../domain/tags.ts";
import { csrfField } from "./layout.ts";
import { displayState } from "../../domain/display-state.ts";
import { formatPct, stateBadge, when } from "./widgets.ts";

/**
 * The state the dashboard shows for a monitor (domain/display-state.ts): the API's attributes already
 * read is_in_maintenance true while an active window holds the monitor (services/monitors.ts).
 */
export const shownState = (a: MonitorAttributes) => displayState(a, false);

/** A monitor's tags as chips, each a link to the list filtered by it. */
export function tagChips(tags: readonly string[]): SafeHtml {
  if (!tags.length) return html``;
  return html`<span class="tags">${tags.map((t) => html`<a class="tag" href="/?tag=${encodeURIComponent(t)}">${t}</a>`)}</span>`;
}

/** What the list shows beside a monitor, computed for the whole page (services/monitors.ts listFigures). */
export interface RowFigures {
  uptime24h: number | null;
  recent: { status: string; checked_at: number }[];
}

const RESULT_WORD: Record<string, string> = { up: "up", degraded: "degraded", down: "down" };

/**
 * The last results as a row of coloured cells, oldest first; one sentence says them (how many of
 * each, and the latest) to assistive technology and, as a title, to a mouse. No title per cell: with
 * 100 rows those were half the page's HTML.
 */
export function recentBar(recent: RowFigures["recent"]): SafeHtml {
  if (recent.length === 0) return html`<span class="muted">no checks yet</span>`;
  const counts = new Map<string, number>();
  for (const r of recent) counts.set(RESULT_WORD[r.status] ?? "other", (counts.get(RESULT_WORD[r.status] ?? "other") ?? 0) + 1);
  const latest = recent[recent.length - 1]!;
  const said = `Last ${recent.length} ${recent.length === 1 ? "check" : "checks"}: ${[...counts].map(([w, n]) => `${n} ${w}`).join(", ")}; latest ${RESULT_WORD[latest.status] ?? latest.status}.`;
  const cells = recent.map((r) => `<i class="rc rc-${RESULT_WORD[r.status] ?? "other"}"></i>`);
  return html`<span class="sr-only">${said}</span><span class="recent" aria-hidden="true" title="${said}">${raw(cells.join(""))}</span>`;
}

const NO_FIGURES: RowFigures = { uptime24h: null, recent: [] };

/** One row of the monitor list, with its checkbox for the bulk actions (form "bulk"). */
export function monitorRow(m: MonitorItem, f: RowFigures = NO_FIGURES): SafeHtml {
  const a = m.attributes;
  return html`<tr data-monitor="${m.id}"><td class="pick"><input type="checkbox" id="pick-${m.id}" name="id" value="${m.id}" form="bulk"><label class="sr-only" for="pick-${m.id}">Select ${a.name}</label></td><td data-label="State">${stateBadge(shownState(a))}</td><td><a href="/monitors/${m.id}">${a.name}</a>${tagChips(a.tags)}</td><td data-label="Type">${a.monitor_type}</td><td class="mono" data-label="Target">${a.target ?? "—"}</td><td class="num" data-label="Uptime 24 h">${formatPct(f.uptime24h)}</td><td data-label="Recent">${recentBar(f.recent)}</td><td class="num" data-label="Last check">${when(a.last_checked_at)}</td></tr>`;
}

const COLUMNS = 8;

function monitorRows(monitors: MonitorItem[], figures: Map<number, RowFigures>, filtered: boolean): SafeHtml {
  if (monitors.length === 0) {
    return filtered
      ? html`<tr><td colspan="${COLUMNS}" class="empty">No monitor matches these filters. <a href="/">Show every monitor</a>.</td></tr>`
      : html`<tr><td colspan="${COLUMNS}" class="empty">No monitors yet. <a href="/monitors/new">Create the first one</a>.</td></tr>`;
  }
  return html`${monitors.map((m) => monitorRow(m, figures.get(m.id)))}`;
}

/** A group as the list shows it. */
export interface ListedGroup {
  id: number;
  name: string;
}

export const LIST_STATES = ["up", "degraded", "down", "unknown", "maintenance", "paused"] as const;
export type ListState = (typeof LIST_STATES)[number];
export const LIST_SORTS = { name: "Name", state: "State (down first)", last_check: "Last check (newest first)", uptime: "Uptime 24 h (lowest first)" } as const;
export type ListSort = keyof typeof LIST_SORTS;
/** Monitors on one page of the list. */
export const PAGE_SIZE = 100;

/** What the list shows, from the query string (README "Dashboard"): ?q=&state=&type=&group_id=&tag=&sort=&page=. */
export interface ListFilter {
  groupId?: number;
  tags: string[];
  q?: string;
  state?: ListState;
  type?: MonitorType;
  sort?: ListSort;
  /** 1-based */
  page?: number;
}

export const isFiltered = (f: ListFilter) => f.groupId !== undefined || f.tags.length > 0 || !!f.q || f.state !== undefined || f.type !== undefined;

/** The query string of `f` (with "?" when not empty); `page` left out unless asked. */
export function filterQuery(f: ListFilter, page = f.page): string {
  const q = new URLSearchParams();
  if (f.q) q.set("q", f.q);
  if (f.state) q.set("state", f.state);
  if (f.type) q.set("type", f.type);
  if (f.groupId !== undefined) q.set("group_id", String(f.groupId));
  for (const t of f.tags) q.append("tag", t);
  if (f.sort) q.set("sort", f.sort);
  if (page !== undefined && page > 1) q.set("page", String(page));
  const text = q.toString();
  return text ? `?${text}` : "";
}

function monitorTable(monitors: MonitorItem[], figures: Map<number, RowFigures>, filtered: boolean): SafeHtml {
  return html`<table class="monitors"><caption class="sr-only">Monitors and their current state</caption>
<thead><tr><th scope="col" class="pick"><span class="sr-only">Selected</span></th><th scope="col">State</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Target</th><th scope="col">Uptime 24 h</th><th scope="col">Recent checks</th><th scope="col">Last check</th></tr></thead>
<tbody>${monitorRows(monitors, figures, filtered)}</tbody></table>`;
}

/** One page of the list: which monitors, how many pass the filters, the figures beside each, the counts by state. */
export interface ListPage {
  monitors: MonitorItem[];
  total: number;
  figures: Map<number, RowFigures>;
  counts: { paused: number; maintenance: number; byStatus: Map<string, number> };
}

function summary(p: ListPage, f: ListFilter): SafeHtml {
  const n = (s: string) => p.counts.byStatus.get(s) ?? 0;
  const up = n("up"), degraded = n("degraded"), down = n("down"), held = p.counts.maintenance;
  const other = p.total - up - degraded - down - held;
  const page = f.page ?? 1;
  const from = (page - 1) * PAGE_SIZE + 1;
  const shown = p.total > PAGE_SIZE && p.monitors.length > 0 ? ` Showing ${from}–${from + p.monitors.length - 1}.` : "";
  return html`<p class="muted" data-live-summary>${p.total} ${p.total === 1 ? "monitor" : "monitors"}: ${up} up, ${degraded} degraded, ${down} down, ${held ? `${held} in maintenance, ` : ""}${other} other.${shown}</p>`;
}

/** Page links: first, last, and two either side of the current one. */
function pager(total: number, f: ListFilter): SafeHtml {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (pages === 1) return html``;
  const current = Math.min(f.page ?? 1, pages);
  const shown = [...new Set([1, current - 2, current - 1, current, current + 1, current + 2, pages])].filter((n) => n >= 1 && n <= pages).sort((a, b) => a - b);
  const link = (n: number, text: string | number) => (n === current ? html`<span aria-current="page">${text}</span>` : html`<a href="/${filterQuery(f, n)}">${text}</a>`);
  const items: SafeHtml[] = [];
  if (current > 1) items.push(html`<li>${link(current - 1, "Previous")}</li>`);
  shown.forEach((n, i) => {
    if (i > 0 && n - shown[i - 1]! > 1) items.push(html`<li aria-hidden="true">…</li>`);
    items.push(html`<li>${link(n, n)}</li>`);
  });
  if (current < pages) items.push(html`<li>${link(current + 1, "Next")}</li>`);
  return html`<nav class="pager" aria-label="Pages of monitors"><ul>${items}</ul></nav>`;
}

/**
 * The list's live part: the summary, one table or, once any monitor of the page is in a group, a
 * collapsible section per group in the groups' order and the ungrouped ones last, and the page
 * links. `data-section` lets the page keep a section closed across live refreshes.
 */
export function monitorSections(p: ListPage, groups: ListedGroup[], f: ListFilter): SafeHtml {
  const { monitors, figures } = p;
  const filtered = isFiltered(f);
  const used = new Set(monitors.map((m) => m.attributes.group_id).filter((id) => id !== null));
  const shown = f.sort ? [] : groups.filter((g) => used.has(g.id)); // a chosen order is one table, not split by group
  const head = summary(p, f);
  if (monitors.length === 0 && p.total > 0) return html`${head}<p class="empty">This page is past the last one. <a href="/${filterQuery(f, 1)}">Go to the first page</a>.</p>${pager(p.total, f)}`;
  if (shown.length === 0) return html`${head}${monitorTable(monitors, figures, filtered)}${pager(p.total, f)}`;
  const known = new Set(shown.map((g) => g.id));
  const sections = [
    ...shown.map((g) => ({ key: `g${g.id}`, name: g.name, monitors: monitors.filter((m) => m.attributes.group_id === g.id) })),
    { key: "ungrouped", name: "Not in a group", monitors: monitors.filter((m) => m.attributes.group_id === null || !known.has(m.attributes.group_id)) },
  ].filter((sec) => sec.monitors.length > 0);
  return html`${head}${sections.map(
    (sec) => html`<details class="group" open data-section="${sec.key}"><summary><span class="gname">${sec.name}</span> <span class="muted">${sec.monitors.length} ${sec.monitors.length === 1 ? "monitor" : "monitors"}</span></summary>
${monitorTable(sec.monitors, figures, filtered)}</details>`,
  )}${pager(p.total, f)}`;
}

const selected = (on: boolean) => (on ? html` selected` : "");

function filterForm(groups: ListedGroup[], f: ListFilter, problems: string[]): SafeHtml {
  return html`<form method="get" action="/" class="filters" role="search" aria-label="Filter monitors">
<div class="field"><label for="flt-q">Search</label><input type="search" id="flt-q" name="q" value="${f.q ?? ""}" placeholder="name or target"></div>
<div class="field"><label for="flt-state">State</label><select id="flt-state" name="state"><option value="">Any state</option>${LIST_STATES.map((st) => html`<option value="${st}"${selected(st === f.state)}>${st[0]!.toUpperCase() + st.slice(1)}</option>`)}</select></div>
<div class="field"><label for="flt-type">Type</label><select id="flt-type" name="type"><option value="">Any type</option>${MONITOR_TYPES.map((t) => html`<option value="${t}"${selected(t === f.type)}>${t}</option>`)}</select></div>
<div class="field"><label for="flt-group">Group</label><select id="flt-group" name="group_id"><option value="">Every group</option>${groups.map((g) => html`<option value="${g.id}"${selected(g.id === f.groupId)}>${g.name}</option>`)}</select></div>
<div class="field"><label for="flt-tag">Tags</label><span class="hint" id="flt-tag-hint">comma-separated; a monitor must have every one</span><input type="text" id="flt-tag" name="tag" value="${f.tags.join(", ")}" aria-describedby="flt-tag-hint"${problems.length ? html` aria-invalid="true"` : ""}></div>
<div class="field"><label for="flt-sort">Sort by</label><select id="flt-sort" name="sort"><option value="">Group, then oldest first</option>${(Object.keys(LIST_SORTS) as ListSort[]).map((k) => html`<option value="${k}"${selected(k === f.sort)}>${LIST_SORTS[k]}</option>`)}</select></div>
<div class="row"><button type="submit">Filter</button>${isFiltered(f) || f.sort ? html`<a class="btn" href="/">Clear</a>` : ""}</div>
</form>${problems.length ? html`<div class="alert error" role="alert">${problems.join(" ")}</div>` : ""}`;
}

/**
 * The bulk actions' form: the rows' checkboxes belong to it (form="bulk"); `back` is the list's query
 * string. The select-all box needs the script (app.client.js), so it shows only once the script runs;
 * it sits here rather than in a table head, which phones do not show.
 */
function bulkForm(o: { session: { csrf_token: string }; back: string; groups: ListedGroup[]; channels: { value: number; label: string }[] }): SafeHtml {
  return html`<form method="post" action="/monitors/bulk" id="bulk" class="bulk filters" aria-label="Change the selected monitors">${csrfField(o.session)}<input type="hidden" name="back" value="${o.back}">
<div class="row"><span class="check" data-select-all-box hidden><input type="checkbox" id="pick-all" data-select-all> <label for="pick-all">Select every monitor on this page</label></span></div>
<div class="row"><span class="muted">Selected monitors:</span> <button type="submit" name="action" value="pause">Pause</button> <button type="submit" name="action" value="resume">Resume</button> <button type="submit" name="action" value="delete" class="danger">Delete…</button></div>
<div class="field"><label for="bulk-tag">Tag to add</label><input type="text" id="bulk-tag" name="tag"></div><div class="row"><button type="submit" name="action" value="tag">Add tag</button></div>
<div class="field"><label for="bulk-group">Move to</label><select id="bulk-group" name="group_id"><option value="none">No group</option>${o.groups.map((g) => html`<option value="${g.id}">${g.name}</option>`)}</select></div><div class="row"><button type="submit" name="action" value="group">Move to group</button></div>
${o.channels.length ? html`<div class="field"><label for="bulk-channel">Notification channel</label><select id="bulk-channel" name="channel_id">${o.channels.map((c) => html`<option value="${c.value}">${c.label}</option>`)}</select></div><div class="row"><button type="submit" name="action" value="channel">Link channel</button></div>` : ""}
</form>`;
}

const BULK_DONE: Record<string, string> = { pause: "paused", resume: "resumed", delete: "deleted", tag: "tagged", group: "moved", channel: "linked to the channel" };
const BULK_PROBLEM: Record<string, string> = {
  none: "Select one or more monitors first.",
  tag: `That is not a tag: a tag is ${TAG_RULE}.`,
};

/** The result of a bulk action, from the URL it redirected to (?done=<action>&n=<changed>, or ?problem=). */
export function bulkFlash(url: URL): SafeHtml {
  const done = url.searchParams.get("done");
  const problem = url.searchParams.get("problem");
  if (problem && BULK_PROBLEM[problem]) return html`<div class="alert error" role="alert">${BULK_PROBLEM[problem]}</div>`;
  if (!done || !BULK_DONE[done]) return html``;
  const n = Number(url.searchParams.get("n"));
  if (!Number.isSafeInteger(n) || n < 0) return html``;
  return html`<div class="alert ok" role="status">${n} ${n === 1 ? "monitor" : "monitors"} ${BULK_DONE[done]}.</div>`;
}

export function monitorList(p: ListPage, o: { msg: SafeHtml; session: { csrf_token: string }; groups: ListedGroup[]; channels: { value: number; label: string }[]; filter: ListFilter; problems: string[] }): SafeHtml {
  return html`${o.msg}<div class="row between"><h1>Monitors</h1><a class="btn primary" href="/monitors/new">New monitor</a></div>
${filterForm(o.groups, o.filter, o.problems)}
${bulkForm({ session: o.session, back: filterQuery(o.filter), groups: o.groups, channels: o.channels })}
<p class="muted">States update live.</p>
<div data-live="/monitors/rows${filterQuery(o.filter)}" aria-live="polite">${monitorSections(p, o.groups, o.filter)}</div>`;
}

/** The bulk delete's confirmation: what goes, by name, and a form that sends the same ids again. */
export function confirmBulkDelete(monitors: MonitorItem[], o: { session: { csrf_token: string }; back: string }): SafeHtml {
  return html`<h1>Delete ${monitors.length} ${monitors.length === 1 ? "monitor" : "monitors"}?</h1><div class="alert warn" role="alert"><p>Their checks, incidents and timelines are deleted with them, and they leave every status page. This cannot be undone.</p></div>
<ul class="plain goes">${monitors.map((m) => html`<li>${m.attributes.name} <span class="muted">(${m.attributes.monitor_type})</span></li>`)}</ul>
<form method="post" action="/monitors/bulk/delete">${csrfField(o.session)}<input type="hidden" name="back" value="${o.back}">${monitors.map((m) => html`<input type="hidden" name="id" value="${m.id}">`)}<div class="row"><button class="danger" type="submit">Delete ${monitors.length} ${monitors.length === 1 ? "monitor" : "monitors"}</button><a class="btn" href="/${o.back}">Cancel</a></div></form>`;
}

export function typePicker(info: Record<MonitorType, string>): SafeHtml {
  return html`<h1>New monitor</h1><p>What should Vigil watch?</p>
<ul class="types">${(Object.keys(info) as MonitorType[]).map((t) => html`<li><a href="/monitors/new?type=${t}"><strong>${t.toUpperCase()}</strong><br><span class="muted">${info[t]}</span></a></li>`)}</ul>`;
}

export function confirmDelete(o: { what: string; name: string; action: string; back: string; session: { csrf_token: string }; consequence: string }): SafeHtml {
  return html`<h1>Delete ${o.what}?</h1><div class="alert warn" role="alert"><p>Delete <strong>${o.name}</strong>? ${o.consequence} This cannot be undone.</p></div>
<form method="post" action="${o.action}">${csrfField(o.session)}<div class="row"><button class="danger" type="submit">Delete ${o.what}</button><a class="btn" href="${o.back}">Cancel</a></div></form>`;
}
