import { Elysia } from "elysia";
import type { MonitorType } from "../domain/monitor.ts";
import { DAY_MS } from "../domain/uptime.ts";
import { pathId } from "../http/path-id.ts";
import type { Actor } from "../services/actor.ts";
import { listChecks } from "../services/checks.ts";
import { listMonitorEvents } from "../services/events.ts";
import { listIncidents } from "../services/incidents.ts";
import { allItems } from "../services/items.ts";
import { createMonitor, deleteMonitor, getMonitor, listMonitors, manualMaintenanceSwitch, monitorUptime, rotateHeartbeatToken, storedMonitorSecrets, updateMonitor, type MonitorItem } from "../services/monitors.ts";
import { monitorNeighbours } from "../services/monitor-dependencies.ts";
import { listChannels } from "../services/notification-channels.ts";
import { groupNames } from "../services/groups.ts";
import { isTag, TAG_RULE } from "../domain/tags.ts";
import { alertingFields, alertingSection } from "./forms/alerting-section.ts";
import { formToAttributes, validationDetails, type Errors, type FieldSpec } from "./forms/fields.ts";
import { createDefaults, isMonitorType, monitorFields, monitorForm, TYPE_INFO } from "./forms/monitor-form.ts";
import { html } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type RouteCtx, type Signed } from "./routing.ts";
import { dashboardPage } from "./views/layout.ts";
import { dependencyPanel } from "./views/dependency-panel.ts";
import { monitorDetail, monitorDetailParts, type DetailData } from "./views/monitor-detail.ts";
import { confirmDelete, monitorList, monitorSections, typePicker, type ListFilter, type ListedGroup } from "./views/monitor-views.ts";
import type { WebContext } from "./web-context.ts";

/** The monitor screens: list (live), create/edit per type, detail, pause/resume, delete, token rotation. */
const UPTIME_SPANS = [
  { label: "24 h", days: 1 },
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
];

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
 * The list's filters from the query string: ?group_id=<id> and ?tag= (repeatable, each may hold
 * several tags separated by commas, as the filter form sends them). Tags that cannot be tags are
 * left out and said.
 */
function listFilter(url: URL): { filter: ListFilter; problems: string[] } {
  const group = url.searchParams.get("group_id") ?? "";
  const tags: string[] = [];
  const problems: string[] = [];
  for (const raw of url.searchParams.getAll("tag").flatMap((v) => v.split(","))) {
    const tag = raw.trim();
    if (tag === "") continue;
    if (isTag(tag)) tags.push(tag);
    else problems.push(`"${tag.slice(0, 60)}" is not a tag (${TAG_RULE}); it was left out.`);
  }
  return { filter: { groupId: /^[1-9]\d{0,14}$/.test(group) ? Number(group) : undefined, tags: [...new Set(tags)].slice(0, 20) }, problems };
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

  async function list(s: Signed) {
    const { filter, problems } = listFilter(s.url);
    const [monitors, groups] = await Promise.all([filteredMonitors(s.actor, filter), groupList(web, s.actor)]);
    return page(s, "Monitors", monitorList(monitors, s.url.searchParams.get("msg"), { groups, filter, problems }));
  }

  async function rows(s: Signed) {
    const { filter } = listFilter(s.url);
    const [monitors, groups] = await Promise.all([filteredMonitors(s.actor, filter), groupList(web, s.actor)]);
    return send(s.request, monitorSections(monitors, groups, filter.groupId !== undefined || filter.tags.length > 0).value);
  }

  return new Elysia({ name: "web-monitors" })
    .onParse(leaveBodyUnread)
    .get("/", async (c: RouteCtx) => (await customDomain(c)) ?? route(list)(c))
    .get("/monitors", route(list))
    .get("/monitors/rows", route(rows))
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
        const attrs = { monitor_type: type, ...formToAttributes([...monitorFields(type, choices, await groupChoices(s.actor)), ...alerting], s.form, "create") };
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
