import { Elysia } from "elysia";
import { ACCESS_TOKEN_MIN, STATUS_PAGE_FIELDS, type StatusPageAttributeName, type StatusPageAttributes } from "../domain/status-page-schema.ts";
import { pathId } from "../http/path-id.ts";
import { allItems } from "../services/items.ts";
import { listMonitors, type MonitorItem } from "../services/monitors.ts";
import { createStatusPage, deleteStatusPage, getStatusPage, listStatusPages, updateStatusPage, verifyCustomDomain, type StatusPageItem } from "../services/status-pages.ts";
import { errorSummary, fieldFromSchema, formToAttributes, renderField, validationDetails, type Errors, type FieldSpec, type Mode } from "./forms/fields.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type Signed } from "./routing.ts";
import { updatesPanel } from "./status-page-update-editor.ts";
import { addressNotice, csrfField, dashboardPage, flash } from "./views/layout.ts";
import { confirmDelete } from "./views/monitor-views.ts";
import { when } from "./views/widgets.ts";
import type { WebContext } from "./web-context.ts";

/** Status page editor: list, create, edit (with the monitors to show), delete; through services/status-pages.ts. */

const LABELS: Record<Exclude<StatusPageAttributeName, "external_id">, [string, string?]> = {
  name: ["Name"],
  slug: ["Slug", "the address: /s/<slug>; generated from the name when left empty"],
  headline: ["Headline"],
  description: ["Description"],
  is_public: ["Public (off: only signed-in users of this account)"],
  is_enabled: ["Enabled (off: the page answers 404)"],
  is_token_protected: ["Require an access token", "one is made for you when the field below is left empty"],
  access_token: ["Access token", "visitors open the page once with ?token=<token>; generated when left empty"],
  public_theme: ["Theme"],
  custom_domain: ["Custom domain", "a host name (CNAME to this server) that serves this page at / once verified by a DNS record (shown after saving)"],
  monitor_ids: ["Monitors shown"],
};

function pageFields(monitors: MonitorItem[]): FieldSpec[] {
  // external_id is set by configuration files (README "Configuration as code"), not on the form
  return Object.entries(STATUS_PAGE_FIELDS).filter(([name]) => Object.hasOwn(LABELS, name)).map(([name, f]) => {
    const [label, hint] = LABELS[name as keyof typeof LABELS];
    if (name === "monitor_ids") return { name, label, hint, widget: "choices" as const, nullable: false, choices: monitors.map((m) => ({ value: m.id, label: m.attributes.name })) };
    return fieldFromSchema(name, f.schema, label, hint);
  });
}

/**
 * The monitors shown, in order, from a submitted form: the chosen list's hidden fields as they come
 * (document order is the page's order), then the ones ticked in the picker, then a pressed Up, Down
 * or Remove button applied. `moved` says a button other than Save was pressed: the form is shown
 * again, nothing saved.
 */
export function chosenOrder(form: URLSearchParams): { ids: number[]; moved: boolean } {
  const ids: number[] = [];
  const push = (v: string) => {
    if (!/^\d{1,15}$/.test(v)) return;
    const id = Number(v);
    if (!ids.includes(id)) ids.push(id);
  };
  form.getAll("monitor_ids").forEach(push);
  form.getAll("add_monitor_ids").forEach(push);
  const op = /^(up|down|remove|add):?(\d{0,15})$/.exec(form.get("order") ?? "");
  if (!op) return { ids, moved: false };
  const i = ids.indexOf(Number(op[2]));
  if (i >= 0 && op[1] === "remove") ids.splice(i, 1);
  else if (i > 0 && op[1] === "up") ids.splice(i - 1, 2, ids[i]!, ids[i - 1]!);
  else if (i >= 0 && i < ids.length - 1 && op[1] === "down") ids.splice(i, 2, ids[i + 1]!, ids[i]!);
  return { ids, moved: true };
}

/**
 * The monitors shown: the chosen ones as an ordered list (hidden fields carry the order; Up, Down
 * and Remove are submit buttons, so they work without script, and app.client.js moves the rows in
 * place instead), then a scrolling picker of the others with a search box.
 */
