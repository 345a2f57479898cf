import type { MonitorType } from "../../domain/monitor.ts";
import type { MonitorAttributes } from "../../domain/monitor-schema.ts";
import type { MonitorItem } from "../../services/monitors.ts";
import { html, type SafeHtml } from "../html.ts";
import { csrfField, flash } from "./layout.ts";
import { displayState } from "../../domain/display-state.ts";
import { stateBadge, when } from "./widgets.ts";

const stateOf = (a: MonitorAttributes) => displayState(a);

/** A monitor's tags as chips, each a link to the list filtered by it. */
export function tagChips(tags: readonly string[]): SafeHtml {
  if (!tags.length) return html``;
  return html`<span class="tags">${tags.map((t) => html`<a class="tag" href="/?tag=${encodeURIComponent(t)}">${t}</a>`)}</span>`;
}

/** One row of the monitor list; the live refresh swaps rows by `data-monitor`. */
export function monitorRow(m: MonitorItem): SafeHtml {
  const a = m.attributes;
  return html`<tr data-monitor="${m.id}"><td>${stateBadge(stateOf(a))}</td><td><a href="/monitors/${m.id}">${a.name}</a>${tagChips(a.tags)}</td><td>${a.monitor_type}</td><td class="mono">${a.target ?? "—"}</td><td class="num">${when(a.last_checked_at)}</td></tr>`;
}

function monitorRows(monitors: MonitorItem[], filtered = false): SafeHtml {
  if (monitors.length === 0) {
    return filtered
      ? html`<tr><td colspan="5" class="empty">No monitor matches these filters. <a href="/">Show every monitor</a>.</td></tr>`
      : html`<tr><td colspan="5" class="empty">No monitors yet. <a href="/monitors/new">Create the first one</a>.</td></tr>`;
  }
  return html`${monitors.map(monitorRow)}`;
}

/** A group as the list shows it. */
export interface ListedGroup {
  id: number;
  name: string;
}

/** What the list is filtered by (the query string: ?group_id=&tag=, README "Groups, tags and status page updates"). */
export interface ListFilter {
  groupId?: number;
  tags: string[];
}

const filterQuery = (f: ListFilter) => {
  const q = new URLSearchParams();
  if (f.groupId !== undefined) q.set("group_id", String(f.groupId));
  for (const t of f.tags) q.append("tag", t);
  const text = q.toString();
  return text ? `?${text}` : "";
};

function monitorTable(monitors: MonitorItem[], filtered: boolean): SafeHtml {
  return html`<table><caption class="sr-only">Monitors and their current state</caption>
<thead><tr><th scope="col">State</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Target</th><th scope="col">Last check</th></tr></thead>
<tbody>${monitorRows(monitors, filtered)}</tbody></table>`;
}

/**
 * The list's live part: one table, or, once any monitor is in a group, a collapsible section per
 * group in the groups' order and the ungrouped ones last. `data-section` lets the page keep a
 * section closed across live refreshes.
 */
export function monitorSections(monitors: MonitorItem[], groups: ListedGroup[], filtered: boolean): SafeHtml {
  const used = new Set(monitors.map((m) => m.attributes.group_id).filter((id) => id !== null));
  const shown = groups.filter((g) => used.has(g.id));
  if (shown.length === 0) return monitorTable(monitors, filtered);
  const known = new Set(shown.map((g) => g.id));
  const sections = [
    ...shown.map((g) => ({ key: `g${g.id}`, name: g.name, monitors: monitors.filter((m) => m.attributes.group_id === g.id) })),
    { key: "ungrouped", name: "Not in a group", monitors: monitors.filter((m) => m.attributes.group_id === null || !known.has(m.attributes.group_id)) },
  ].filter((sec) => sec.monitors.length > 0);
  return html`${sections.map(
    (sec) => html`<details class="group" open data-section="${sec.key}"><summary><span class="gname">${sec.name}</span> <span class="muted">${sec.monitors.length} ${sec.monitors.length === 1 ? "monitor" : "monitors"}</span></summary>
${monitorTable(sec.monitors, filtered)}</details>`,
  )}`;
}

function filterForm(groups: ListedGroup[], f: ListFilter, problems: string[]): SafeHtml {
  return html`<form method="get" action="/" class="filters" role="search" aria-label="Filter monitors">
<div class="field"><label for="flt-group">Group</label><select id="flt-group" name="group_id"><option value="">Every group</option>${groups.map((g) => html`<option value="${g.id}"${g.id === f.groupId ? html` selected` : ""}>${g.name}</option>`)}</select></div>
<div class="field"><label for="flt-tag">Tags</label><span class="hint" id="flt-tag-hint">comma-separated; a monitor must have every one</span><input type="text" id="flt-tag" name="tag" value="${f.tags.join(", ")}" aria-describedby="flt-tag-hint"${problems.length ? html` aria-invalid="true"` : ""}></div>
<div class="row"><button type="submit">Filter</button>${f.groupId !== undefined || f.tags.length ? html`<a class="btn" href="/">Clear</a>` : ""}</div>
</form>${problems.length ? html`<div class="alert error" role="alert">${problems.join(" ")}</div>` : ""}`;
}

export function monitorList(monitors: MonitorItem[], msg: string | null, o: { groups: ListedGroup[]; filter: ListFilter; problems: string[] } = { groups: [], filter: { tags: [] }, problems: [] }): SafeHtml {
  const counts = { up: 0, down: 0, degraded: 0, other: 0 };
  for (const m of monitors) {
    const s = stateOf(m.attributes);
    if (s === "up" || s === "down" || s === "degraded") counts[s]++;
    else counts.other++;
  }
  const filtered = o.filter.groupId !== undefined || o.filter.tags.length > 0;
  return html`${flash(msg)}<div class="row between"><h1>Monitors</h1><a class="btn primary" href="/monitors/new">New monitor</a></div>
${filterForm(o.groups, o.filter, o.problems)}
<p class="muted"><span data-live-summary>${monitors.length} ${monitors.length === 1 ? "monitor" : "monitors"}: ${counts.up} up, ${counts.degraded} degraded, ${counts.down} down, ${counts.other} other.</span> States update live.</p>
<div data-live="/monitors/rows${filterQuery(o.filter)}" aria-live="polite">${monitorSections(monitors, o.groups, filtered)}</div>`;
}

export function typePicker(info: Record<MonitorType, string>): SafeHtml {
  return html`<h1>New monitor</h1><p>What should Vigil watch?</p>
<ul class="types">${(Object.keys(info) as MonitorType[]).map((t) => html`<li><a href="/monitors/new?type=${t}"><strong>${t.toUpperCase()}</strong><br><span class="muted">${info[t]}</span></a></li>`)}</ul>`;
}

export function confirmDelete(o: { what: string; name: string; action: string; back: string; session: { csrf_token: string }; consequence: string }): SafeHtml {
  return html`<h1>Delete ${o.what}?</h1><div class="alert warn" role="alert"><p>Delete <strong>${o.name}</strong>? ${o.consequence} This cannot be undone.</p></div>
<form method="post" action="${o.action}">${csrfField(o.session)}<div class="row"><button class="danger" type="submit">Delete ${o.what}</button><a class="btn" href="${o.back}">Cancel</a></div></form>`;
}
