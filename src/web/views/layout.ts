import type { SaturationReport } from "../../domain/saturation-report.ts";
import type { SessionRecord } from "../../auth/sessions.ts";
import { ASSETS } from "../assets.ts";
import type { Flash } from "../../auth/session-flash.ts";
import { html, type SafeHtml } from "../html.ts";

export type Section = "monitors" | "groups" | "status-pages" | "tokens" | "channels" | "maintenance";

const NAV: { id: Section; href: string; text: string }[] = [
  { id: "monitors", href: "/", text: "Monitors" },
  { id: "groups", href: "/groups", text: "Groups" },
  { id: "status-pages", href: "/status-pages", text: "Status pages" },
  { id: "maintenance", href: "/maintenance", text: "Maintenance" },
  { id: "channels", href: "/channels", text: "Notifications" },
  { id: "tokens", href: "/tokens", text: "API tokens" },
];

/** Fixed flash messages chosen by a key in the query, so no text from the URL is ever shown. */
const FLASH: Record<string, string> = {
  created: "Created.",
  saved: "Saved.",
  deleted: "Deleted.",
  paused: "Paused: no checks run until it is resumed.",
  resumed: "Resumed: a check runs now.",
  rotated: "New ping URL: the old one stopped working.",
  revoked: "Token revoked.",
  reordered: "Order saved.",
  verified: "Custom domain verified: it serves this page now.",
};

export function flash(key: string | null): SafeHtml {
  const text = key ? FLASH[key] : undefined;
  return text ? html`<div class="alert ok" role="status">${text}</div>` : html``;
}

/** A form's result carried over its redirect (auth/session-flash.ts); a secret in a field to copy. */
export function storedFlash(f: Flash | null): SafeHtml {
  if (!f) return html``;
  const copy = f.secret
    ? html`<div class="copy"><label class="sr-only" for="flash-secret">Value to copy</label><input type="text" id="flash-secret" class="mono" readonly value="${f.secret}"><button type="button" data-copy="flash-secret" hidden>Copy</button></div>`
    : "";
  return f.tone === "ok" ? html`<div class="alert ok" role="status"><p>${f.text}</p>${copy}</div>` : html`<div class="alert error" role="alert"><p>${f.text}</p>${copy}</div>`;
}

function head(title: string): SafeHtml {
  return html`<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Vigil</title><link rel="icon" href="/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="${ASSETS.dashboardCss.url}"><script src="${ASSETS.appJs.url}" defer></script>`;
}

const count = (n: number) => Math.round(n).toLocaleString("en-US");
const duration = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toLocaleString("en-US", { maximumFractionDigits: 1 })} s`);

/**
 * Shown on every dashboard page while the scheduler is saturated (README "State, scheduling and
 * incidents"): what is late, by how much, and what it means for the checks recorded meanwhile.
 */
export function saturationBanner(r: SaturationReport | null): SafeHtml {
  if (!r) return html``;
  const since = r.since === null ? "" : ` since ${new Date(r.since).toISOString().slice(11, 19)} UTC`;
  return html`<div class="alert warn saturation" role="status"><strong>Checks are running late on this server${since}.</strong>
It is asked for ${count(r.checks_per_sec_asked)} checks a second and starts ${count(r.checks_per_sec_started)} a second;
${count(r.in_flight)} of its ${count(r.max_concurrent)} check slots are busy and ${count(r.waiting)} due checks are waiting for one
(the longest for ${duration(r.oldest_wait_ms)}); checks start up to ${duration(r.lateness_p99_ms)} late (p99; on time means within ${duration(r.bound_ms)}).
Checks are still recorded, but their latency includes this server's own delay, so it does not make a monitor degraded meanwhile:
those checks say "not judged". Fewer checks a second (longer intervals, fewer monitors), or a higher --max-concurrent-checks
when the processor has room to spare, ends it.</div>`;
}

export function dashboardPage(o: { title: string; session: SessionRecord; section: Section; body: SafeHtml; saturation?: SaturationReport | null }): string {
  return html`<!doctype html>
<html lang="en"><head>${head(o.title)}</head>
<body><a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/">Vigil</a>
<nav aria-label="Main"><ul>${NAV.map((n) => html`<li><a href="${n.href}"${n.id === o.section ? html` aria-current="page"` : ""}>${n.text}</a></li>`)}</ul></nav>
<div class="who"><span>${o.session.username} · ${o.session.account_name}</span>
<form class="inline" method="post" action="/logout"><input type="hidden" name="_csrf" value="${o.session.csrf_token}"><button type="submit">Sign out</button></form></div>
</header>
<main id="main">${saturationBanner(o.saturation ?? null)}${o.body}</main></body></html>`.value;
}

/** Sign-in and first-run setup: no navigation, no session yet. */
export function authPage(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en"><head>${head(title)}</head>
<body><main id="main" class="auth">${body}</main></body></html>`.value;
}

export function errorPage(session: SessionRecord, section: Section, title: string, message: string): string {
  return dashboardPage({ title, session, section, body: html`<h1>${title}</h1><p>${message}</p><p><a href="/">Back to monitors</a></p>` });
}

/**
 * Under a link built from the address the browser used (no --base-url): it works from where the
 * user is, but maybe not for someone they share it with (README "Dashboard").
 */
export function addressNotice(base: string, flag: "--base-url" | "--heartbeat-url" = "--base-url"): SafeHtml {
  return html`<p class="hint notice">This address follows the one your browser used (<span class="mono">${base}</span>). To give Vigil one fixed public address, start it with <code>${flag} https://vigil.example.com</code>.</p>`;
}

export function csrfField(session: { csrf_token: string }): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${session.csrf_token}">`;
}
