import { Elysia } from "elysia";
import { wallClockMinute } from "../domain/zoned-time.ts";
import { pathId } from "../http/path-id.ts";
import { allItems } from "../services/items.ts";
import {
  createMaintenanceWindow,
  deleteMaintenanceWindow,
  getMaintenanceWindow,
  listMaintenanceWindows,
  updateMaintenanceWindow,
  type WindowItem,
} from "../services/maintenance-windows.ts";
import { listMonitors } from "../services/monitors.ts";
import { validationDetails, type Errors, type Mode } from "./forms/fields.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type Signed } from "./routing.ts";
import { dashboardPage } from "./views/layout.ts";
import { windowForm, windowList, type WindowFormValues } from "./views/maintenance-views.ts";
import { confirmDelete } from "./views/monitor-views.ts";
import type { WebContext } from "./web-context.ts";

/** Maintenance windows: list (under way, coming, over), create, edit, delete; through services/maintenance-windows.ts. */

const windowId = (s: Signed) => pathId(s.params, "maintenance window");

/** Every IANA zone this runtime knows, for the form's suggestions. */
const ZONES = (() => {
  try {
    return ["UTC", ...Intl.supportedValuesOf("timeZone").filter((z) => z !== "UTC")];
  } catch {
    return ["UTC"];
  }
})();

const EMPTY: WindowFormValues = { name: "", description: "", is_enabled: true, timezone: "UTC", kind: "one_off", starts_at: "", ends_at: "", schedule: "", duration_min: "60", monitor_ids: [] };

/** A stored window as the form shows it: times as wall-clock readings in its zone, the duration in minutes. */
function valuesOf(w: WindowItem): WindowFormValues {
  const a = w.attributes;
  const wall = (t: string | null) => (t === null ? "" : wallClockMinute(Date.parse(t), a.timezone));
  return {
    name: a.name,
    description: a.description ?? "",
    is_enabled: a.is_enabled,
    timezone: a.timezone,
    kind: a.schedule !== null ? "recurring" : "one_off",
    starts_at: wall(a.starts_at),
    ends_at: wall(a.ends_at),
    schedule: a.schedule ?? "",
    duration_min: a.duration_sec === null ? "60" : String(a.duration_sec / 60),
    monitor_ids: a.monitor_ids,
  };
}

function valuesFrom(form: URLSearchParams): WindowFormValues {
  const text = (k: string) => form.get(k) ?? "";
  return {
    name: text("name"),
    description: text("description"),
    is_enabled: form.has("is_enabled"),
    timezone: text("timezone").trim(),
    kind: text("kind") === "recurring" ? "recurring" : "one_off",
    starts_at: text("starts_at").trim(),
    ends_at: text("ends_at").trim(),
    schedule: text("schedule").trim(),
    duration_min: text("duration_min").trim(),
    monitor_ids: form.getAll("monitor_ids").filter((v) => /^\d{1,15}$/.test(v)).map(Number),
  };
}

/**
 * The attributes the form's values stand for: the chosen kind's, the other kind's set to null (so
 * an edit can switch kinds). A wall-clock time has no offset, so the API reads it in the zone.
 */
function attributesOf(v: WindowFormValues, mode: Mode): Record<string, unknown> {
  const out: Record<string, unknown> = { description: v.description.trim() === "" ? null : v.description, is_enabled: v.is_enabled, timezone: v.timezone || "UTC", monitor_ids: v.monitor_ids };
  if (v.name.trim() !== "" || mode === "edit") out.name = v.name;
  if (v.kind === "one_off") Object.assign(out, { starts_at: v.starts_at || null, ends_at: v.ends_at || null, schedule: null, duration_sec: null });
  else {
    const min = Number(v.duration_min);
    const sec = v.duration_min === "" ? null : Number.isFinite(min) ? Math.round(min * 60) : v.duration_min;
    Object.assign(out, { starts_at: null, ends_at: null, schedule: v.schedule || null, duration_sec: sec });
  }
  return out;
}

