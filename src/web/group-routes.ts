import { Elysia } from "elysia";
import { GROUP_FIELDS, SORT_ORDER_MAX, type GroupAttributeName } from "../domain/group-schema.ts";
import { pathId } from "../http/path-id.ts";
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup, type GroupItem } from "../services/groups.ts";
import { allItems } from "../services/items.ts";
import { errorSummary, fieldFromSchema, formToAttributes, renderField, validationDetails, type Errors, type FieldSpec, type Mode } from "./forms/fields.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type Signed } from "./routing.ts";
import { csrfField, dashboardPage, flash } from "./views/layout.ts";
import { confirmDelete } from "./views/monitor-views.ts";
import type { WebContext } from "./web-context.ts";

/**
 * Groups of monitors: list (with their order, saved at once), create, rename, delete; through
 * services/groups.ts (README "Groups, tags and status page updates").
 */
// external_id belongs to configuration files (README "Configuration as code"), not to the form
const LABELS: Record<Exclude<GroupAttributeName, "external_id">, [string, string?]> = {
  name: ["Name"],
  description: ["Description"],
  sort_order: ["Order", "groups are listed by this number, smallest first, then by name"],
};

const FIELDS: FieldSpec[] = Object.entries(GROUP_FIELDS).filter(([name]) => Object.hasOwn(LABELS, name)).map(([name, f]) => {
  const [label, hint] = LABELS[name as keyof typeof LABELS];
  return fieldFromSchema(name, f.schema, label, hint);
});

const groupId = (s: Signed) => pathId(s.params, "group");

