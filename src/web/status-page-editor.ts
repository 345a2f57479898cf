import { Elysia } from "elysia";
import { ACCESS_TOKEN_MIN, STATUS_PAGE_FIELDS, type StatusPageAttributeName, type StatusPageAttributes } from "../domain/status-page-schema.ts";
import { pathId } from "../http/path-id.ts";
import { allItems } from "../services/items.ts";
import { listMonitors, type MonitorItem } from "../services/monitors.ts";
import { createStatusPage, deleteStatusPage, getStatusPage, listStatusPages, updateStatusPage, type StatusPageItem } from "../services/status-pages.ts";
import { errorSummary, fieldFromSchema, formToAttributes, renderField, validationDetails, type Errors, type FieldSpec, type Mode } from "./forms/fields.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type Signed } from "./routing.ts";
import { updatesPanel } from "./status-page-update-editor.ts";
import { addressNotice, csrfField, dashboardPage, flash } from "./views/layout.ts";
import { confirmDelete } from "./views/monitor-views.ts";
import type { WebContext } from "./web-context.ts";

/** Status page editor: list, create, edit (with the monitors to show), delete; through services/status-pages.ts. */

const LABELS: Record<StatusPageAttributeName, [string, string?]> = {
  name: ["Name"],
  slug: ["Slug", "the address: /s/<slug>; generated from the name when left empty"],
  headline: ["Headline"],
  description: ["Description"],
  is_public: ["Public (off: only signed-in users of this account)"],
  is_enabled: ["Enabled (off: the page answers 404)"],
  is_token_protected: ["Require an access token"],
  access_token: ["Access token", "visitors open the page once with ?token=<token>; generated when left empty"],
  public_theme: ["Theme"],
  custom_domain: ["Custom domain", "a host name (CNAME to this server) that serves this page at /"],
  monitor_ids: ["Monitors shown", "in this order"],
};

function pageFields(monitors: MonitorItem[]): FieldSpec[] {
  return Object.entries(STATUS_PAGE_FIELDS).map(([name, f]) => {
    const [label, hint] = LABELS[name as StatusPageAttributeName];
    if (name === "monitor_ids") return { name, label, hint, widget: "choices" as const, nullable: false, choices: monitors.map((m) => ({ value: m.id, label: m.attributes.name })) };
    return fieldFromSchema(name, f.schema, label, hint);
  });
}

const pageId = (s: Signed) => pathId(s.params, "status page");

