import { Elysia } from "elysia";
import { DAY_MS } from "../domain/uptime.ts";
import { findMonitor } from "../store/monitors.ts";
import { uptimeFromRollups } from "../store/rollups.ts";
import { validationDetails, type ApiBridge, type Resource } from "./api-bridge.ts";
import { formToAttributes, type Errors } from "./forms/fields.ts";
import { createDefaults, isMonitorType, monitorFields, monitorForm, TYPE_INFO } from "./forms/monitor-form.ts";
import { html } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type RouteCtx, type Signed } from "./routing.ts";
import { dashboardPage } from "./views/layout.ts";
import { confirmDelete, monitorDetail, monitorList, monitorRows, typePicker } from "./views/monitor-views.ts";
import type { WebContext } from "./web-context.ts";
import type { MonitorType } from "../domain/monitor.ts";

/** The monitor screens: list (live), create/edit per type, detail, pause/resume, delete, token rotation. */
const MONITORS = "/api/v1/monitors";

async function channelChoices(api: ApiBridge) {
  const channels = await api.all("/api/v1/notification-channels");
  return {
    choices: channels.map((c) => ({ value: Number(c.id), label: `${c.attributes.name} (${c.attributes.channel_type})` })),
    defaults: channels.filter((c) => c.attributes.default_for_new_monitors === true).map((c) => Number(c.id)),
  };
}

