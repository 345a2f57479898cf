import type { MonitorType } from "../../domain/monitor.ts";
import type { MonitorAttributes } from "../../domain/monitor-schema.ts";
import type { CheckItem } from "../../services/checks.ts";
import type { EventItem } from "../../services/events.ts";
import type { IncidentItem } from "../../services/incidents.ts";
import type { MonitorItem } from "../../services/monitors.ts";
import { html, type SafeHtml } from "../html.ts";
import { addressNotice, csrfField, flash } from "./layout.ts";
import { displayState } from "../../domain/display-state.ts";
import { monitorFacts } from "./monitor-facts.ts";
import { formatDuration, formatPct, latencyChart, stateBadge, when } from "./widgets.ts";

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

export interface DetailData {
  /** panels shown after the incidents (dependencies and alerting) */
  panels?: SafeHtml;
  monitor: MonitorItem;
  checks: CheckItem[];
  incidents: IncidentItem[];
  events: EventItem[] | null;
  uptime: { label: string; ratio: number | null }[];
  pingUrl: string | null;
  /** no --heartbeat-url or --base-url: the ping URL is built from the browser's address */
  pingBaseFollowsBrowser: boolean;
  /** the clock's now, for the days left before an expiry */
  now: number;
}

function actions(m: MonitorItem, session: { csrf_token: string }): SafeHtml {
  const paused = m.attributes.is_paused;
  return html`<div class="row"><a class="btn" href="/monitors/${m.id}/edit">Edit</a>
<form class="inline" method="post" action="/monitors/${m.id}/${paused ? "resume" : "pause"}">${csrfField(session)}<button type="submit">${paused ? "Resume" : "Pause"}</button></form>
<a class="btn danger" href="/monitors/${m.id}/delete">Delete</a></div>`;
}

function checksTable(checks: CheckItem[]): SafeHtml {
  if (!checks.length) return html`<p class="muted">No checks yet.</p>`;
  return html`<table><caption class="sr-only">Recent checks</caption><thead><tr><th scope="col">Time</th><th scope="col">Result</th><th scope="col">Latency</th><th scope="col">HTTP</th><th scope="col">Region</th><th scope="col">Detail</th></tr></thead><tbody>${checks.map((c) => {
    const a = c.attributes;
    return html`<tr><td class="num">${when(a.checked_at)}</td><td>${stateBadge(a.status)}</td><td class="num">${a.latency_ms === null ? "—" : `${a.latency_ms} ms`}</td><td class="num">${a.http_code ?? "—"}</td><td>${a.region}</td><td>${a.error_message ?? a.degraded_reason ?? ""}</td></tr>`;
  })}</tbody></table>`;
}

function incidentsTable(incidents: IncidentItem[]): SafeHtml {
  if (!incidents.length) return html`<p class="muted">No incidents.</p>`;
  return html`<table><caption class="sr-only">Incidents</caption><thead><tr><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Failed checks</th><th scope="col">Last error</th></tr></thead><tbody>${incidents.map((i) => {
    const a = i.attributes;
    return html`<tr><td>${a.status === "open" ? stateBadge("down") : html`<span class="st st-up"><span aria-hidden="true">✔</span> Resolved</span>`}</td><td class="num">${when(a.started_at)}</td><td class="num">${formatDuration(a.duration_ms)}</td><td class="num">${a.failure_count}</td><td>${a.last_error_message ?? a.last_error_code ?? ""}${a.parent_incident_id !== null ? html` <span class="muted">(opened while a monitor it depends on was down)</span>` : ""}</td></tr>`;
  })}</tbody></table>`;
}

