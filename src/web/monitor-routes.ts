import { Elysia } from "elysia";
import type { MonitorType } from "../domain/monitor.ts";
import { DAY_MS } from "../domain/uptime.ts";
import { pathId } from "../http/path-id.ts";
import type { Actor } from "../services/actor.ts";
import { listChecks } from "../services/checks.ts";
import { listMonitorEvents } from "../services/events.ts";
import { listIncidents } from "../services/incidents.ts";
import { allItems } from "../services/items.ts";
import { bulkChange, ownedMonitors, type BulkChange } from "../services/monitor-bulk.ts";
import { createMonitor, deleteMonitor, getMonitor, listFigures, listMonitors, manualMaintenanceSwitch, monitorsByUptime, monitorStateCounts, monitorUptime, type MonitorFilter, rotateHeartbeatToken, storedMonitorSecrets, updateMonitor, type MonitorItem } from "../services/monitors.ts";
import { monitorNeighbours } from "../services/monitor-dependencies.ts";
import { listChannels } from "../services/notification-channels.ts";
import { groupNames } from "../services/groups.ts";
import { isTag, TAG_RULE } from "../domain/tags.ts";
import { alertingFields, alertingSection } from "./forms/alerting-section.ts";
import { formToAttributes, validationDetails, type Errors, type FieldSpec } from "./forms/fields.ts";
import { createDefaults, createFixedAttributes, isMonitorType, monitorFields, monitorForm, TYPE_INFO } from "./forms/monitor-form.ts";
import { html } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type RouteCtx, type Signed } from "./routing.ts";
import { dashboardPage } from "./views/layout.ts";
import { dependencyPanel } from "./views/dependency-panel.ts";
import { monitorDetail, monitorDetailParts, type DetailData } from "./views/monitor-detail.ts";
import { bulkFlash, confirmBulkDelete, confirmDelete, filterQuery, LIST_SORTS, LIST_STATES, monitorList, monitorSections, PAGE_SIZE, typePicker, type ListFilter, type ListedGroup, type ListPage, type ListSort, type ListState } from "./views/monitor-views.ts";
import { flash } from "./views/layout.ts";
import type { WebContext } from "./web-context.ts";

/** The monitor screens: list (live), create/edit per type, detail, pause/resume, delete, token rotation. */
const UPTIME_SPANS = [
  { label: "24 h", days: 1 },
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
];

/** Results in each row's bar of recent checks. */
const RECENT_CHECKS = 20;

const monitorId = (s: Signed) => pathId(s.params, "monitor");

async function channelChoices(web: WebContext, actor: Actor) {
  const channels = await allItems((w) => listChannels(web.app, actor, w));
  return {
    choices: channels.map((c) => ({ value: c.id, label: `${c.attributes.name} (${c.attributes.channel_type})` })),
    defaults: channels.filter((c) => c.attributes.default_for_new_monitors).map((c) => c.id),
  };
}

/** The account's groups, in display order. */
async function groupList(web: WebContext, actor: Actor): Promise<ListedGroup[]> {
  return [...(await groupNames(web.app, actor.accountId))].map(([id, name]) => ({ id, name }));
}

/**
 * The list's filters, order and page from the query string (README "Dashboard"): ?q=, ?state=,
 * ?type=, ?group_id=<id>, ?tag= (repeatable, each may hold several tags separated by commas, as the
 * filter form sends them), ?sort=, ?page=. Tags that cannot be tags are left out and said; other
 * values that mean nothing are ignored.
 */
function listFilter(url: URL): { filter: ListFilter; problems: string[] } {
  const p = url.searchParams;
  const group = p.get("group_id") ?? "";
  const tags: string[] = [];
  const problems: string[] = [];
  for (const raw of p.getAll("tag").flatMap((v) => v.split(","))) {
    const tag = raw.trim();
    if (tag === "") continue;
    if (isTag(tag)) tags.push(tag);
    else problems.push(`"${tag.slice(0, 60)}" is not a tag (${TAG_RULE}); it was left out.`);
  }
  const q = (p.get("q") ?? "").trim().slice(0, 200);
  const state = p.get("state");
  const type = p.get("type");
  const sort = p.get("sort") ?? "";
  const page = Number(p.get("page") ?? "1");
  return {
    filter: {
      groupId: /^[1-9]\d{0,14}$/.test(group) ? Number(group) : undefined,
      tags: [...new Set(tags)].slice(0, 20),
      q: q || undefined,
      state: (LIST_STATES as readonly (string | null)[]).includes(state) ? (state as ListState) : undefined,
      type: isMonitorType(type) ? type : undefined,
      sort: Object.hasOwn(LIST_SORTS, sort) ? (sort as ListSort) : undefined,
      page: Number.isSafeInteger(page) && page > 1 ? Math.min(page, 1_000_000) : undefined,
    },
    problems,
  };
}

