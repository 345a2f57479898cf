import type { MonitorItem } from "../../services/monitors.ts";
import type { WindowItem } from "../../services/maintenance-windows.ts";
import { errorSummary, renderField, type Errors, type FieldSpec, type Mode } from "../forms/fields.ts";
import { html, type SafeHtml } from "../html.ts";
import { csrfField, flash } from "./layout.ts";
import { stateBadge, when } from "./widgets.ts";

/**
 * The maintenance window screens (README "Maintenance windows"): the list in three parts (under
 * way now, coming, over or disabled), and the form, where the monitors are picked in a list of
 * checkboxes that a search field filters (app.client.js; without script the whole list shows).
 */

/** The form's values as the person typed them: times as wall-clock readings in the window's zone, the duration in minutes. */
export interface WindowFormValues {
  name: string;
  description: string;
  is_enabled: boolean;
  timezone: string;
  kind: "one_off" | "recurring";
  starts_at: string;
  ends_at: string;
  schedule: string;
  duration_min: string;
  monitor_ids: number[];
}

/** The fields of the form under the names of the attributes they set, for the error summary's links. */
const WINDOW_FORM_FIELDS: FieldSpec[] = [
  { name: "name", label: "Name", widget: "text", nullable: false },
  { name: "description", label: "Description", hint: "shown on status pages beside the window", widget: "textarea", nullable: true },
  { name: "is_enabled", label: "Enabled (off: the window never starts)", widget: "checkbox", nullable: false },
  { name: "timezone", label: "Time zone", hint: "IANA name, e.g. Europe/Berlin; the times and the schedule below are read in it", widget: "text", nullable: false },
  { name: "starts_at", label: "Starts", widget: "text", nullable: true },
  { name: "ends_at", label: "Ends", widget: "text", nullable: true },
  { name: "schedule", label: "Schedule (cron)", hint: 'minute hour day-of-month month day-of-week, e.g. "0 3 * * 0" for Sundays at 03:00', widget: "text", nullable: true },
  { name: "duration_sec", label: "Duration (minutes)", widget: "number", nullable: true },
  { name: "monitor_ids", label: "Monitors", widget: "choices", nullable: false },
];

const field = (name: string) => WINDOW_FORM_FIELDS.find((f) => f.name === name)!;

/** How long, in words: 90 → "1 h 30 min". */
function minutes(sec: number): string {
  const m = Math.round(sec / 60);
  if (m < 60) return `${m} min`;
  const d = Math.floor(m / 1440), h = Math.floor((m % 1440) / 60), r = m % 60;
  return [d ? `${d} d` : "", h ? `${h} h` : "", r ? `${r} min` : ""].filter(Boolean).join(" ");
}

/** How the window repeats; a one-off window's times when the status line does not show them already. */
function plan(a: WindowItem["attributes"]): SafeHtml {
  if (a.schedule !== null) return html`<code>${a.schedule}</code> for ${minutes(a.duration_sec ?? 0)}, ${a.timezone}`;
  return a.next_starts_at !== null ? html`Once` : html`Once: ${when(a.starts_at)} to ${when(a.ends_at)}`;
}

function monitorNames(ids: number[], names: Map<number, string>): string {
  const shown = ids.slice(0, 3).map((id) => names.get(id) ?? `#${id}`);
  return ids.length > 3 ? `${shown.join(", ")} and ${ids.length - 3} more` : shown.join(", ");
}

function windowCard(w: WindowItem, names: Map<number, string>): SafeHtml {
  const a = w.attributes;
  const status = a.is_active
    ? html`${stateBadge("maintenance")} <strong>Under way</strong> until ${when(a.next_ends_at)}`
    : !a.is_enabled
      ? html`<span class="muted">Disabled</span>`
      : a.next_starts_at
        ? html`Next: ${when(a.next_starts_at)} to ${when(a.next_ends_at)}`
        : html`<span class="muted">Over</span>`;
  return html`<li class="panel window" data-window="${w.id}"><div class="row between"><h3><a href="/maintenance/${w.id}/edit">${a.name}</a></h3>
<div class="row"><a class="btn" href="/maintenance/${w.id}/edit">Edit</a><a class="btn" href="/maintenance/${w.id}/delete">Delete</a></div></div>
<p>${status}</p><p class="muted">${plan(a)} · ${a.monitor_ids.length === 1 ? "1 monitor" : `${a.monitor_ids.length} monitors`}: ${monitorNames(a.monitor_ids, names)}</p>${a.description ? html`<p class="desc">${a.description}</p>` : ""}</li>`;
}

export function windowList(windows: WindowItem[], monitors: MonitorItem[], msg: string | null): SafeHtml {
  const names = new Map(monitors.map((m) => [m.id, m.attributes.name]));
  const startOf = (w: WindowItem) => Date.parse(w.attributes.next_starts_at ?? "") || Infinity;
  const active = windows.filter((w) => w.attributes.is_active);
  const coming = windows.filter((w) => !w.attributes.is_active && w.attributes.is_enabled && w.attributes.next_starts_at !== null).sort((x, y) => startOf(x) - startOf(y));
  const rest = windows.filter((w) => !active.includes(w) && !coming.includes(w));
  const part = (id: string, title: string, items: WindowItem[], empty: string) =>
    html`<section aria-labelledby="${id}"><h2 id="${id}">${title}</h2>${items.length ? html`<ul class="windows">${items.map((w) => windowCard(w, names))}</ul>` : html`<p class="muted">${empty}</p>`}</section>`;
  return html`${flash(msg)}<div class="row between"><h1>Maintenance windows</h1><a class="btn primary" href="/maintenance/new">New window</a></div>
<p class="muted">While a window is under way its monitors are checked as usual, but no incident opens and no alert is sent; a monitor still down when it ends opens its incident then. Times in UTC.</p>
${part("active-h", "Under way now", active, "No maintenance under way.")}
${part("coming-h", "Coming up", coming, "Nothing scheduled.")}
${rest.length ? part("past-h", "Over or disabled", rest, "") : ""}`;
}

