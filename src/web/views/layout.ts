import type { SessionRecord } from "../../auth/sessions.ts";
import { ASSETS } from "../assets.ts";
import { html, type SafeHtml } from "../html.ts";

export type Section = "monitors" | "status-pages" | "tokens" | "channels";

const NAV: { id: Section; href: string; text: string }[] = [
  { id: "monitors", href: "/", text: "Monitors" },
  { id: "status-pages", href: "/status-pages", text: "Status pages" },
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
};

export function flash(key: string | null): SafeHtml {
  const text = key ? FLASH[key] : undefined;
  return text ? html`<div class="alert ok" role="status">${text}</div>` : html``;
}

function head(title: string): SafeHtml {
  return html`<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Vigil</title><link rel="stylesheet" href="${ASSETS.dashboardCss.url}"><script src="${ASSETS.appJs.url}" defer></script>`;
}

export function dashboardPage(o: { title: string; session: SessionRecord; section: Section; body: SafeHtml }): string {
  return html`<!doctype html>
<html lang="en"><head>${head(o.title)}</head>
<body><a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/">Vigil</a>
<nav aria-label="Main"><ul>${NAV.map((n) => html`<li><a href="${n.href}"${n.id === o.section ? html` aria-current="page"` : ""}>${n.text}</a></li>`)}</ul></nav>
<div class="who"><span>${o.session.username} · ${o.session.account_name}</span>
<form class="inline" method="post" action="/logout"><input type="hidden" name="_csrf" value="${o.session.csrf_token}"><button type="submit">Sign out</button></form></div>
</header>
<main id="main">${o.body}</main></body></html>`.value;
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

export function csrfField(session: { csrf_token: string }): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${session.csrf_token}">`;
}
