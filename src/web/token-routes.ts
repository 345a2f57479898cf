import { Elysia } from "elysia";
import { SCOPES, type Scope } from "../domain/scopes.ts";
import { holdsNul, NUL_MESSAGE } from "../domain/text-rules.ts";
import { issueAccountToken, listAccountTokens, revokeAccountToken } from "../services/api-tokens.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, notFoundPage, signedIn, type Signed } from "./routing.ts";
import { putFlash, takeFlash } from "../auth/session-flash.ts";
import { csrfField, dashboardPage, flash, storedFlash } from "./views/layout.ts";
import { isoMinute } from "./views/widgets.ts";
import type { WebContext } from "./web-context.ts";

/** API tokens of the signed-in account (services/api-tokens.ts): list (never the values), create with scopes (shown once), revoke. */
export function tokenRoutes(web: WebContext) {
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "tokens", h);
  const page = (s: Signed, body: SafeHtml, status = 200) => send(s.request, dashboardPage({ title: "API tokens", session: s.session, section: "tokens", body, saturation: web.saturation() }), { status });

  /** The form's error summary (focused by the script), linking to the field at fault. */
  const problem = (field: string, name: string, text: string) =>
    html`<div class="alert error" role="alert" tabindex="-1" id="form-errors"><strong>Please correct this problem:</strong><ul><li><a href="#${field}">${name}</a>: ${text}</li></ul></div>`;

  async function list(s: Signed, top: SafeHtml = html``, status = 200) {
    const tokens = await listAccountTokens(web.app, s.actor);
    const result = s.request.method === "GET" ? await takeFlash(web.app, s.session.id_hash, "tokens") : null;
    const body = html`${flash(s.url.searchParams.get("msg"))}${storedFlash(result)}${top}<h1>API tokens</h1>
<p>Tokens authorize <a href="/docs">API v1</a> calls (<code>Authorization: Bearer …</code>). Only a hash is stored: a token is shown once, when it is created.</p>
${tokens.length === 0 ? html`<p class="empty">No tokens.</p>` : html`<table><caption class="sr-only">API tokens</caption><thead><tr><th scope="col">Id</th><th scope="col">Label</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead><tbody>${tokens.map(
      (t) => html`<tr><td class="num" data-label="Id">${t.id}</td><td data-label="Label">${t.label ?? "—"}</td><td data-label="Scopes">${t.scopes.join(", ")}</td><td class="num" data-label="Created">${isoMinute(t.createdAt)}</td><td class="num" data-label="Last used">${isoMinute(t.lastUsedAt)}</td><td data-label="Status">${
        t.revokedAt ? html`revoked ${isoMinute(t.revokedAt)}` : html`<form class="inline" method="post" action="/tokens/${t.id}/revoke" data-confirm="Revoke this token? Clients using it stop working at once.">${csrfField(s.session)}<button class="danger" type="submit">Revoke</button></form>`
      }</td></tr>`,
    )}</tbody></table>`}
<h2>Create a token</h2><form method="post" action="/tokens" class="panel">${csrfField(s.session)}
<div class="field"><label for="label">Label</label><span class="hint">what uses it, e.g. terraform</span><input type="text" id="label" name="label" maxlength="200"></div>
<fieldset><legend>Scopes</legend>${SCOPES.map((sc) => html`<div class="check"><input type="checkbox" id="scope-${sc}" name="scopes" value="${sc}"${sc.endsWith(":read") ? html` checked` : ""}> <label for="scope-${sc}">${sc}</label></div>`)}</fieldset>
<button class="primary" type="submit">Create token</button></form>`;
    return page(s, body, status);
  }

  return new Elysia({ name: "web-tokens" })
    .onParse(leaveBodyUnread)
    .get("/tokens", route((s) => list(s)))
    .post(
      "/tokens",
      route(async (s) => {
        const scopes = [...new Set(s.form.getAll("scopes"))].filter((x): x is Scope => (SCOPES as readonly string[]).includes(x));
        const label = (s.form.get("label") ?? "").trim().slice(0, 200) || null;
        if (!scopes.length) return list(s, problem("scope-monitors:read", "Scopes", "Choose at least one scope."), 422);
        if (label !== null && holdsNul(label)) return list(s, problem("label", "Label", `The label ${NUL_MESSAGE}.`), 422);
        const { token, id } = await issueAccountToken(web.app, s.actor, { scopes, label });
        web.log.info("API token created in the dashboard", { user_id: s.session.user_id, token_id: id });
        // shown once, on the page the browser is sent to: a reload of it creates nothing
        await putFlash(web.app, s.session.id_hash, "tokens", { tone: "ok", text: `Token ${id} created. Copy it now: it is not shown again.`, secret: token });
        return redirect("/tokens");
      }),
    )
    .post(
      "/tokens/:id/revoke",
      route(async (s) => {
        const id = Number(s.params.id);
        if (!Number.isSafeInteger(id) || !(await revokeAccountToken(web.app, s.actor, id))) return notFoundPage(s, "tokens", "token");
        return redirect("/tokens?msg=revoked");
      }),
    );
}