/** "1.2 MB", "640 KB": a body's size for people. */
function formatBytes(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)} MB` : `${Math.ceil(n / 1000)} KB`;
}

function timeline(events: EventItem[]): SafeHtml {
  if (!events.length) return html`<p class="muted">No pings yet. Call the ping URL from your job to start.</p>`;
  return html`<table><caption class="sr-only">Pings and state transitions, newest first</caption><thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Detail</th><th scope="col">Source</th></tr></thead><tbody>${events.map((e) => {
    const a = e.attributes;
    const what =
      a.kind === "transition"
        ? html`${stateBadge(String(a.from))} → ${stateBadge(String(a.to))}`
        : a.kind === "token_rotated"
          ? html`ping URL rotated`
          : a.kind === "still_down" || a.kind === "escalated"
            ? html`<strong>${a.kind === "still_down" ? "reminder sent" : "escalated"}</strong>`
            : html`${a.kind} <strong>${a.result ?? ""}</strong>`;
    const detail = a.reason ?? (a.duration_ms != null ? `ran ${formatDuration(a.duration_ms)}` : "");
    // a failure's output, as the job sent it (its first 10 KiB): what a person reads to know why
    const output = a.body ? html`<details><summary>Output${a.body_bytes ? ` (first 10 KiB of ${formatBytes(a.body_bytes)})` : ""}</summary><pre class="output">${a.body}</pre></details>` : "";
    return html`<tr><td class="num">${when(a.at)}</td><td>${what}</td><td>${detail}${output}</td><td class="mono">${a.source_ip ?? ""}</td></tr>`;
  })}</tbody></table>`;
}

export function monitorDetail(d: DetailData, session: { csrf_token: string }, msg: string | null): SafeHtml {
  const m = d.monitor;
  const a = m.attributes;
  const latencies = [...d.checks].reverse().map((c) => c.attributes.latency_ms);
  return html`${flash(msg)}<div class="row between"><div><h1>${a.name}</h1><p>${stateBadge(stateOf(a))} <span class="muted">${a.monitor_type}${a.target ? html` · <span class="mono">${a.target}</span>` : ""}</span></p></div>${actions(m, session)}</div>
${d.pingUrl !== null ? html`<section class="panel" aria-labelledby="ping-h"><h2 id="ping-h">Ping URL</h2>
<p>Call this URL (GET or POST) when your job succeeds. Add <code>/start</code> before a run and <code>/fail</code> on failure.</p>
<div class="copy"><label class="sr-only" for="ping-url">Ping URL</label><input type="text" id="ping-url" class="mono" readonly value="${d.pingUrl}"><button type="button" data-copy="ping-url" hidden>Copy</button></div>
${d.pingBaseFollowsBrowser ? addressNotice(new URL(d.pingUrl).origin, "--heartbeat-url") : ""}
<form method="post" action="/monitors/${m.id}/rotate-token" data-confirm="Rotate the ping URL? The current URL stops working at once.">${csrfField(session)}<p><button type="submit">Rotate ping URL</button> <span class="muted">The old URL stops working at once; history is kept.</span></p></form>
<dl class="kv"><dt>Last ping</dt><dd>${when(a.heartbeat_last_ping_at)}</dd><dt>Expected every</dt><dd>${a.heartbeat_period_sec ?? a.interval_sec} s (grace ${a.heartbeat_grace_sec ?? 0} s)</dd></dl></section>` : ""}
<section class="panel" aria-labelledby="sum-h"><h2 id="sum-h">Summary</h2><dl class="kv">
<dt>Last check</dt><dd>${when(a.last_checked_at)}</dd><dt>Next check</dt><dd>${a.is_paused ? "paused" : when(a.next_run_at)}</dd>
${d.uptime.map((u) => html`<dt>Uptime ${u.label}</dt><dd>${formatPct(u.ratio)}</dd>`)}</dl></section>
${monitorFacts(a, d.checks, d.now)}
${a.monitor_type !== "heartbeat" ? html`<section class="panel" aria-labelledby="lat-h"><h2 id="lat-h">Latency</h2>${latencies.some((v) => v !== null) ? latencyChart(latencies, `Latency of the last ${latencies.length} checks`) : html`<p class="muted">No latency measured yet.</p>`}</section>` : ""}
${d.events ? html`<section aria-labelledby="tl-h"><h2 id="tl-h">Timeline</h2>${timeline(d.events)}</section>` : ""}
<section aria-labelledby="chk-h"><h2 id="chk-h">Recent checks</h2>${checksTable(d.checks.slice(0, 20))}</section>
<section aria-labelledby="inc-h"><h2 id="inc-h">Incidents</h2>${incidentsTable(d.incidents)}</section>
${d.panels ?? ""}`;
}

export function confirmDelete(o: { what: string; name: string; action: string; back: string; session: { csrf_token: string }; consequence: string }): SafeHtml {
  return html`<h1>Delete ${o.what}?</h1><div class="alert warn" role="alert"><p>Delete <strong>${o.name}</strong>? ${o.consequence} This cannot be undone.</p></div>
<form method="post" action="${o.action}">${csrfField(o.session)}<div class="row"><button class="danger" type="submit">Delete ${o.what}</button><a class="btn" href="${o.back}">Cancel</a></div></form>`;
}
