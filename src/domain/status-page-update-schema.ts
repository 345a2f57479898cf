/**
 * Status page updates written by people (README "Groups, tags and status page updates"): an
 * incident with its status, a maintenance notice or plain information, shown on the page and in its
 * feed. TypeBox schemas for the OpenAPI document and the pure validation of writes; which monitors
 * are on the page needs the store, and the service checks it.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { newDetails, type Details } from "./details.ts";
import { enumOf, nullable } from "./schema-parts.ts";
import { breaksLine, holdsNul, NUL_MESSAGE, ONE_LINE_MESSAGE } from "./text-rules.ts";

const UPDATE_KINDS = ["incident", "maintenance", "info"] as const;
export type UpdateKind = (typeof UPDATE_KINDS)[number];
const INCIDENT_STATUSES = ["investigating", "identified", "monitoring", "resolved"] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];
const BODY_MAX = 10_000;

export const UPDATE_FIELDS = {
  title: { schema: Type.String({ minLength: 1, maxLength: 200 }), message: "must be a string of 1 to 200 characters" },
  body: {
    schema: Type.String({ maxLength: BODY_MAX, default: "", description: "plain text, shown with its line breaks and never as HTML" }),
    message: `must be a string of at most ${BODY_MAX} characters (plain text)`,
  },
  kind: { schema: enumOf(UPDATE_KINDS), message: `must be one of ${UPDATE_KINDS.join(", ")}` },
  status: {
    schema: nullable(enumOf(INCIDENT_STATUSES), "incidents only (investigating when left out); null on maintenance and info"),
    message: `must be one of ${INCIDENT_STATUSES.join(", ")}, or null`,
  },
  affected_monitor_ids: {
    schema: Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 500, uniqueItems: true, default: [], description: "monitors of the status page this update is about" }),
    message: "must be a list of distinct monitor ids (positive integers), at most 500",
  },
  published_at: {
    schema: Type.String({ format: "date-time", description: "ISO 8601 date-time; defaults to now; a later time keeps the update off the page and the feed until then" }),
    message: "must be an ISO 8601 date-time such as 2026-11-24T09:30:00Z",
  },
};

export type UpdateAttributeName = keyof typeof UPDATE_FIELDS;

/** An update as responses show it (UpdateAttributesSchema's type). */
export type UpdateAttributes = { [K in UpdateAttributeName]: Static<(typeof UPDATE_FIELDS)[K]["schema"]> } & {
  status_page_id: number;
  created_at: string;
  updated_at: string;
};

const READ_ONLY = ["id", "status_page_id", "created_at", "updated_at"];

export const UpdateAttributesSchema = Type.Object({
  status_page_id: Type.Integer({ description: "read-only: the page the update is on" }),
  ...Object.fromEntries(Object.entries(UPDATE_FIELDS).map(([k, f]) => [k, f.schema])),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
});

/** What a POST must hold. */
export const UPDATE_REQUIRED = ["title", "kind"] as const;

export const UpdateWriteAttributesSchema = Type.Object(
  Object.fromEntries(Object.entries(UPDATE_FIELDS).map(([k, f]) => [k, Type.Optional(f.schema)])),
  { additionalProperties: false, description: "status is for incidents only. id, status_page_id, created_at and updated_at are ignored." },
);

/** What a write changes, in stored terms (published_at in epoch ms). */
export interface UpdateChanges {
  title?: string;
  body?: string;
  kind?: UpdateKind;
  status?: IncidentStatus | null;
  affected_monitor_ids?: number[];
  published_at?: number;
}

/** The stored update a PATCH applies to. */
interface ExistingUpdate {
  kind: UpdateKind;
  status: IncidentStatus | null;
}

/**
 * Validates a create (no `existing`) or a partial update. `parseTime` reads an ISO 8601 date-time
 * (null when it is not one); `now` is published_at's default. `status` goes with incidents only: a
 * status on another kind is a 422, an incident without one starts at investigating, and an update
 * that stops being an incident loses its status.
 */
export function validateUpdateWrite(
  input: Record<string, unknown>,
  o: { existing?: ExistingUpdate; now: number; parseTime: (text: string) => number | null },
): { changes: UpdateChanges; details: Details } {
  const details = newDetails();
  const add = (k: string, m: string) => void (details[k] ??= []).push(m);
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (READ_ONLY.includes(key)) continue;
    if (!Object.hasOwn(UPDATE_FIELDS, key)) {
      add(key, "is not a status page update attribute; see the update fields in /api/v1/openapi.json");
      continue;
    }
    const field = UPDATE_FIELDS[key as UpdateAttributeName];
    if (holdsNul(value)) add(key, NUL_MESSAGE);
    else if (!Value.Check(field.schema, value)) add(key, field.message);
    else if (key === "title" && (value as string).trim() === "") add(key, "must not be blank");
    else if (key === "title" && breaksLine((value as string).trim())) add(key, ONE_LINE_MESSAGE);
    else if (key === "published_at") {
      const at = o.parseTime(value as string);
      if (at === null) add(key, field.message);
      else changes.published_at = at;
    } else changes[key] = key === "title" ? (value as string).trim() : value;
  }
  if (!o.existing) {
    for (const k of UPDATE_REQUIRED) if (!(k in input) || input[k] === null) details[k] ??= [k === "kind" ? `is required: one of ${UPDATE_KINDS.join(", ")}` : "is required"];
    changes.body ??= "";
    changes.affected_monitor_ids ??= [];
    changes.published_at ??= o.now;
  }
  if (!details.kind && !details.status) statusRule(changes as UpdateChanges, o.existing, add);
  return { changes: changes as UpdateChanges, details };
}

function statusRule(changes: UpdateChanges, existing: ExistingUpdate | undefined, add: (k: string, m: string) => void): void {
  const kind = changes.kind ?? existing?.kind;
  if (kind === undefined) return; // a create without a kind is refused already
  const wasIncident = existing?.kind === "incident";
  if (kind !== "incident") {
    if (changes.status !== undefined && changes.status !== null) add("status", `is only for incident updates (this one is ${kind}); leave it out or send null`);
    else if (!existing || existing.status !== null) changes.status = null;
  } else if (wasIncident) {
    if (changes.status === null) add("status", `is required on an incident update: one of ${INCIDENT_STATUSES.join(", ")}`);
  } else if (!changes.status) {
    changes.status = "investigating"; // a new incident, or one that was another kind
  }
}

/** "Open": an incident update whose status is not resolved; the page shows those at the top. */
export function isOpenUpdate(u: { kind: string; status: string | null }): boolean {
  return u.kind === "incident" && u.status !== "resolved";
}
