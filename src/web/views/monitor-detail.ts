import { shownState, tagChips, type ListedGroup } from "./monitor-views.ts";
import type { CheckItem } from "../../services/checks.ts";
import type { EventItem } from "../../services/events.ts";
import type { IncidentItem } from "../../services/incidents.ts";
import type { MonitorItem } from "../../services/monitors.ts";
import { html, type SafeHtml } from "../html.ts";
import { addressNotice, csrfField, flash } from "./layout.ts";
import { monitorFacts } from "./monitor-facts.ts";
import { formatDuration, formatPct, latencyChart, stateBadge, when } from "./widgets.ts";

/**
 * The monitor page. Its parts (`data-live-part`) are re-rendered by GET /monitors/:id/live, which
 * the page's script fetches when the event stream says this monitor changed state or was edited,
 * and swaps in part by part (app.client.js): the page stays current without a reload.
 */
export interface DetailData {
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
  /** panels shown after the incidents (dependencies and alerting) */
  panels?: SafeHtml;
  /** its group, shown with its tags under the name (README "Groups, tags and status page updates") */
  group: ListedGroup | null;
}

function actions(m: MonitorItem, session: { csrf_token: string }): SafeHtml {
  const paused = m.attributes.is_paused;
  return html`<div class="row"><a class="btn" href="/monitors/${m.id}/edit">Edit</a>
<form class="inline" method="post" action="/monitors/${m.id}/${paused ? "resume" : "pause"}">${csrfField(session)}<button type="submit">${paused ? "Resume" : "Pause"}</button></form>
<a class="btn danger" href="/monitors/${m.id}/delete">Delete</a></div>`;
}

/** Tables stack into one card per row on a phone; `data-label` names each cell there (dashboard.css). */
function checksTable(checks: CheckItem[]): SafeHtml {
  if (!checks.length) return html`<p class="muted">No checks yet.</p>`;
  return html`<table class="stack"><caption class="sr-only">Recent checks</caption><thead><tr><th scope="col">Time</th><th scope="col">Result</th><th scope="col">Latency</th><th scope="col">HTTP</th><th scope="col">Region</th><th scope="col">Detail</th></tr></thead><tbody>${checks.map((c) => {
    const a = c.attributes;
    return html`<tr><td class="num" data-label="Time">${when(a.checked_at)}</td><td data-label="Result">${stateBadge(a.status)}</td><td class="num" data-label="Latency">${a.latency_ms === null ? "—" : `${a.latency_ms} ms`}</td><td class="num" data-label="HTTP">${a.http_code ?? "—"}</td><td data-label="Region">${a.region}</td><td class="wrap" data-label="Detail">${a.error_message ?? a.degraded_reason ?? ""}</td></tr>`;
  })}</tbody></table>`;
}

function incidentsTable(incidents: IncidentItem[]): SafeHtml {
  if (!incidents.length) return html`<p class="muted">No incidents.</p>`;
  return html`<table class="stack"><caption class="sr-only">Incidents</caption><thead><tr><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Failed checks</th><th scope="col">Last error</th></tr></thead><tbody>${incidents.map((i) => {
    const a = i.attributes;
    return html`<tr><td data-label="Status">${a.status === "open" ? stateBadge("down") : html`<span class="st st-up"><span aria-hidden="true">✔</span> Resolved</span>`}</td><td class="num" data-label="Started">${when(a.started_at)}</td><td class="num" data-label="Duration">${formatDuration(a.duration_ms)}</td><td class="num" data-label="Failed checks">${a.failure_count}</td><td class="wrap" data-label="Last error">${a.last_error_message ?? a.last_error_code ?? ""}</td></tr>`;
  })}</tbody></table>`;
}

