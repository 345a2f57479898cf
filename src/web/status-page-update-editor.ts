import { Elysia } from "elysia";
import { UPDATE_FIELDS, type UpdateAttributeName, type UpdateAttributes } from "../domain/status-page-update-schema.ts";
import { pathId } from "../http/path-id.ts";
import type { Actor } from "../services/actor.ts";
import { allItems } from "../services/items.ts";
import { affectableMonitors, createUpdate, deleteUpdate, getUpdate, listUpdates, updateUpdate, type UpdateItem } from "../services/status-page-updates.ts";
import { getStatusPage, type StatusPageItem } from "../services/status-pages.ts";
import { errorSummary, fieldFromSchema, formToAttributes, renderField, validationDetails, type Errors, type FieldSpec, type Mode } from "./forms/fields.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type Signed } from "./routing.ts";
import { KIND_LABEL, STATUS_LABEL } from "./status/update-labels.ts";
import { csrfField, dashboardPage } from "./views/layout.ts";
import { confirmDelete } from "./views/monitor-views.ts";
import { when } from "./views/widgets.ts";
import type { WebContext } from "./web-context.ts";

/**
 * Updates people write on a status page (README "Groups, tags and status page updates"): the list on
 * the page's edit screen, and write, change, delete; through services/status-page-updates.ts. Every
 * form that changes something answers with a redirect to the page's edit screen.
 */
const LABELS: Record<UpdateAttributeName, [string, string?]> = {
  title: ["Title"],
  body: ["Text", "plain text; line breaks are kept, nothing is read as HTML"],
  kind: ["Kind", "incident: something is wrong; maintenance: planned work; info: anything else"],
  status: ["Incident status", "incidents only: investigating, identified, monitoring, then resolved; leave it at (none) for maintenance and info"],
  affected_monitor_ids: ["Affected services"],
  published_at: ["Published at", "UTC, e.g. 2026-11-24T09:30:00Z; empty means now; a later time keeps it hidden until then"],
};

function updateFields(pageMonitors: { value: number; label: string }[]): FieldSpec[] {
  return Object.entries(UPDATE_FIELDS).map(([name, f]) => {
    const [label, hint] = LABELS[name as UpdateAttributeName];
    if (name === "affected_monitor_ids") return { name, label, hint, widget: "choices" as const, nullable: false, choices: pageMonitors };
    return fieldFromSchema(name, f.schema, label, hint);
  });
}

/** The page's monitors as choices, in page order. */
async function pageMonitorChoices(web: WebContext, actor: Actor, page: StatusPageItem) {
  return (await affectableMonitors(web.app, actor, page.id)).map((m) => ({ value: m.id, label: m.name }));
}

const statusText = (a: UpdateAttributes) => (a.status ? STATUS_LABEL[a.status] : "—");

/** The "Updates" panel of a status page's edit screen. */
export async function updatesPanel(web: WebContext, s: Signed, page: StatusPageItem): Promise<SafeHtml> {
  const updates = await allItems((w) => listUpdates(web.app, s.actor, page.id, w), 5);
  const base = `/status-pages/${page.id}/updates`;
  return html`<section class="panel" aria-labelledby="updates-h" id="updates"><div class="row between"><h2 id="updates-h">Updates</h2><a class="btn primary" href="${base}/new">Write an update</a></div>
<p class="muted">What you write here is shown on the page (open incidents at the top, the last 14 days below) and in its feed.</p>
${updates.length === 0 ? html`<p class="empty">No updates yet.</p>` : html`<table><caption class="sr-only">Updates, newest first</caption><thead><tr><th scope="col">Published</th><th scope="col">Title</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead><tbody>${updates.map((u) => {
    const a = u.attributes;
    return html`<tr><td class="num" data-label="Published">${when(a.published_at)}</td><td data-label="Title">${a.title}</td><td data-label="Kind">${KIND_LABEL[a.kind]}</td><td data-label="Status">${statusText(a)}</td><td data-label="Actions"><span><a href="${base}/${u.id}/edit">Edit</a> · <a href="${base}/${u.id}/delete">Delete</a></span></td></tr>`;
  })}</tbody></table>`}</section>`;
}

