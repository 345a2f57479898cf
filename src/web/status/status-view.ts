import { publicErrorWording } from "../../domain/error-wording.ts";
import { ASSETS } from "../assets.ts";
import { html, type SafeHtml } from "../html.ts";
import { dailyFigures, formatDuration, formatPct, isoMinute, sparkline, stateBadge, uptimeBar } from "../views/widgets.ts";
import { BAR_DAYS, RECENT_DAYS, SPARK_HOURS, UPCOMING_MAINTENANCE_DAYS, type StatusData, type StatusIncident, type StatusMaintenance, type StatusMonitor, type StatusSection, type StatusUpdate } from "../../services/public-status.ts";
import { KIND_LABEL, STATUS_LABEL } from "./update-labels.ts";

const OVERALL_TEXT: Record<StatusData["overall"], { icon: string; text: string }> = {
  up: { icon: "✔", text: "All systems operational" },
  degraded: { icon: "▲", text: "Some systems are degraded" },
  down: { icon: "✖", text: "Some systems are down" },
  unknown: { icon: "?", text: "Status not known yet" },
};

/** A bare page in the status page's theme: the page itself and its 401/404 answers; `feed` is its Atom feed, when it has one. */
export function statusShell(title: string, theme: string, body: SafeHtml, feed: string | null = null): string {
  return html`<!doctype html>
<html lang="en" data-theme="${theme === "dark" ? "dark" : "light"}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="${ASSETS.statusCss.url}"><script src="${ASSETS.appJs.url}" defer></script>${feed ? html`<link rel="alternate" type="application/atom+xml" title="${title}" href="${feed}">` : ""}</head>
<body>${body}</body></html>`.value;
}

/** A heartbeat monitor has no response time: no figure and no sparkline. */
function responseTimes(m: StatusMonitor): SafeHtml | "" {
  if (!m.measuresLatency) return "";
  return html`<div class="rt">${sparkline(m.latency, `${m.name}: response time over ${SPARK_HOURS} hours`)}<span>${m.avgLatency === null ? "no response times yet" : `avg ${m.avgLatency} ms, ${SPARK_HOURS} h`}</span></div>`;
}

/** An incident as visitors see it: the plain wording of its error code, never the check's message. */
function incidentItem(i: StatusIncident): SafeHtml {
  const cause = publicErrorWording(i.errorCode);
  return html`<li><strong>${i.monitorName}</strong> — ${i.status === "open" ? html`${stateBadge("down")} since ${isoMinute(i.startedAt)}` : html`resolved; down from ${isoMinute(i.startedAt)} for ${formatDuration(i.durationMs)}`}${cause ? html`<br><span class="muted">${cause}</span>` : ""}</li>`;
}

/** A maintenance window: under way (until when) or coming (from, to), the page's services it holds. */
function maintenanceItem(w: StatusMaintenance): SafeHtml {
  const when = w.active ? html`${stateBadge("maintenance")} under way, until ${isoMinute(w.until)}` : html`from ${isoMinute(w.from)} to ${isoMinute(w.until)}`;
  return html`<li><strong>${w.name}</strong> — ${when}<br><span class="muted">Affects ${w.monitorNames.join(", ")}</span>${w.description ? html`<p class="desc">${w.description}</p>` : ""}</li>`;
}

/** An update people wrote: its body as text with its line breaks (CSS), never as HTML. */
function updateItem(u: StatusUpdate): SafeHtml {
  const status = u.status ? html` <span class="ust ust-${u.status}">${STATUS_LABEL[u.status]}</span>` : "";
  return html`<li class="update kind-${u.kind}" id="update-${u.id}"><h3>${u.title}</h3>
<p class="umeta"><span class="ukind">${KIND_LABEL[u.kind]}</span>${status} · ${isoMinute(u.publishedAt)}${u.edited ? html` · updated ${isoMinute(u.updatedAt)}` : ""}</p>
${u.body ? html`<div class="ubody">${u.body}</div>` : ""}${u.affected.length ? html`<p class="muted">Affects: ${u.affected.join(", ")}</p>` : ""}</li>`;
}

