/**
 * The maintenance window's attributes (docs/maintenance-windows.md "Attributes"): one catalogue says,
 * per attribute, its TypeBox schema, whether it is read-only, and the message a client gets when a
 * value does not fit. The OpenAPI document, the validator, the response mapper and the dashboard's
 * form all read it.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { MAX_DURATION_SEC, MIN_DURATION_SEC } from "./maintenance-schedule.ts";
import { EXTERNAL_ID_MESSAGE, EXTERNAL_ID_SCHEMA, notNull, nullable } from "./schema-parts.ts";

export interface WindowField<S extends TSchema = TSchema> {
  schema: S;
  readOnly: boolean;
  /** shown when the value does not match `schema` */
  message: string;
}

const f = <S extends TSchema>(schema: S, message: string): WindowField<S> => ({ schema, readOnly: false, message });
const ro = <S extends TSchema>(schema: S): WindowField<S> => ({ schema, readOnly: true, message: "is read-only" });
const TIME = "an ISO 8601 date-time: with Z or an offset, or without one for a time in the window's timezone";

export const MAX_WINDOW_MONITORS = 1000;

/** Every attribute, in the order responses list them. */
export const WINDOW_FIELDS = {
  name: f(Type.String({ minLength: 1, maxLength: 200 }), "must be a string of 1 to 200 characters"),
  description: f(nullable(Type.String({ maxLength: 2000 }), "shown on status pages beside the window"), "must be a string of at most 2000 characters, or null"),
  external_id: f(EXTERNAL_ID_SCHEMA, EXTERNAL_ID_MESSAGE),
  monitor_ids: f(
    Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: MAX_WINDOW_MONITORS, uniqueItems: true, description: "this account's monitors the window puts in maintenance" }),
    `must be a list of 1 to ${MAX_WINDOW_MONITORS} distinct monitor ids (positive integers)`,
  ),
  is_enabled: f(Type.Boolean({ default: true, description: "a disabled window is never active" }), "must be true or false"),
  timezone: f(Type.String({ minLength: 1, maxLength: 64, default: "UTC", description: "IANA time zone the schedule, and starts_at/ends_at without an offset, are read in" }), "must be an IANA time zone name, for example Europe/Berlin or UTC"),
  starts_at: f(nullable(Type.String({ maxLength: 64, description: `one-off window: ${TIME}` })), `must be ${TIME}, or null`),
  ends_at: f(nullable(Type.String({ maxLength: 64, description: `one-off window: ${TIME}; after starts_at` })), `must be ${TIME}, or null`),
  schedule: f(nullable(Type.String({ maxLength: 200, description: 'recurring window: a 5-field cron expression (minute hour day-of-month month day-of-week), e.g. "0 3 * * 0"' })), "must be a cron expression of 5 fields, or null"),
  duration_sec: f(
    nullable(Type.Integer({ minimum: MIN_DURATION_SEC, maximum: MAX_DURATION_SEC, description: "recurring window: how long each occurrence lasts" })),
    `must be an integer from ${MIN_DURATION_SEC} to ${MAX_DURATION_SEC} (30 days), or null`,
  ),
  is_active: ro(Type.Boolean({ description: "whether the window's monitors are in maintenance now" })),
  next_starts_at: ro(nullable(Type.String({ format: "date-time" }), "start of the span in effect now, or of the next one; null when none is ahead")),
  next_ends_at: ro(nullable(Type.String({ format: "date-time" }), "end of that span")),
  created_at: ro(Type.String({ format: "date-time" })),
  updated_at: ro(Type.String({ format: "date-time" })),
} satisfies Record<string, WindowField>;

export type WindowAttributeName = keyof typeof WINDOW_FIELDS;
export const WINDOW_ATTRIBUTE_NAMES = Object.keys(WINDOW_FIELDS) as WindowAttributeName[];
/** Ignored on writes, so a client can send back what it read. */
export const READ_ONLY_WINDOW_ATTRIBUTES: readonly string[] = ["id", ...WINDOW_ATTRIBUTE_NAMES.filter((n) => WINDOW_FIELDS[n].readOnly)];
export type WindowAttributes = { [K in WindowAttributeName]: Static<(typeof WINDOW_FIELDS)[K]["schema"]> };

/** The attributes' schema as one object, for the OpenAPI document. */
export function windowAttributesSchema(forWrite: boolean): TSchema {
  const props: Record<string, TSchema> = {};
  for (const n of WINDOW_ATTRIBUTE_NAMES) {
    const field = WINDOW_FIELDS[n] as WindowField;
    if (forWrite && field.readOnly) continue;
    props[n] = forWrite ? Type.Optional(field.schema) : field.schema;
  }
  return Type.Object(props, { additionalProperties: false });
}

/** What a POST must hold, besides the attributes of its kind. */
export const WINDOW_REQUIRED = ["name", "monitor_ids"] as const;
/** The attributes of each kind of window: a one-off window has the first two, a recurring one the others. */
const KIND_ATTRIBUTES = { "one-off": ["starts_at", "ends_at"], recurring: ["schedule", "duration_sec"] } as const;

/**
 * What a POST takes, one schema per kind (docs/maintenance-windows.md): the kind's attributes
 * required, the other kind's null or left out.
 */
export function windowCreateSchema(): TSchema {
  const variant = (kind: keyof typeof KIND_ATTRIBUTES, other: keyof typeof KIND_ATTRIBUTES) => {
    const props: Record<string, TSchema> = {};
    for (const n of WINDOW_ATTRIBUTE_NAMES) {
      const field = WINDOW_FIELDS[n] as WindowField;
      if (field.readOnly) continue;
      const required = (WINDOW_REQUIRED as readonly string[]).includes(n) || (KIND_ATTRIBUTES[kind] as readonly string[]).includes(n);
      if ((KIND_ATTRIBUTES[other] as readonly string[]).includes(n)) props[n] = Type.Optional(Type.Null());
      else props[n] = required ? notNull(field.schema) : Type.Optional(field.schema);
    }
    return Type.Object(props, { additionalProperties: false, description: `a new ${kind} window` });
  };
  return Type.Unsafe({ anyOf: [variant("one-off", "recurring"), variant("recurring", "one-off")] });
}
