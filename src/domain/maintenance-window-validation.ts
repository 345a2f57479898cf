/**
 * Validation of maintenance window writes, with the rules of the other resources (docs/api-rules.md
 * "Writes: flat or JSON:API", docs/maintenance-windows.md "Attributes"): unknown attributes are a
 * 422, read-only ones are ignored, and every problem is collected per attribute in one pass. A window
 * is one-off (starts_at + ends_at) or recurring (schedule + duration_sec): both kinds, or neither,
 * once a PATCH is merged with what is stored, is a 422.
 */
import { Value } from "@sinclair/typebox/value";
import { newDetails, type Details } from "./details.ts";
import { isValidTimezone } from "./heartbeat-rules.ts";
import { scheduleProblem } from "./maintenance-schedule.ts";
import { READ_ONLY_WINDOW_ATTRIBUTES, WINDOW_FIELDS, WINDOW_REQUIRED, type WindowAttributeName, type WindowField } from "./maintenance-window-schema.ts";
import { holdsNul, NUL_MESSAGE } from "./text-rules.ts";
import { parseZonedTime } from "./zoned-time.ts";

/** Validated values, as stored: times in epoch ms. */
export interface WindowChanges {
  name?: string;
  description?: string | null;
  external_id?: string | null;
  monitor_ids?: number[];
  is_enabled?: boolean;
  timezone?: string;
  starts_at?: number | null;
  ends_at?: number | null;
  schedule?: string | null;
  duration_sec?: number | null;
}

/** The stored window a PATCH applies to. */
export interface ExistingWindow {
  timezone: string;
  starts_at: number | null;
  ends_at: number | null;
  schedule: string | null;
  duration_sec: number | null;
}

export interface WindowWriteResult {
  changes: WindowChanges;
  details: Details;
}

const KINDS = "a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec)";

export function validateWindowWrite(input: Record<string, unknown>, existing?: ExistingWindow): WindowWriteResult {
  const details = newDetails();
  const add = (attr: string, message: string) => void (details[attr] ??= []).push(message);
  const changes: WindowChanges = {};
  const set = changes as Record<string, unknown>;

  // the zone times without an offset are read in: the one written now, else the stored one
  const tzIn = input.timezone;
  const timezone = typeof tzIn === "string" && isValidTimezone(tzIn.trim()) ? tzIn.trim() : (existing?.timezone ?? "UTC");

  for (const [key, value] of Object.entries(input)) {
    if (READ_ONLY_WINDOW_ATTRIBUTES.includes(key)) continue;
    if (!Object.hasOwn(WINDOW_FIELDS, key)) {
      add(key, "is not a maintenance window attribute; see the maintenance_window fields in /api/v1/openapi.json");
      continue;
    }
    const name = key as WindowAttributeName;
    const field = WINDOW_FIELDS[name] as WindowField;
    if (holdsNul(value)) {
      add(name, NUL_MESSAGE);
      continue;
    }
    if (name === "monitor_ids" && Array.isArray(value) && value.length === 0) {
      add(name, "must not be empty: a window puts at least one monitor in maintenance");
      continue;
    }
    if (!Value.Check(field.schema, value)) {
      add(name, field.message);
      continue;
    }
    switch (name) {
      case "name": {
        const v = (value as string).trim();
        if (v === "") add(name, "must not be blank");
        else set.name = v;
        break;
      }
      case "description": {
        const v = value === null ? null : (value as string).trim();
        set.description = v === "" ? null : v;
        break;
      }
      case "timezone": {
        const v = (value as string).trim();
        if (!isValidTimezone(v)) add(name, `'${v}' is not an IANA time zone name (for example Europe/Berlin or UTC)`);
        else set.timezone = v;
        break;
      }
      case "starts_at":
      case "ends_at": {
        if (value === null) set[name] = null;
        else {
          const t = parseZonedTime(value as string, timezone);
          if (t === null) add(name, field.message);
          else set[name] = t;
        }
        break;
      }
      case "schedule": {
        const v = value === null ? null : (value as string).trim();
        const problem = v === null ? null : scheduleProblem(v, timezone);
        if (problem) add(name, problem);
        else set.schedule = v;
        break;
      }
      default:
        set[name] = value;
    }
  }

  if (!existing) {
    for (const name of WINDOW_REQUIRED) if (!(name in input) || input[name] === null) details[name] ??= ["is required"];
    changes.is_enabled ??= true;
    changes.timezone ??= "UTC";
    if (!("description" in changes)) changes.description = null;
  }
  kindRules(changes, existing, details, add);
  return { changes, details };
}

/** Exactly one kind, complete, once merged with the stored window; ends_at after starts_at. */
function kindRules(changes: WindowChanges, existing: ExistingWindow | undefined, details: Details, add: (a: string, m: string) => void): void {
  const KIND_ATTRS = ["starts_at", "ends_at", "schedule", "duration_sec"] as const;
  if (KIND_ATTRS.some((a) => details[a])) return; // a value that did not parse says enough
  const merged = { starts_at: null, ends_at: null, schedule: null, duration_sec: null, ...existing, ...changes };
  const oneOff = merged.starts_at !== null || merged.ends_at !== null;
  const recurring = merged.schedule !== null || merged.duration_sec !== null;
  if (oneOff && recurring) {
    const hint = existing
      ? existing.schedule !== null
        ? "; set schedule and duration_sec to null to make it one-off"
        : "; set starts_at and ends_at to null to make it recurring"
      : "";
    for (const a of KIND_ATTRS) if (a in changes && changes[a] !== null) add(a, `${KINDS}, not both${hint}`);
    return;
  }
  if (!oneOff && !recurring) {
    add("starts_at", `is required with ends_at for a one-off window; ${KINDS}`);
    add("schedule", `is required with duration_sec for a recurring window; ${KINDS}`);
    return;
  }
  if (oneOff) {
    if (merged.starts_at === null) add("starts_at", "is required with ends_at");
    if (merged.ends_at === null) add("ends_at", "is required with starts_at");
    if (merged.starts_at !== null && merged.ends_at !== null && merged.ends_at <= merged.starts_at) add("ends_at", "must be after starts_at");
  } else {
    if (merged.schedule === null) add("schedule", "is required with duration_sec");
    if (merged.duration_sec === null) add("duration_sec", "is required with schedule");
  }
}