function monitorPicker(monitors: MonitorItem[], chosen: number[], errors: Errors): SafeHtml {
  const names = new Map(monitors.map((m) => [m.id, m.attributes.name]));
  const rest = monitors.filter((m) => !chosen.includes(m.id));
  const msgs = errors.monitor_ids ?? [];
  const button = (op: string, id: number, text: string, name: string) => html`<button type="submit" class="btn small" name="order" value="${op}:${id}" data-order-op="${op}" aria-label="${text} ${name}">${text}</button>`;
  return html`<fieldset class="field" id="f-monitor_ids"${msgs.length ? html` aria-invalid="true" aria-describedby="f-monitor_ids-err"` : ""}><legend>Monitors shown</legend>
<span class="hint">shown on the page in this order</span>
<ol class="chosen" data-order-list>${chosen.map((id) => {
    const name = names.get(id) ?? `monitor ${id}`;
    return html`<li data-order-item><input type="hidden" name="monitor_ids" value="${id}"><span class="name">${name}</span><span class="ops">${button("up", id, "Up", name)}${button("down", id, "Down", name)}${button("remove", id, "Remove", name)}</span></li>`;
  })}</ol>
${chosen.length ? "" : html`<p class="muted">None chosen yet.</p>`}
${msgs.length ? html`<span class="err" id="f-monitor_ids-err">${msgs.map((m) => `Monitors shown ${m}`).join("; ")}</span>` : ""}
${rest.length ? html`<div class="pick-add"><div class="field" data-filter-box hidden><label for="pick-filter">Find a monitor to add</label><input type="search" id="pick-filter" data-filter="pick-list" autocomplete="off"></div>
<div class="pick"><fieldset id="pick-list"><legend>Add to the page (at the end)</legend>${rest.map((m) => html`<div class="check"><input type="checkbox" id="add-${m.id}" name="add_monitor_ids" value="${m.id}"> <label for="add-${m.id}">${m.attributes.name}</label></div>`)}<p class="muted" data-filter-empty hidden>No monitor matches.</p></fieldset></div>
<button type="submit" class="btn" name="order" value="add">Add the ticked monitors</button></div>` : ""}
</fieldset>`;
}

const pageId = (s: Signed) => pathId(s.params, "status page");

/**
 * The custom domain's state: serving since its verification, or the TXT record to publish and a
 * button that checks it (README "Custom domains").
 */
function customDomainPanel(s: Signed, p: StatusPageItem): SafeHtml {
  const a = p.attributes;
  const v = a.custom_domain_verification;
  if (a.custom_domain === null || v === null) return html``;
  if (a.custom_domain_verified_at !== null) {
    return html`<div class="panel" id="custom-domain"><h2>Custom domain</h2><p><strong>${a.custom_domain}</strong> is verified (${when(a.custom_domain_verified_at)}): it serves this page at <span class="mono">/</span>.</p></div>`;
  }
  return html`<div class="panel" id="custom-domain"><h2>Custom domain</h2><p><strong>${a.custom_domain}</strong> does not serve this page yet. To prove the name is yours, publish this DNS record, then verify it:</p>
<dl class="kv"><dt>Type</dt><dd class="mono">${v.record_type}</dd><dt>Name</dt><dd class="mono">${v.record_name}</dd><dt>Value</dt><dd class="mono">${v.record_value}</dd></dl>
<form method="post" action="/status-pages/${p.id}/custom-domain/verify">${csrfField(s.session)}<button class="btn" type="submit">Verify now</button></form></div>`;
}

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
      ? html`<div class="panel"><p>Address: <a href="${publicUrl(s, target, false)}">${publicUrl(s, target, false)}</a></p>${target.attributes.is_token_protected ? html`<p>Link with the access token (share it with the people who may see the page):</p><div class="copy"><label class="sr-only" for="share">Link with token</label><input type="text" id="share" readonly class="mono" value="${publicUrl(s, target, true)}"><button type="button" data-copy="share" hidden>Copy</button></div>` : ""}${app.config.baseUrlFixed ? "" : addressNotice(web.publicBase(s.request, s.socketIp))}${app.config.smtpUrl && !app.config.baseUrlFixed ? html`<p class="hint notice">Email subscriptions are off: their mail links back here, and only <code>--base-url</code> says where here is. Start Vigil with it to offer them.</p>` : ""}</div>`
      : "";
    const body = html`${flash(msg)}<h1>${title}</h1>${target ? shortToken(target) : ""}${share}${target ? customDomainPanel(s, target) : ""}${errorSummary(errors, fields)}
<form method="post" action="${mode === "create" ? "/status-pages" : `/status-pages/${target!.id}`}" novalidate>${csrfField(s.session)}
<div class="panel">${fields.filter((f) => f.name !== "monitor_ids").map((f) => renderField(f, values[f.name], errors))}${monitorPicker(monitors, Array.isArray(values.monitor_ids) ? (values.monitor_ids as number[]) : [], errors)}</div>
<div class="row"><button class="primary" type="submit">${mode === "create" ? "Create status page" : "Save changes"}</button><a class="btn" href="/status-pages">Cancel</a></div></form>
${target ? await updatesPanel(web, s, target) : ""}`;
    return page(s, title, body, status);
  }

  async function save(s: Signed, mode: Mode, target?: StatusPageItem) {
    const monitors = await allMonitors(s);
    const attrs = formToAttributes(pageFields(monitors).filter((f) => f.name !== "monitor_ids"), s.form, mode);
    const order = chosenOrder(s.form);
    attrs.monitor_ids = order.ids;
    // Up, Down, Remove or Add: the same form again with the new list, nothing saved yet
    if (order.moved) return form(s, mode, { ...target?.attributes, ...attrs }, {}, target);
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
    .post(
      "/status-pages/:id/custom-domain/verify",
      route(async (s) => {
        const p = await getStatusPage(app, s.actor, pageId(s));
        try {
          await verifyCustomDomain(app, s.actor, p.id);
          return redirect(`/status-pages/${p.id}/edit?msg=verified`);
        } catch (e) {
          const details = validationDetails(e);
          if (!details) throw e;
          return form(s, "edit", p.attributes, details, p, 422);
        }
      }),
    )
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