export function groupRoutes(web: WebContext) {
  const app = web.app;
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "groups", h);
  const page = (s: Signed, title: string, body: SafeHtml, status = 200) => send(s.request, dashboardPage({ title, session: s.session, section: "groups", body, saturation: web.saturation() }), { status });
  const all = (s: Signed) => allItems((w) => listGroups(app, s.actor, w));

  function groupForm(s: Signed, mode: Mode, values: Record<string, unknown>, errors: Errors, target?: GroupItem): SafeHtml {
    return html`${errorSummary(errors, FIELDS)}<form method="post" action="${mode === "create" ? "/groups" : `/groups/${target!.id}`}" novalidate>${csrfField(s.session)}
<div class="panel">${FIELDS.map((f) => renderField(f, values[f.name], errors))}</div>
<div class="row"><button class="primary" type="submit">${mode === "create" ? "Create group" : "Save changes"}</button>${mode === "edit" ? html`<a class="btn" href="/groups">Cancel</a>` : ""}</div></form>`;
  }

  async function list(s: Signed, o: { values?: Record<string, unknown>; errors?: Errors; orderErrors?: string[]; status?: number } = {}) {
    const groups = await all(s);
    const orderForm = html`<form method="post" action="/groups/order" novalidate>${csrfField(s.session)}
<table><caption class="sr-only">Groups, in the order they are shown</caption><thead><tr><th scope="col">Order</th><th scope="col">Name</th><th scope="col" class="wide-only">Description</th><th scope="col">Monitors</th><th scope="col">Actions</th></tr></thead><tbody>${groups.map((g) => {
      const a = g.attributes;
      // on a phone each row is a card and data-label names each of its fields (dashboard.css); a
      // cell holds one element, so its parts stay together beside the label
      return html`<tr><td data-label="Order"><label class="sr-only" for="order-${g.id}">Order of ${a.name}</label><input class="order" type="number" inputmode="numeric" id="order-${g.id}" name="order_${g.id}" value="${a.sort_order}"></td><td data-label="Name"><a href="/?group_id=${g.id}">${a.name}</a></td><td class="wide-only" data-label="Description">${a.description ?? ""}</td><td class="num" data-label="Monitors">${a.monitor_count}</td><td data-label="Actions"><span><a href="/groups/${g.id}/edit">Rename</a> · <a href="/groups/${g.id}/delete">Delete</a></span></td></tr>`;
    })}</tbody></table>
<div class="row"><button type="submit">Save order</button><span class="muted">Smallest first; groups with the same number are listed by name.</span></div></form>`;
    const body = html`${flash(s.url.searchParams.get("msg"))}<h1>Groups</h1>
<p>Groups are the sections of the monitor list and of status pages. Put a monitor in a group from its form.</p>
${o.orderErrors?.length ? html`<div class="alert error" role="alert" tabindex="-1" id="form-errors">${o.orderErrors.join(" ")}</div>` : ""}
${groups.length === 0 ? html`<p class="empty">No groups yet.</p>` : orderForm}
<section aria-labelledby="new-h"><h2 id="new-h">New group</h2>${groupForm(s, "create", o.values ?? { sort_order: 0 }, o.errors ?? {})}</section>`;
    return page(s, "Groups", body, o.status);
  }

  return new Elysia({ name: "web-groups" })
    .onParse(leaveBodyUnread)
    .get("/groups", route((s) => list(s)))
    .post(
      "/groups",
      route(async (s) => {
        const attrs = formToAttributes(FIELDS, s.form, "create");
        try {
          await createGroup(app, s.actor, attrs);
          return redirect("/groups?msg=created");
        } catch (e) {
          const details = validationDetails(e);
          if (!details) throw e;
          return list(s, { values: attrs, errors: details, status: 422 });
        }
      }),
    )
    .post(
      "/groups/order",
      route(async (s) => {
        const groups = await all(s);
        const problems: string[] = [];
        const changes: { g: GroupItem; order: number }[] = [];
        for (const g of groups) {
          const raw = (s.form.get(`order_${g.id}`) ?? "").trim();
          if (raw === "") continue;
          const order = /^-?\d{1,10}$/.test(raw) ? Number(raw) : NaN;
          if (!Number.isInteger(order) || Math.abs(order) > SORT_ORDER_MAX) problems.push(`The order of ${g.attributes.name} must be a whole number from -${SORT_ORDER_MAX} to ${SORT_ORDER_MAX}.`);
          else if (order !== g.attributes.sort_order) changes.push({ g, order });
        }
        if (problems.length) return list(s, { orderErrors: problems, status: 422 });
        for (const c of changes) await updateGroup(app, s.actor, c.g.id, { sort_order: c.order });
        return redirect("/groups?msg=reordered");
      }),
    )
    .get(
      "/groups/:id/edit",
      route(async (s) => {
        const g = await getGroup(app, s.actor, groupId(s));
        return page(s, `Edit ${g.attributes.name}`, html`<h1>Edit ${g.attributes.name}</h1>${groupForm(s, "edit", g.attributes, {}, g)}`);
      }),
    )
    .post(
      "/groups/:id",
      route(async (s) => {
        const g = await getGroup(app, s.actor, groupId(s));
        const attrs = formToAttributes(FIELDS, s.form, "edit");
        try {
          await updateGroup(app, s.actor, g.id, attrs);
          return redirect("/groups?msg=saved");
        } catch (e) {
          const details = validationDetails(e);
          if (!details) throw e;
          return page(s, `Edit ${g.attributes.name}`, html`<h1>Edit ${g.attributes.name}</h1>${groupForm(s, "edit", { ...g.attributes, ...attrs }, details, g)}`, 422);
        }
      }),
    )
    .get(
      "/groups/:id/delete",
      route(async (s) => {
        const g = await getGroup(app, s.actor, groupId(s));
        const n = g.attributes.monitor_count;
        const consequence = n ? `Its ${n} ${n === 1 ? "monitor stays" : "monitors stay"}, in no group.` : "It holds no monitor.";
        return page(s, "Delete group", confirmDelete({ what: "group", name: g.attributes.name, action: `/groups/${g.id}/delete`, back: "/groups", session: s.session, consequence }));
      }),
    )
    .post(
      "/groups/:id/delete",
      route(async (s) => {
        await deleteGroup(app, s.actor, groupId(s));
        return redirect("/groups?msg=deleted");
      }),
    );
}