/** `customDomain` answers "/" when the Host is a status page's custom domain (no sign-in there). */
export function monitorRoutes(web: WebContext, customDomain: (c: RouteCtx) => Promise<Response | null>) {
  const page = (s: Signed, title: string, body: ReturnType<typeof html>, status = 200) =>
    send(s.request, dashboardPage({ title, session: s.session, section: "monitors", body }), { status });
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "monitors", h);

  async function renderForm(s: Signed, o: { mode: "create" | "edit"; type: MonitorType; monitor?: Resource; values: Record<string, unknown>; errors: Errors; status?: number }) {
    const { choices } = await channelChoices(s.api);
    const fields = monitorFields(o.type, choices);
    let storedSecrets: Record<string, boolean> | undefined;
    if (o.monitor) {
      const row = await findMonitor(web.app.db, s.session.account_id, Number(o.monitor.id));
      storedSecrets = { api_auth_bearer_token: !!row?.api_auth_bearer_token_enc, api_auth_basic_pass: !!row?.api_auth_basic_pass_enc, api_auth_api_key_value: !!row?.api_auth_api_key_value_enc };
    }
    const action = o.mode === "create" ? "/monitors" : `/monitors/${o.monitor!.id}`;
    const title = o.mode === "create" ? `New ${o.type} monitor` : `Edit ${o.monitor!.attributes.name}`;
    const form = monitorForm({ mode: o.mode, type: o.type, action, fields, values: o.values, errors: o.errors, session: s.session, storedSecrets });
    return page(s, title, html`<h1>${title}</h1>${form}`, o.status);
  }

  async function list(s: Signed) {
    const monitors = await s.api.all(MONITORS);
    return page(s, "Monitors", monitorList(monitors, s.url.searchParams.get("msg")));
  }

  return new Elysia({ name: "web-monitors" })
    .onParse(leaveBodyUnread)
    .get("/", async (c: RouteCtx) => (await customDomain(c)) ?? route(list)(c))
    .get("/monitors", route(list))
    .get("/monitors/rows", route(async (s) => send(s.request, monitorRows(await s.api.all(MONITORS)).value)))
    .get(
      "/monitors/new",
      route(async (s) => {
        const type = s.url.searchParams.get("type");
        if (!isMonitorType(type)) return page(s, "New monitor", typePicker(TYPE_INFO));
        const { defaults } = await channelChoices(s.api);
        return renderForm(s, { mode: "create", type, values: createDefaults(type, defaults), errors: {} });
      }),
    )
    .post(
      "/monitors",
      route(async (s) => {
        const type = s.form.get("monitor_type");
        if (!isMonitorType(type)) return redirect("/monitors/new");
        const { choices } = await channelChoices(s.api);
        const attrs = { monitor_type: type, ...formToAttributes(monitorFields(type, choices), s.form, "create") };
        try {
          const created = await s.api.one("POST", MONITORS, attrs);
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
        const monitor = await s.api.one("GET", `${MONITORS}/${s.params.id}`);
        const id = Number(monitor.id);
        const heartbeat = monitor.attributes.monitor_type === "heartbeat";
        const now = web.app.clock.now();
        const [checks, incidents, events, ...uptime] = await Promise.all([
          s.api.list(`${MONITORS}/${id}/checks`, { per_page: "100" }),
          s.api.list("/api/v1/incidents", { monitor_id: String(id), per_page: "10" }),
          heartbeat ? s.api.list(`${MONITORS}/${id}/events`, { per_page: "50" }) : null,
          ...[1, 7, 30].map((days) => uptimeFromRollups(web.app.db, id, now - days * DAY_MS, now)),
        ]);
        const token = monitor.attributes.heartbeat_token;
        const body = monitorDetail(
          {
            monitor,
            checks: checks.data,
            incidents: incidents.data,
            events: events?.data ?? null,
            uptime: ["24 h", "7 days", "30 days"].map((label, i) => ({ label, ratio: uptime[i]!.uptime })),
            pingUrl: heartbeat && typeof token === "string" ? `${web.app.config.heartbeatUrl}/h/${token}` : null,
          },
          s.session,
          s.url.searchParams.get("msg"),
        );
        return page(s, String(monitor.attributes.name), body);
      }),
    )
    .get(
      "/monitors/:id/edit",
      route(async (s) => {
        const monitor = await s.api.one("GET", `${MONITORS}/${s.params.id}`);
        return renderForm(s, { mode: "edit", type: monitor.attributes.monitor_type as MonitorType, monitor, values: monitor.attributes, errors: {} });
      }),
    )
    .post(
      "/monitors/:id",
      route(async (s) => {
        const monitor = await s.api.one("GET", `${MONITORS}/${s.params.id}`);
        const type = monitor.attributes.monitor_type as MonitorType;
        const { choices } = await channelChoices(s.api);
        const attrs = formToAttributes(monitorFields(type, choices), s.form, "edit");
        try {
          await s.api.one("PATCH", `${MONITORS}/${monitor.id}`, attrs);
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
        const m = await s.api.one("PATCH", `${MONITORS}/${s.params.id}`, { is_paused: true });
        return redirect(`/monitors/${m.id}?msg=paused`);
      }),
    )
    .post(
      "/monitors/:id/resume",
      route(async (s) => {
        const m = await s.api.one("PATCH", `${MONITORS}/${s.params.id}`, { is_paused: false });
        return redirect(`/monitors/${m.id}?msg=resumed`);
      }),
    )
    .post(
      "/monitors/:id/rotate-token",
      route(async (s) => {
        const m = await s.api.one("POST", `${MONITORS}/${s.params.id}/heartbeat-token/rotate`);
        return redirect(`/monitors/${m.id}?msg=rotated`);
      }),
    )
    .get(
      "/monitors/:id/delete",
      route(async (s) => {
        const m = await s.api.one("GET", `${MONITORS}/${s.params.id}`);
        const body = confirmDelete({ what: "monitor", name: String(m.attributes.name), action: `/monitors/${m.id}/delete`, back: `/monitors/${m.id}`, session: s.session, consequence: "Its checks, incidents and timeline are deleted with it, and it leaves every status page." });
        return page(s, "Delete monitor", body);
      }),
    )
    .post(
      "/monitors/:id/delete",
      route(async (s) => {
        await s.api.call("DELETE", `${MONITORS}/${s.params.id}`);
        return redirect("/?msg=deleted");
      }),
    );
}