export function statusPageUpdateEditorRoutes(web: WebContext) {
  const app = web.app;
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "status-pages", h);
  const page = (s: Signed, title: string, body: SafeHtml, status = 200) => send(s.request, dashboardPage({ title, session: s.session, section: "status-pages", body, saturation: web.saturation() }), { status });
  const statusPage = (s: Signed) => getStatusPage(app, s.actor, pathId(s.params, "status page"));
  const updateId = (s: Signed) => pathId(s.params, "status page update", "updateId");
  const back = (p: StatusPageItem, msg: string) => redirect(`/status-pages/${p.id}/edit?msg=${msg}#updates`);

  async function form(s: Signed, p: StatusPageItem, mode: Mode, values: Record<string, unknown>, errors: Errors, target?: UpdateItem, status = 200) {
    const fields = updateFields(await pageMonitorChoices(web, s.actor, p));
    const title = mode === "create" ? `New update on ${p.attributes.name}` : `Edit update: ${target!.attributes.title}`;
    const action = mode === "create" ? `/status-pages/${p.id}/updates` : `/status-pages/${p.id}/updates/${target!.id}`;
    const body = html`<h1>${title}</h1>${errorSummary(errors, fields)}
<form method="post" action="${action}" novalidate>${csrfField(s.session)}
<div class="panel">${fields.map((f) => renderField(f, values[f.name], errors))}</div>
<div class="row"><button class="primary" type="submit">${mode === "create" ? "Publish update" : "Save changes"}</button><a class="btn" href="/status-pages/${p.id}/edit#updates">Cancel</a></div></form>`;
    return page(s, title, body, status);
  }

  async function save(s: Signed, mode: Mode) {
    const p = await statusPage(s);
    const target = mode === "edit" ? await getUpdate(app, s.actor, p.id, updateId(s)) : undefined;
    const attrs = formToAttributes(updateFields(await pageMonitorChoices(web, s.actor, p)), s.form, mode);
    try {
      if (target) await updateUpdate(app, s.actor, p.id, target.id, attrs);
      else await createUpdate(app, s.actor, p.id, attrs);
      return back(p, mode === "create" ? "created" : "saved");
    } catch (e) {
      const details = validationDetails(e);
      if (!details) throw e;
      return form(s, p, mode, { ...target?.attributes, ...attrs }, details, target, 422);
    }
  }

  return new Elysia({ name: "web-status-page-updates" })
    .onParse(leaveBodyUnread)
    .get("/status-pages/:id/updates/new", route(async (s) => form(s, await statusPage(s), "create", { kind: "incident", status: "investigating", affected_monitor_ids: [] }, {})))
    .post("/status-pages/:id/updates", route((s) => save(s, "create")))
    .get(
      "/status-pages/:id/updates/:updateId/edit",
      route(async (s) => {
        const p = await statusPage(s);
        const u = await getUpdate(app, s.actor, p.id, updateId(s));
        return form(s, p, "edit", u.attributes, {}, u);
      }),
    )
    .post("/status-pages/:id/updates/:updateId", route((s) => save(s, "edit")))
    .get(
      "/status-pages/:id/updates/:updateId/delete",
      route(async (s) => {
        const p = await statusPage(s);
        const u = await getUpdate(app, s.actor, p.id, updateId(s));
        return page(s, "Delete update", confirmDelete({ what: "update", name: u.attributes.title, action: `/status-pages/${p.id}/updates/${u.id}/delete`, back: `/status-pages/${p.id}/edit#updates`, session: s.session, consequence: "It leaves the status page and its feed." }));
      }),
    )
    .post(
      "/status-pages/:id/updates/:updateId/delete",
      route(async (s) => {
        const p = await statusPage(s);
        await deleteUpdate(app, s.actor, p.id, updateId(s));
        return back(p, "deleted");
      }),
    );
}
