import type { MonitorType } from "../../domain/monitor.ts";
import type { MonitorAttributes } from "../../domain/monitor-schema.ts";
import type { MonitorItem } from "../../services/monitors.ts";
import { html, type SafeHtml } from "../html.ts";
import { csrfField, flash } from "./layout.ts";
import { displayState } from "../../domain/display-state.ts";
import { stateBadge, when } from "./widgets.ts";

const stateOf = (a: MonitorAttributes) => displayState(a);

/** One row of the monitor list; the live refresh swaps rows by `data-monitor`. */
export function monitorRow(m: MonitorItem): SafeHtml {
  const a = m.attributes;
  return html`<tr data-monitor="${m.id}"><td>${stateBadge(stateOf(a))}</td><td><a href="/monitors/${m.id}">${a.name}</a></td><td>${a.monitor_type}</td><td class="mono">${a.target ?? "—"}</td><td class="num">${when(a.last_checked_at)}</td></tr>`;
}

export function monitorRows(monitors: MonitorItem[]): SafeHtml {
  if (monitors.length === 0) return html`<tr><td colspan="5" class="empty">No monitors yet. <a href="/monitors/new">Create the first one</a>.</td></tr>`;
  return html`${monitors.map(monitorRow)}`;
}

export function monitorList(monitors: MonitorItem[], msg: string | null): SafeHtml {
  const counts = { up: 0, down: 0, degraded: 0, other: 0 };
  for (const m of monitors) {
    const s = stateOf(m.attributes);
    if (s === "up" || s === "down" || s === "degraded") counts[s]++;
    else counts.other++;
  }
  return html`${flash(msg)}<div class="row between"><h1>Monitors</h1><a class="btn primary" href="/monitors/new">New monitor</a></div>
<p class="muted"><span data-live-summary>${monitors.length} ${monitors.length === 1 ? "monitor" : "monitors"}: ${counts.up} up, ${counts.degraded} degraded, ${counts.down} down, ${counts.other} other.</span> States update live.</p>
<table><caption class="sr-only">Monitors and their current state</caption>
<thead><tr><th scope="col">State</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Target</th><th scope="col">Last check</th></tr></thead>
<tbody data-live="/monitors/rows" aria-live="polite">${monitorRows(monitors)}</tbody></table>`;
}

export function typePicker(info: Record<MonitorType, string>): SafeHtml {
  return html`<h1>New monitor</h1><p>What should Vigil watch?</p>
<ul class="types">${(Object.keys(info) as MonitorType[]).map((t) => html`<li><a href="/monitors/new?type=${t}"><strong>${t.toUpperCase()}</strong><br><span class="muted">${info[t]}</span></a></li>`)}</ul>`;
}

export function confirmDelete(o: { what: string; name: string; action: string; back: string; session: { csrf_token: string }; consequence: string }): SafeHtml {
  return html`<h1>Delete ${o.what}?</h1><div class="alert warn" role="alert"><p>Delete <strong>${o.name}</strong>? ${o.consequence} This cannot be undone.</p></div>
<form method="post" action="${o.action}">${csrfField(o.session)}<div class="row"><button class="danger" type="submit">Delete ${o.what}</button><a class="btn" href="${o.back}">Cancel</a></div></form>`;
}