/** "1.2 MB", "640 KB": a body's size for people. */
function formatBytes(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)} MB` : `${Math.ceil(n / 1000)} KB`;
}

function timeline(events: EventItem[]): SafeHtml {
  if (!events.length) return html`<p class="muted">No pings yet. Call the ping URL from your job to start.</p>`;
  return html`<table class="stack"><caption class="sr-only">Pings and state transitions, newest first</caption><thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Detail</th><th scope="col">Source</th></tr></thead><tbody>${events.map((e) => {
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
    return html`<tr><td class="num" data-label="Time">${when(a.at)}</td><td data-label="Event">${what}</td><td class="wrap" data-label="Detail">${detail}${output}</td><td class="mono" data-label="Source">${a.source_ip ?? ""}</td></tr>`;
  })}</tbody></table>`;
}

/** The parts of the page the live refresh replaces, without the flash message. */
export function monitorDetailParts(d: DetailData, session: { csrf_token: string }): SafeHtml {
  const m = d.monitor;
  const a = m.attributes;
  const chartPoints = [...d.checks].reverse().map((c) => ({ at: Date.parse(c.attributes.checked_at), latency: c.attributes.latency_ms, status: c.attributes.status }));
  const placed = d.group || a.tags.length ? html`<p class="placed">${d.group ? html`<span class="muted">Group</span> <a href="/?group_id=${d.group.id}">${d.group.name}</a> ` : ""}${tagChips(a.tags)}</p>` : "";
  return html`<div class="row between" data-live-part="head"><div><h1>${a.name}</h1><p>${stateBadge(shownState(a))} <span class="muted">${a.monitor_type}${a.target ? html` · <span class="mono wrap">${a.target}</span>` : ""}</span></p>${placed}</div>${actions(m, session)}</div>
${d.pingUrl !== null ? html`<section class="panel" aria-labelledby="ping-h" data-live-part="ping"><h2 id="ping-h">Ping URL</h2>
<p>Call this URL (GET or POST) when your job succeeds. Add <code>/start</code> before a run and <code>/fail</code> on failure.</p>
<div class="copy"><label class="sr-only" for="ping-url">Ping URL</label><input type="text" id="ping-url" class="mono" readonly value="${d.pingUrl}"><button type="button" data-copy="ping-url" hidden>Copy</button></div>
${d.pingBaseFollowsBrowser ? addressNotice(new URL(d.pingUrl).origin, "--heartbeat-url") : ""}
<form method="post" action="/monitors/${m.id}/rotate-token" data-confirm="Rotate the ping URL? The current URL stops working at once.">${csrfField(session)}<p><button type="submit">Rotate ping URL</button> <span class="muted">The old URL stops working at once; history is kept.</span></p></form>
<dl class="kv"><dt>Last ping</dt><dd>${when(a.heartbeat_last_ping_at)}</dd><dt>Expected every</dt><dd>${a.heartbeat_period_sec ?? a.interval_sec} s (grace ${a.heartbeat_grace_sec ?? 0} s)</dd></dl></section>` : ""}
<section class="panel" aria-labelledby="sum-h" data-live-part="summary"><h2 id="sum-h">Summary</h2><dl class="kv">
<dt>Last check</dt><dd>${when(a.last_checked_at)}</dd><dt>Next check</dt><dd>${a.is_paused ? "paused" : when(a.next_run_at)}</dd>
${d.uptime.map((u) => html`<dt>Uptime ${u.label}</dt><dd>${formatPct(u.ratio)}</dd>`)}</dl></section>
<div data-live-part="facts">${monitorFacts(a, d.checks, d.now)}</div>
${a.monitor_type !== "heartbeat" ? html`<section class="panel" aria-labelledby="lat-h" data-live-part="latency"><h2 id="lat-h">Latency</h2>${chartPoints.some((p) => p.latency !== null) ? latencyChart(chartPoints, `Latency of the last ${chartPoints.length} checks`) : html`<p class="muted">No latency measured yet.</p>`}</section>` : ""}
${d.events ? html`<section aria-labelledby="tl-h" data-live-part="timeline"><h2 id="tl-h">Timeline</h2>${timeline(d.events)}</section>` : ""}
<section aria-labelledby="chk-h" data-live-part="checks"><h2 id="chk-h">Recent checks</h2>${checksTable(d.checks.slice(0, 20))}</section>
<section aria-labelledby="inc-h" data-live-part="incidents"><h2 id="inc-h">Incidents</h2>${incidentsTable(d.incidents)}</section>
${d.panels ? html`<div data-live-part="dependencies">${d.panels}</div>` : ""}`;
}

export function monitorDetail(d: DetailData, session: { csrf_token: string }, msg: string | null): SafeHtml {
  const m = d.monitor;
  return html`${flash(msg)}<div data-live-monitor="${m.id}" data-live-src="/monitors/${m.id}/live">${monitorDetailParts(d, session)}</div>
<p class="sr-only" role="status" data-live-announce></p>`;
}