/** The monitors to pick: a filter field (shown by the script) over a list of checkboxes. */
function monitorPicker(monitors: MonitorItem[], chosen: number[], errors: Errors): SafeHtml {
  const msgs = errors.monitor_ids ?? [];
  const err = msgs.length ? html`<span class="err" id="f-monitor_ids-err">${msgs.map((m, i) => html`${i ? html`<br>` : ""}Monitors ${m}`)}</span>` : "";
  return html`<fieldset class="field"${msgs.length ? html` aria-describedby="f-monitor_ids-err"` : ""}><legend>Monitors</legend>
<div class="filter" hidden><label for="f-monitor_ids">Find a monitor</label><input type="search" id="f-monitor_ids" data-filter="monitor-choices" autocomplete="off" placeholder="name, type or target"></div>${err}
${monitors.length === 0
  ? html`<p class="muted">No monitors yet. <a href="/monitors/new">Create one</a> first.</p>`
  : html`<div class="choices" id="monitor-choices">${monitors.map((m) => {
      const a = m.attributes;
      return html`<div class="check"><input type="checkbox" id="mon-${m.id}" name="monitor_ids" value="${m.id}"${chosen.includes(m.id) ? html` checked` : ""}> <label for="mon-${m.id}">${a.name} <span class="muted">${a.monitor_type}${a.target ? ` · ${a.target}` : ""}</span></label></div>`;
    })}<p class="muted" data-filter-empty hidden>No monitor matches.</p></div>`}</fieldset>`;
}

function timeInput(name: "starts_at" | "ends_at", value: string, errors: Errors): SafeHtml {
  const f = field(name);
  const msgs = errors[name] ?? [];
  const described = ["f-time-hint", msgs.length ? `f-${name}-err` : ""].filter(Boolean).join(" ");
  return html`<div class="field"><label for="f-${name}">${f.label}</label><input type="datetime-local" id="f-${name}" name="${name}" value="${value}" aria-describedby="${described}"${msgs.length ? html` aria-invalid="true"` : ""}>${msgs.length ? html`<span class="err" id="f-${name}-err">${msgs.map((m, i) => html`${i ? html`<br>` : ""}${f.label} ${m}`)}</span>` : ""}</div>`;
}

export function windowForm(o: { mode: Mode; action: string; values: WindowFormValues; errors: Errors; monitors: MonitorItem[]; session: { csrf_token: string }; zones: string[] }): SafeHtml {
  const v = o.values;
  const e = o.errors;
  const kind = (k: WindowFormValues["kind"], label: string) =>
    html`<div class="check"><input type="radio" id="kind-${k}" name="kind" value="${k}" data-kind-choice${v.kind === k ? html` checked` : ""}> <label for="kind-${k}">${label}</label></div>`;
  return html`${errorSummary(e, WINDOW_FORM_FIELDS)}
<form method="post" action="${o.action}" novalidate>${csrfField(o.session)}
<div class="panel">${renderField(field("name"), v.name, e)}${renderField(field("description"), v.description, e)}${renderField(field("is_enabled"), v.is_enabled, e)}
<div class="field"><label for="f-timezone">${field("timezone").label}</label><span class="hint" id="f-timezone-hint">${field("timezone").hint}</span><input type="text" id="f-timezone" name="timezone" value="${v.timezone}" list="zones" autocomplete="off" aria-describedby="f-timezone-hint${e.timezone ? " f-timezone-err" : ""}"${e.timezone ? html` aria-invalid="true"` : ""}>${e.timezone ? html`<span class="err" id="f-timezone-err">${e.timezone.map((m) => `${field("timezone").label} ${m}`).join("; ")}</span>` : ""}<datalist id="zones">${o.zones.map((z) => html`<option value="${z}">`)}</datalist></div></div>
<fieldset><legend>When</legend>${kind("one_off", "Once")}${kind("recurring", "Repeatedly, on a schedule")}
<div class="panel" data-kind="one_off"><p class="hint muted" id="f-time-hint">Date and time in the window's time zone.</p>${timeInput("starts_at", v.starts_at, e)}${timeInput("ends_at", v.ends_at, e)}</div>
<div class="panel" data-kind="recurring">${renderField(field("schedule"), v.schedule, e)}
<div class="field"><label for="f-duration_sec">${field("duration_sec").label}</label><span class="hint" id="f-duration_sec-hint">how long each occurrence lasts: 1 to 43200 (30 days)</span><input type="number" id="f-duration_sec" name="duration_min" value="${v.duration_min}" inputmode="numeric" min="1" aria-describedby="f-duration_sec-hint${e.duration_sec ? " f-duration_sec-err" : ""}"${e.duration_sec ? html` aria-invalid="true"` : ""}>${e.duration_sec ? html`<span class="err" id="f-duration_sec-err">${field("duration_sec").label} must be a number of minutes from 1 to 43200 (30 days)</span>` : ""}</div></div></fieldset>
${monitorPicker(o.monitors, v.monitor_ids, e)}
<div class="row"><button class="primary" type="submit">${o.mode === "create" ? "Create window" : "Save changes"}</button><a class="btn" href="/maintenance">Cancel</a></div></form>`;
}