/**
 * The store's filter for the list's: a state is what a person sees (domain/display-state.ts), so "down"
 * leaves out paused monitors and those in maintenance; `at` is when windows are read.
 */
function storeFilter(f: ListFilter, at: number): MonitorFilter {
  const state =
    f.state === undefined ? {}
    : f.state === "paused" ? { paused: true }
    : f.state === "maintenance" ? { paused: false, maintenance: { at, held: true } }
    : { status: f.state, paused: false, maintenance: { at, held: false } };
  return { groupId: f.groupId, tags: f.tags, q: f.q, type: f.type, ...state };
}

/** Ids from a bulk form: positive whole numbers, at most a page's worth and a bit. */
function formIds(form: URLSearchParams): number[] {
  return [...new Set(form.getAll("id").filter((v) => /^[1-9]\d{0,14}$/.test(v)).map(Number))].slice(0, 1000);
}

/** `customDomain` answers "/" when the Host is a status page's custom domain (no sign-in there). */
export function monitorRoutes(web: WebContext, customDomain: (c: RouteCtx) => Promise<Response | null>) {
  const app = web.app;
  const page = (s: Signed, title: string, body: ReturnType<typeof html>, status = 200) =>
    send(s.request, dashboardPage({ title, session: s.session, section: "monitors", body, saturation: web.saturation() }), { status });
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "monitors", h);
  const filteredMonitors = (actor: Actor, f: ListFilter) => allItems((w) => listMonitors(app, actor, { groupId: f.groupId, tags: f.tags }, w));
  const groupChoices = async (actor: Actor) => (await groupList(web, actor)).map((g) => ({ value: g.id, label: g.name }));

  /** The "Dependencies and alerting" section's fields: the account's other monitors and its channels to pick. */
  async function alertingFor(actor: Actor, self: number | undefined, current: unknown): Promise<FieldSpec[]> {
    const [{ choices: channels }, monitors] = await Promise.all([channelChoices(web, actor), filteredMonitors(actor, { tags: [] })]);
    const picks = monitors.filter((m) => m.id !== self).map((m) => ({ value: m.id, label: `${m.attributes.name} (${m.attributes.monitor_type})` }));
    // a parent beyond the list's bound stays on the form, so saving it keeps the parent
    for (const id of Array.isArray(current) ? current : []) if (typeof id === "number" && !picks.some((p) => p.value === id)) picks.push({ value: id, label: `monitor ${id}` });
    return alertingFields(picks, channels);
  }

  async function renderForm(s: Signed, o: { mode: "create" | "edit"; type: MonitorType; monitor?: MonitorItem; values: Record<string, unknown>; errors: Errors; status?: number }) {
    const { choices } = await channelChoices(web, s.actor);
    const fields = monitorFields(o.type, choices, await groupChoices(s.actor));
    const alerting = await alertingFor(s.actor, o.monitor?.id, o.values.depends_on_ids);
    const section = { fields: alerting, body: alertingSection(alerting, o.values, o.errors) };
    const storedSecrets = o.monitor ? await storedMonitorSecrets(app, s.actor, o.monitor.id) : undefined;
    const action = o.mode === "create" ? "/monitors" : `/monitors/${o.monitor!.id}`;
    const title = o.mode === "create" ? `New ${o.type} monitor` : `Edit ${o.monitor!.attributes.name}`;
    const form = monitorForm({ mode: o.mode, type: o.type, action, fields, values: o.values, errors: o.errors, session: s.session, storedSecrets, section });
    return page(s, title, html`<h1>${title}</h1>${form}`, o.status);
  }

  async function detailData(s: Signed): Promise<DetailData> {
    const monitor = await getMonitor(app, s.actor, monitorId(s));
    const id = monitor.id;
    const heartbeat = monitor.attributes.monitor_type === "heartbeat";
    const first = (limit: number) => ({ limit, offset: 0 });
    const [checks, incidents, events, uptime, neighbours, channels, groups] = await Promise.all([
      listChecks(app, s.actor, id, {}, first(100)),
      listIncidents(app, s.actor, { monitorId: id }, first(10)),
      heartbeat ? listMonitorEvents(app, s.actor, id, {}, first(50)) : null,
      monitorUptime(app, s.actor, id, UPTIME_SPANS.map((u) => u.days * DAY_MS)),
      monitorNeighbours(app, s.actor, id),
      channelChoices(web, s.actor),
      groupNames(app, s.actor.accountId),
    ]);
    const groupId = monitor.attributes.group_id;
    const channelNames = new Map(channels.choices.map((c) => [c.value, c.label]));
    const token = monitor.attributes.heartbeat_token;
    return {
      monitor,
      checks: checks.items,
      incidents: incidents.items,
      events: events?.items ?? null,
      uptime: UPTIME_SPANS.map((u, i) => ({ label: u.label, ratio: uptime[i]! })),
      pingUrl: heartbeat && typeof token === "string" ? `${web.heartbeatBase(s.request, s.socketIp)}/h/${token}` : null,
      pingBaseFollowsBrowser: !app.config.heartbeatUrlFixed,
      now: app.clock.now(),
      panels: dependencyPanel({ ...neighbours, attributes: monitor.attributes, channelNames }),
      group: groupId === null ? null : { id: groupId, name: groups.get(groupId) ?? `group ${groupId}` },
    };
  }

  /** One page of the list: its monitors, the figures beside each (a few queries for the page), the counts. */
  async function listPage(actor: Actor, f: ListFilter): Promise<ListPage> {
    const sf = storeFilter(f, app.clock.now());
    const window = { limit: PAGE_SIZE, offset: ((f.page ?? 1) - 1) * PAGE_SIZE };
    const [{ items, total }, counts] = await Promise.all([
      f.sort === "uptime" ? monitorsByUptime(app, actor, sf, window) : listMonitors(app, actor, sf, window, f.sort ?? "id"),
      monitorStateCounts(app, actor, sf),
    ]);
    const figures = await listFigures(app, items.map((m) => m.id), RECENT_CHECKS);
    return { monitors: items, total, figures, counts };
  }

  async function list(s: Signed) {
    const { filter, problems } = listFilter(s.url);
    const [p, groups, { choices: channels }] = await Promise.all([listPage(s.actor, filter), groupList(web, s.actor), channelChoices(web, s.actor)]);
    const msg = html`${flash(s.url.searchParams.get("msg"))}${bulkFlash(s.url)}`;
    return page(s, "Monitors", monitorList(p, { msg, session: s.session, groups, channels, filter, problems }));
  }

  async function rows(s: Signed) {
    const { filter } = listFilter(s.url);
    const [p, groups] = await Promise.all([listPage(s.actor, filter), groupList(web, s.actor)]);
    return send(s.request, monitorSections(p, groups, filter).value);
  }

  /** Where a bulk action goes back to: the list with the filters it was sent from, and its result. */
  function backTo(form: URLSearchParams, result: Record<string, string>): Response {
    const { filter } = listFilter(new URL(`http://x/${form.get("back") ?? ""}`));
    const q = new URLSearchParams(filterQuery(filter));
    for (const [k, v] of Object.entries(result)) q.set(k, v);
    return redirect(`/?${q}`);
  }

  /** A bulk action's change from the form; a string names the problem (bulkFlash says it). */
  function bulkChangeOf(form: URLSearchParams): BulkChange | "tag" | null {
    const action = form.get("action");
    if (action === "pause" || action === "resume" || action === "delete") return { action };
    if (action === "tag") {
      const tag = (form.get("tag") ?? "").trim();
      return isTag(tag) ? { action, tag } : "tag";
    }
    if (action === "group") {
      const g = form.get("group_id") ?? "";
      if (g === "none") return { action, groupId: null };
      return /^[1-9]\d{0,14}$/.test(g) ? { action, groupId: Number(g) } : null;
    }
    if (action === "channel") {
      const c = form.get("channel_id") ?? "";
      return /^[1-9]\d{0,14}$/.test(c) ? { action, channelId: Number(c) } : null;
    }
    return null;
  }

  return new Elysia({ name: "web-monitors" })
    .onParse(leaveBodyUnread)
    .get("/", async (c: RouteCtx) => (await customDomain(c)) ?? route(list)(c))
    .get("/monitors", route(list))
    .get("/monitors/rows", route(rows))
    .post(
      "/monitors/bulk",
      route(async (s) => {
        const change = bulkChangeOf(s.form);
        if (change === null) return page(s, "Bad request", html`<h1>Bad request</h1><p>That is not something the list can do to monitors. <a href="/">Back to the list</a></p>`, 400);
        if (change === "tag") return backTo(s.form, { problem: "tag" });
        const ids = formIds(s.form);
        if (ids.length === 0) return backTo(s.form, { problem: "none" });
        if (change.action === "delete") {
          // nothing goes before the person has seen the names
          const monitors = await ownedMonitors(app, s.actor, ids);
          const { filter } = listFilter(new URL(`http://x/${s.form.get("back") ?? ""}`));
          return page(s, "Delete monitors", confirmBulkDelete(monitors, { session: s.session, back: filterQuery(filter) }));
        }
        const n = await bulkChange(app, s.actor, ids, change);
        return backTo(s.form, { done: change.action, n: String(n) });
      }),
    )
    .post(
      "/monitors/bulk/delete",
      route(async (s) => {
        const ids = formIds(s.form);
        if (ids.length === 0) return backTo(s.form, { problem: "none" });
        const n = await bulkChange(app, s.actor, ids, { action: "delete" });
        return backTo(s.form, { done: "delete", n: String(n) });
      }),
    )
    .get(
      "/monitors/new",
      route(async (s) => {
        const type = s.url.searchParams.get("type");
        if (!isMonitorType(type)) return page(s, "New monitor", typePicker(TYPE_INFO));
        const { defaults } = await channelChoices(web, s.actor);
        return renderForm(s, { mode: "create", type, values: createDefaults(type, defaults), errors: {} });
      }),
    )
    .post(
      "/monitors",
      route(async (s) => {
        const type = s.form.get("monitor_type");
        if (!isMonitorType(type)) return redirect("/monitors/new");
        const { choices } = await channelChoices(web, s.actor);
        const alerting = await alertingFor(s.actor, undefined, []);
        const attrs = { monitor_type: type, ...createFixedAttributes(type), ...formToAttributes([...monitorFields(type, choices, await groupChoices(s.actor)), ...alerting], s.form, "create") };
        try {
          const created = await createMonitor(app, s.actor, attrs);
          return redirect(`/monitors/${created.id}?msg=created`);
        } catch (e) {
          const details = validationDetails(e);
          if (!details) throw e;
          return renderForm(s, { mode: "create", type, values: attrs, errors: details, status: 422 });
        }
      }),
    )
    .get(
      "/monitors/:id",
      route(async (s) => {
        const d = await detailData(s);
        return page(s, d.monitor.attributes.name, monitorDetail(d, s.session, s.url.searchParams.get("msg")));
      }),
    )
    // the parts of the monitor page, for its live refresh (views/monitor-detail.ts)
    .get("/monitors/:id/live", route(async (s) => send(s.request, monitorDetailParts(await detailData(s), s.session).value)))
    .get(
      "/monitors/:id/edit",
      route(async (s) => {
        const monitor = await getMonitor(app, s.actor, monitorId(s));
        // the switch alone: a maintenance window in effect must not be saved as the switch turned on
        const values = { ...monitor.attributes, is_in_maintenance: await manualMaintenanceSwitch(app, s.actor, monitor.id) };
        return renderForm(s, { mode: "edit", type: monitor.attributes.monitor_type, monitor, values, errors: {} });
      }),
    )
    .post(
      "/monitors/:id",
      route(async (s) => {
        const monitor = await getMonitor(app, s.actor, monitorId(s));
        const type = monitor.attributes.monitor_type;
        const { choices } = await channelChoices(web, s.actor);
        const alerting = await alertingFor(s.actor, monitor.id, monitor.attributes.depends_on_ids);
        const attrs = formToAttributes([...monitorFields(type, choices, await groupChoices(s.actor)), ...alerting], s.form, "edit");
        try {
          await updateMonitor(app, s.actor, monitor.id, attrs);
          return redirect(`/monitors/${monitor.id}?msg=saved`);
        } catch (e) {
          const details = validationDetails(e);
          if (!details) throw e;
          return renderForm(s, { mode: "edit", type, monitor, values: { ...monitor.attributes, ...attrs }, errors: details, status: 422 });
        }
      }),
    )
    .post(
      "/monitors/:id/pause",
      route(async (s) => {
        const m = await updateMonitor(app, s.actor, monitorId(s), { is_paused: true });
        return redirect(`/monitors/${m.id}?msg=paused`);
      }),
    )
    .post(
      "/monitors/:id/resume",
      route(async (s) => {
        const m = await updateMonitor(app, s.actor, monitorId(s), { is_paused: false });
        return redirect(`/monitors/${m.id}?msg=resumed`);
      }),
    )
    .post(
      "/monitors/:id/rotate-token",
      route(async (s) => {
        const m = await rotateHeartbeatToken(app, s.actor, pathId(s.params, "heartbeat monitor"));
        return redirect(`/monitors/${m.id}?msg=rotated`);
      }),
    )
    .get(
      "/monitors/:id/delete",
      route(async (s) => {
        const m = await getMonitor(app, s.actor, monitorId(s));
        const body = confirmDelete({ what: "monitor", name: m.attributes.name, action: `/monitors/${m.id}/delete`, back: `/monitors/${m.id}`, session: s.session, consequence: "Its checks, incidents and timeline are deleted with it, and it leaves every status page." });
        return page(s, "Delete monitor", body);
      }),
    )
    .post(
      "/monitors/:id/delete",
      route(async (s) => {
        await deleteMonitor(app, s.actor, monitorId(s));
        return redirect("/?msg=deleted");
      }),
    );
}
