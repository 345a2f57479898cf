import type { TSchema } from "@sinclair/typebox";
import { ApiError } from "../../http/errors.ts";
import { html, type SafeHtml } from "../html.ts";

/**
 * Form fields derived from the domain's attribute catalogues (MONITOR_FIELDS, CHANNEL_FIELDS,
 * STATUS_PAGE_FIELDS): the widget follows the TypeBox schema, and a submitted form turns back into
 * the attributes the API takes. Values are passed on as typed as the form allows; anything that
 * does not parse goes to the validator as it is, so the message shown is the API's own.
 */
export type Widget = "text" | "textarea" | "number" | "checkbox" | "select" | "password" | "secret-text" | "json" | "list" | "choices" | "choice";

export interface FieldSpec {
  name: string;
  label: string;
  hint?: string;
  widget: Widget;
  nullable: boolean;
  options?: string[];
  /** for "choices" (tick any) and "choice" (pick one): the ids and their labels */
  choices?: { value: number; label: string }[];
}

type Schema = TSchema & { anyOf?: Schema[]; type?: string; const?: unknown; maxLength?: number; writeOnly?: boolean; items?: Schema; description?: string };

export function fieldFromSchema(name: string, schema: TSchema, label: string, hint?: string): FieldSpec {
  const s = schema as Schema;
  let nullable = false;
  let core: Schema = s;
  if (s.anyOf) {
    const nonNull = s.anyOf.filter((x) => x.type !== "null");
    nullable = nonNull.length < s.anyOf.length;
    if (nonNull.length && nonNull.every((x) => x.const !== undefined)) {
      return { name, label, hint: hint ?? s.description, widget: "select", nullable, options: nonNull.map((x) => String(x.const)) };
    }
    core = nonNull.length === 1 ? nonNull[0]! : ({ type: "string" } as Schema);
  }
  let description = hint ?? s.description ?? core.description;
  if (description && description.toLowerCase() === label.toLowerCase()) description = undefined; // "name": says nothing
  const w = (widget: Widget): FieldSpec => ({ name, label, hint: description, widget, nullable });
  // a write-only value is never shown: a password field, or an empty text area for long ones (several lines)
  if (core.writeOnly) return w((core.maxLength ?? 0) >= 5000 ? "secret-text" : "password");
  if (core.type === "boolean") return w("checkbox");
  if (core.type === "integer" || core.type === "number") return w("number");
  if (core.type === "array" && core.items?.type === "string") return w("list");
  if (core.type === "array" || core.type === "object") return w("json");
  return w((core.maxLength ?? 0) >= 5000 ? "textarea" : "text");
}

/** "interval_sec" → "Interval sec" when no better label is given. */
export function humanize(name: string): string {
  const t = name.replace(/_/g, " ");
  return t.charAt(0).toUpperCase() + t.slice(1);
}

export type Mode = "create" | "edit";

/** A submitted form → attributes, for the fields that were on the form. */
export function formToAttributes(fields: FieldSpec[], form: URLSearchParams, mode: Mode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.widget === "checkbox") {
      out[f.name] = form.has(f.name);
      continue;
    }
    if (f.widget === "choices") {
      out[f.name] = form.getAll(f.name).map((v) => (/^\d+$/.test(v) ? Number(v) : v));
      continue;
    }
    const raw = form.get(f.name);
    if (raw === null) continue;
    if (f.widget === "choice") {
      out[f.name] = raw === "" ? null : /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
      continue;
    }
    const secret = f.widget === "password" || f.widget === "secret-text";
    const v = f.widget === "textarea" || f.widget === "json" || secret ? raw : raw.trim();
    if (v.trim() === "") {
      if (secret) continue; // empty keeps the stored secret
      if (f.widget === "list" && !f.nullable) out[f.name] = [];
      else if (f.nullable) out[f.name] = null;
      else if (mode === "edit") out[f.name] = v;
      continue; // on create: left out, so a required attribute reads "is required"
    }
    if (f.widget === "number") out[f.name] = /^-?\d{1,15}$/.test(v) ? Number(v) : v;
    else if (f.widget === "json") {
      try {
        out[f.name] = JSON.parse(v);
      } catch {
        out[f.name] = v;
      }
    } else if (f.widget === "list") out[f.name] = v.split(",").map((x) => x.trim()).filter(Boolean);
    else out[f.name] = v;
  }
  return out;
}

/** A stored attribute value as the form shows it. */
function shown(f: FieldSpec, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (f.widget === "json") return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  if (f.widget === "list" && Array.isArray(value)) return value.join(", ");
  return String(value);
}