export function statusPageEditorRoutes(web: WebContext) {
  const app = web.app;
  const allMonitors = (s: Signed) => allItems((w) => listMonitors(app, s.actor, {}, w));
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "status-pages", h);
  const page = (s: Signed, title: string, body: SafeHtml, status = 200) => send(s.request, dashboardPage({ title, session: s.session, section: "status-pages", body, saturation: web.saturation() }), { status });
  const publicUrl = (s: Signed, p: StatusPageItem, withToken: boolean) => {
    const a = p.attributes;
    const url = `${web.publicBase(s.request, s.socketIp)}/s/${a.slug}`;
    return withToken && a.is_token_protected && typeof a.access_token === "string" ? `${url}?token=${encodeURIComponent(a.access_token)}` : url;
  };

  /** A token set before the 16-character minimum keeps working; its page says to replace it. */
  const shortToken = (p: StatusPageItem) =>
    p.attributes.is_token_protected && typeof p.attributes.access_token === "string" && p.attributes.access_token.length < ACCESS_TOKEN_MIN
      ? html`<div class="alert warn" role="status">This page's access token is shorter than ${ACCESS_TOKEN_MIN} characters, easier to guess than new tokens may be. It still works; empty the Access token field and save to get a new one (the old links stop working).</div>`
      : "";

  async function form(s: Signed, mode: Mode, values: Record<string, unknown>, errors: Errors, target?: StatusPageItem, status = 200, msg: string | null = null) {
    const monitors = await allMonitors(s);
    const fields = pageFields(monitors);
    const title = mode === "create" ? "New status page" : `Edit ${target!.attributes.name}`;
    const share = target
      ? html`<div class="panel"><p>Address: <a href="${publicUrl(s, target, false)}">${publicUrl(s, target, false)}</a></p>${target.attributes.is_token_protected ? html`<p>Link with the access token (share it with the people who may see the page):</p><div class="copy"><label class="sr-only" for="share">Link with token</label><input type="text" id="share" readonly class="mono" value="${publicUrl(s, target, true)}"><button type="button" data-copy="share" hidden>Copy</button></div>` : ""}${app.config.baseUrlFixed ? "" : addressNotice(web.publicBase(s.request, s.socketIp))}</div>`
      : "";
    const body = html`${flash(msg)}<h1>${title}</h1>${target ? shortToken(target) : ""}${share}${errorSummary(errors, fields)}
<form method="post" action="${mode === "create" ? "/status-pages" : `/status-pages/${target!.id}`}" novalidate>${csrfField(s.session)}
<div class="panel">${fields.map((f) => renderField(f, values[f.name], errors))}</div>
<div class="row"><button class="primary" type="submit">${mode === "create" ? "Create status page" : "Save changes"}</button><a class="btn" href="/status-pages">Cancel</a></div></form>
${target ? await updatesPanel(web, s, target) : ""}`;
    return page(s, title, body, status);
  }

  async function save(s: Signed, mode: Mode, target?: StatusPageItem) {
    const monitors = await allMonitors(s);
    const attrs = formToAttributes(pageFields(monitors), s.form, mode);
    if (mode === "create" && attrs.slug === null) delete attrs.slug; // empty slug: generated from the name
    try {
      const saved = mode === "create" ? await createStatusPage(app, s.actor, attrs) : await updateStatusPage(app, s.actor, target!.id, attrs);
      return redirect(`/status-pages/${saved.id}/edit?msg=${mode === "create" ? "created" : "saved"}`);
    } catch (e) {
      const details = validationDetails(e);
      if (!details) throw e;
      return form(s, mode, { ...target?.attributes, ...attrs }, details, target, 422);
    }
  }

  return new Elysia({ name: "web-status-page-editor" })
    .onParse(leaveBodyUnread)
    .get(
      "/status-pages",
      route(async (s) => {
        const pages = await allItems((w) => listStatusPages(app, s.actor, {}, w));
        const body = html`${flash(s.url.searchParams.get("msg"))}<div class="row between"><h1>Status pages</h1><a class="btn primary" href="/status-pages/new">New status page</a></div>
${pages.length === 0 ? html`<p class="empty">No status pages yet.</p>` : html`<table><caption class="sr-only">Status pages</caption><thead><tr><th scope="col">Name</th><th scope="col">Address</th><th scope="col">Access</th><th scope="col">Monitors</th><th scope="col">Actions</th></tr></thead><tbody>${pages.map((p) => {
          const a = p.attributes;
          const access = [a.is_enabled ? "" : "disabled", a.is_public ? "public" : "private", a.is_token_protected ? "token" : "", `${a.public_theme} theme`].filter(Boolean).join(", ");
          return html`<tr><td data-label="Name">${a.name}</td><td data-label="Address"><a href="/s/${a.slug}">/s/${a.slug}</a></td><td data-label="Access">${access}</td><td class="num" data-label="Monitors">${a.monitor_ids.length}</td><td><a href="/status-pages/${p.id}/edit">Edit</a> · <a href="/status-pages/${p.id}/delete">Delete</a></td></tr>`;
        })}</tbody></table>`}`;
        return page(s, "Status pages", body);
      }),
    )
    .get("/status-pages/new", route((s) => form(s, "create", { is_public: true, is_enabled: true, is_token_protected: false, public_theme: "light", monitor_ids: [] } satisfies Partial<StatusPageAttributes>, {})))
    .post("/status-pages", route((s) => save(s, "create")))
    .get(
      "/status-pages/:id/edit",
      route(async (s) => {
        const p = await getStatusPage(app, s.actor, pageId(s));
        return form(s, "edit", p.attributes, {}, p, 200, s.url.searchParams.get("msg"));
      }),
    )
    .post("/status-pages/:id", route(async (s) => save(s, "edit", await getStatusPage(app, s.actor, pageId(s)))))
    .get(
      "/status-pages/:id/delete",
      route(async (s) => {
        const p = await getStatusPage(app, s.actor, pageId(s));
        return page(s, "Delete status page", confirmDelete({ what: "status page", name: p.attributes.name, action: `/status-pages/${p.id}/delete`, back: "/status-pages", session: s.session, consequence: "Its address stops working; the monitors are not affected." }));
      }),
    )
    .post(
      "/status-pages/:id/delete",
      route(async (s) => {
        await deleteStatusPage(app, s.actor, pageId(s));
        return redirect("/status-pages?msg=deleted");
      }),
    );
}