function monitorItem(m: StatusMonitor): SafeHtml {
  return html`<li class="mon"><div class="mh"><h3>${m.name}</h3>${stateBadge(m.state)}<span class="pct">${formatPct(m.uptime)} uptime</span></div>${m.maintenanceUntil !== null ? html`<p class="maint">Under maintenance until ${isoMinute(m.maintenanceUntil)}</p>` : ""}
${uptimeBar(m.days, `${m.name}: ${formatPct(m.uptime)} uptime over ${BAR_DAYS} days`)}<div class="legend" aria-hidden="true"><span>${BAR_DAYS} days ago</span><span>today</span></div>
${dailyFigures(m.days, m.name)}${responseTimes(m)}</li>`;
}

/** Monitors by group (README "Groups, tags and status page updates"): collapsible sections, open at first. */
function sectionsView(sections: StatusSection[]): SafeHtml {
  if (sections.length === 1 && sections[0]!.name === null) return html`<ul class="mons">${sections[0]!.monitors.map(monitorItem)}</ul>`;
  return html`${sections.map(
    (sec) => html`<details class="group" open><summary><span class="gname">${sec.name ?? "Other services"}</span>${stateBadge(sec.state)}<span class="muted">${sec.monitors.length} ${sec.monitors.length === 1 ? "service" : "services"}</span></summary>
<ul class="mons">${sec.monitors.map(monitorItem)}</ul></details>`,
  )}`;
}

/**
 * `subscribe`: where the email subscription form posts, on pages that offer one; `notice`: a line
 * shown above everything (the answer to that form).
 */
export function renderStatusPage(d: StatusData, links: { badge: string; json: string; feed: string | null; subscribe?: string | null; notice?: string | null }): string {
  const o = OVERALL_TEXT[d.overall];
  const p = d.page;
  const body = html`<div class="page">
<header><h1>${p.name}</h1>${p.headline ? html`<p class="headline">${p.headline}</p>` : ""}${p.description ? html`<p class="desc">${p.description}</p>` : ""}</header>
<main>
${links.notice ? html`<p class="notice" role="status">${links.notice}</p>` : ""}
<div class="overall ${d.overall}" role="status"><span aria-hidden="true">${o.icon}</span> ${o.text}</div>
${d.openUpdates.length ? html`<section aria-labelledby="now-h"><h2 id="now-h">Current incidents</h2><ul class="updates">${d.openUpdates.map(updateItem)}</ul></section>` : ""}
${d.open.length ? html`<section aria-labelledby="open-h"><h2 id="open-h">Ongoing incidents</h2><ul class="incidents">${d.open.map(incidentItem)}</ul></section>` : ""}
${d.maintenance.length ? html`<section aria-labelledby="maint-h"><h2 id="maint-h">Maintenance</h2><p class="muted">Under way, or starting within ${UPCOMING_MAINTENANCE_DAYS} days.</p><ul class="incidents">${d.maintenance.map(maintenanceItem)}</ul></section>` : ""}
<section aria-labelledby="mon-h"><h2 id="mon-h">Services</h2>
${d.monitors.length === 0 ? html`<p class="muted">No services are listed on this page yet.</p>` : sectionsView(d.sections)}
</section>
${d.recentUpdates.length ? html`<section aria-labelledby="upd-h"><h2 id="upd-h">Updates of the last ${RECENT_DAYS} days</h2><ul class="updates">${d.recentUpdates.map(updateItem)}</ul></section>` : ""}
<section aria-labelledby="past-h"><h2 id="past-h">Recent incidents</h2>
${d.recent.length ? html`<ul class="incidents">${d.recent.map(incidentItem)}</ul>` : html`<p class="muted">No incidents in the last 14 days.</p>`}
</section>
${links.subscribe ? html`<section aria-labelledby="sub-h" id="subscribe"><h2 id="sub-h">Get updates by email</h2>
<form method="post" action="${links.subscribe}" class="subscribe"><label for="sub-email">Email address</label><input type="email" id="sub-email" name="email" autocomplete="email" required maxlength="254"><button type="submit">Subscribe</button></form>
<p class="muted">You get a link to confirm first. Then every update and every incident here comes by mail, each with a link to unsubscribe.</p></section>` : ""}
</main>
<footer><span data-tz-label="Times in your time zone (UTC on hover)">Times in UTC</span> · <a href="${links.json}">JSON</a> · <a href="${links.badge}">Badge</a>${links.feed ? html` · <a href="${links.feed}">Atom feed</a>` : ""} · Powered by Vigil</footer>
</div>`;
  return statusShell(p.name, p.theme, body, links.feed);
}

export function statusMessagePage(theme: string, title: string, message: SafeHtml): string {
  return statusShell(title, theme, html`<main class="center"><h1>${title}</h1>${message}</main>`);
}