export type Errors = Record<string, string[]>;

/** The messages of a service's 422, per attribute, for the form to show; null for any other error. */
export function validationDetails(e: unknown): Errors | null {
  return e instanceof ApiError && e.status === 422 ? (e.details ?? {}) : null;
}

/** One labelled field with its hint and its messages (aria-describedby, aria-invalid). */
export function renderField(f: FieldSpec, value: unknown, errors: Errors, note?: string): SafeHtml {
  const id = `f-${f.name}`;
  const msgs = errors[f.name] ?? [];
  const described = [f.hint || note ? `${id}-hint` : "", msgs.length ? `${id}-err` : ""].filter(Boolean).join(" ");
  const aria = html`${described ? html` aria-describedby="${described}"` : ""}${msgs.length ? html` aria-invalid="true"` : ""}`;
  const hint = f.hint || note ? html`<span class="hint" id="${id}-hint">${[f.hint, note].filter(Boolean).join(" · ")}</span>` : "";
  const err = msgs.length ? html`<span class="err" id="${id}-err">${msgs.map((m, i) => html`${i ? html`<br>` : ""}${f.label} ${m}`)}</span>` : "";
  const v = shown(f, value);
  switch (f.widget) {
    case "checkbox":
      return html`<div class="field check"><input type="checkbox" id="${id}" name="${f.name}" value="true"${value === true ? html` checked` : ""}${aria}> <label for="${id}">${f.label}</label>${hint}${err}</div>`;
    case "select":
      return html`<div class="field"><label for="${id}">${f.label}</label>${hint}<select id="${id}" name="${f.name}"${aria}>${f.nullable ? html`<option value="">(none)</option>` : ""}${(f.options ?? []).map((o) => html`<option${o === v ? html` selected` : ""}>${o}</option>`)}</select>${err}</div>`;
    case "textarea":
    case "json":
      return html`<div class="field"><label for="${id}">${f.label}</label>${hint}<textarea id="${id}" name="${f.name}" rows="${f.widget === "json" ? 5 : 4}"${aria}>${v}</textarea>${err}</div>`;
    case "secret-text":
      return html`<div class="field"><label for="${id}">${f.label}</label>${hint}<textarea id="${id}" name="${f.name}" rows="4" autocomplete="off" spellcheck="false"${aria}></textarea>${err}</div>`;
    case "choice":
      return html`<div class="field"><label for="${id}">${f.label}</label>${hint}<select id="${id}" name="${f.name}"${aria}>${f.nullable ? html`<option value="">(none)</option>` : ""}${(f.choices ?? []).map((c) => html`<option value="${c.value}"${c.value === value ? html` selected` : ""}>${c.label}</option>`)}</select>${err}</div>`;
    case "choices":
      return html`<fieldset class="field"${aria}><legend>${f.label}</legend>${hint}${
        (f.choices ?? []).length === 0
          ? html`<p class="muted">None yet.</p>`
          : (f.choices ?? []).map((c) => html`<div class="check"><input type="checkbox" id="${id}-${c.value}" name="${f.name}" value="${c.value}"${Array.isArray(value) && value.includes(c.value) ? html` checked` : ""}> <label for="${id}-${c.value}">${c.label}</label></div>`)
      }${err}</fieldset>`;
    default: {
      const type = f.widget === "password" ? "password" : f.widget === "number" ? "number" : "text";
      const extra = f.widget === "password" ? html` autocomplete="new-password"` : f.widget === "number" ? html` inputmode="numeric"` : "";
      return html`<div class="field"><label for="${id}">${f.label}</label>${hint}<input type="${type}" id="${id}" name="${f.name}" value="${f.widget === "password" ? "" : v}"${extra}${aria}>${err}</div>`;
    }
  }
}

/** The list of every problem at the top of a form, each linking to its field. */
export function errorSummary(errors: Errors, fields: FieldSpec[]): SafeHtml {
  const keys = Object.keys(errors);
  if (!keys.length) return html``;
  const byName = new Map(fields.map((f) => [f.name, f]));
  return html`<div class="alert error" role="alert" tabindex="-1" id="form-errors"><strong>Please correct ${keys.length === 1 ? "this problem" : `these ${keys.length} problems`}:</strong><ul>${keys.map((k) => {
    const f = byName.get(k);
    return html`<li>${f ? html`<a href="#f-${k}">${f.label}</a>` : html`<code>${k}</code>`} ${errors[k]!.join("; ")}</li>`;
  })}</ul></div>`;
}