/** Attribute names in the API's messages, as the form calls those fields. */
const FIELD_WORDS: [RegExp, string][] = [[/\bstarts_at\b/g, "the start"], [/\bends_at\b/g, "the end"], [/\bduration_sec\b/g, "a duration"], [/\bschedule\b/g, "a schedule"]];

/** The messages that belong to the kind the person chose (the other kind's fields are not theirs to fix), in the form's words. */
function errorsFor(details: Errors, kind: WindowFormValues["kind"]): Errors {
  const other = kind === "one_off" ? ["schedule", "duration_sec"] : ["starts_at", "ends_at"];
  const mine = Object.entries(details).filter(([k]) => !other.includes(k));
  const out: Errors = {};
  for (const [k, v] of mine.length ? mine : Object.entries(details)) out[k] = v.map((m) => FIELD_WORDS.reduce((text, [re, word]) => text.replace(re, word), m));
  return out;
}

export function maintenanceRoutes(web: WebContext) {
  const app = web.app;
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "maintenance", h);
  const page = (s: Signed, title: string, body: SafeHtml, status = 200) => send(s.request, dashboardPage({ title, session: s.session, section: "maintenance", body, saturation: web.saturation() }), { status });
  const monitorsOf = (s: Signed) => allItems((w) => listMonitors(app, s.actor, {}, w));

  async function form(s: Signed, mode: Mode, values: WindowFormValues, errors: Errors, target?: WindowItem, status = 200) {
    const title = mode === "create" ? "New maintenance window" : `Edit ${target!.attributes.name}`;
    const action = mode === "create" ? "/maintenance" : `/maintenance/${target!.id}`;
    const body = windowForm({ mode, action, values, errors, monitors: await monitorsOf(s), session: s.session, zones: ZONES });
    return page(s, title, html`<h1>${title}</h1>${body}`, status);
  }

  async function save(s: Signed, mode: Mode, target?: WindowItem) {
    const values = valuesFrom(s.form);
    const attrs = attributesOf(values, mode);
    try {
      if (target) await updateMaintenanceWindow(app, s.actor, target.id, attrs);
      else await createMaintenanceWindow(app, s.actor, attrs);
      return redirect(`/maintenance?msg=${target ? "saved" : "created"}`);
    } catch (e) {
      const details = validationDetails(e);
      if (!details) throw e;
      return form(s, mode, values, errorsFor(details, values.kind), target, 422);
    }
  }

  return new Elysia({ name: "web-maintenance" })
    .onParse(leaveBodyUnread)
    .get(
      "/maintenance",
      route(async (s) => {
        const [windows, monitors] = await Promise.all([allItems((w) => listMaintenanceWindows(app, s.actor, w)), monitorsOf(s)]);
        return page(s, "Maintenance windows", windowList(windows, monitors, s.url.searchParams.get("msg")));
      }),
    )
    .get("/maintenance/new", route((s) => form(s, "create", EMPTY, {})))
    .post("/maintenance", route((s) => save(s, "create")))
    .get(
      "/maintenance/:id/edit",
      route(async (s) => {
        const w = await getMaintenanceWindow(app, s.actor, windowId(s));
        return form(s, "edit", valuesOf(w), {}, w);
      }),
    )
    .post("/maintenance/:id", route(async (s) => save(s, "edit", await getMaintenanceWindow(app, s.actor, windowId(s)))))
    .get(
      "/maintenance/:id/delete",
      route(async (s) => {
        const w = await getMaintenanceWindow(app, s.actor, windowId(s));
        const consequence = w.attributes.is_active ? "Its monitors leave maintenance now: those that are down open their incident and alert." : "Its monitors are not put in maintenance by it any more.";
        return page(s, "Delete maintenance window", confirmDelete({ what: "maintenance window", name: w.attributes.name, action: `/maintenance/${w.id}/delete`, back: "/maintenance", session: s.session, consequence }));
      }),
    )
    .post(
      "/maintenance/:id/delete",
      route(async (s) => {
        await deleteMaintenanceWindow(app, s.actor, windowId(s));
        return redirect("/maintenance?msg=deleted");
      }),
    );
}
