/**
 * Group attributes (README "Groups, tags and status page updates"): TypeBox schemas for the OpenAPI
 * document and the pure validation of writes. Uniqueness of the name within the account needs the
 * store; the service checks it.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { newDetails, type Details } from "./details.ts";
import { EXTERNAL_ID_MESSAGE, EXTERNAL_ID_SCHEMA, nullable } from "./schema-parts.ts";
import { holdsNul, NUL_MESSAGE } from "./text-rules.ts";

/** sort_order bounds: room enough to renumber by tens, small enough for every integer type. */
export const SORT_ORDER_MAX = 1_000_000_000;

interface GroupField<S extends TSchema = TSchema> {
  schema: S;
  message: string;
}

export const GROUP_FIELDS = {
  name: { schema: Type.String({ minLength: 1, maxLength: 200, description: "unique within the account" }), message: "must be a string of 1 to 200 characters" },
  description: { schema: nullable(Type.String({ maxLength: 2000 })), message: "must be a string of at most 2000 characters, or null" },
  sort_order: {
    schema: Type.Integer({ minimum: -SORT_ORDER_MAX, maximum: SORT_ORDER_MAX, default: 0, description: "groups are shown by sort_order, then name" }),
    message: `must be an integer from -${SORT_ORDER_MAX} to ${SORT_ORDER_MAX}`,
  },
  external_id: { schema: EXTERNAL_ID_SCHEMA, message: EXTERNAL_ID_MESSAGE },
} satisfies Record<string, GroupField>;

export type GroupAttributeName = keyof typeof GROUP_FIELDS;

/** A group as responses show it (GroupAttributesSchema's type). */
export type GroupAttributes = { [K in GroupAttributeName]: Static<(typeof GROUP_FIELDS)[K]["schema"]> } & { monitor_count: number; created_at: string; updated_at: string };

const READ_ONLY = ["id", "monitor_count", "created_at", "updated_at"];

export const GroupAttributesSchema = Type.Object({
  ...Object.fromEntries(Object.entries(GROUP_FIELDS).map(([k, f]) => [k, f.schema])),
  monitor_count: Type.Integer({ minimum: 0, description: "read-only: monitors in the group" }),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
});

/** What a POST must hold. */
export const GROUP_REQUIRED = ["name"] as const;

export const GroupWriteAttributesSchema = Type.Object(
  Object.fromEntries(Object.entries(GROUP_FIELDS).map(([k, f]) => [k, Type.Optional(f.schema)])),
  { additionalProperties: false, description: "id, monitor_count, created_at and updated_at are ignored." },
);

/** Validates a create (`creating`) or a partial update; returns normalised changes and details. */
export function validateGroupWrite(input: Record<string, unknown>, creating: boolean): { changes: Record<string, unknown>; details: Details } {
  const details = newDetails();
  const add = (k: string, m: string) => void (details[k] ??= []).push(m);
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (READ_ONLY.includes(key)) continue;
    const field: GroupField | undefined = Object.hasOwn(GROUP_FIELDS, key) ? GROUP_FIELDS[key as GroupAttributeName] : undefined;
    if (!field) {
      add(key, "is not a group attribute; see the group fields in /api/v1/openapi.json");
      continue;
    }
    if (holdsNul(value)) add(key, NUL_MESSAGE);
    else if (!Value.Check(field.schema, value)) add(key, field.message);
    else if (key === "name" && (value as string).trim() === "") add(key, "must not be blank");
    else changes[key] = key === "name" ? (value as string).trim() : value;
  }
  if (creating) {
    for (const k of GROUP_REQUIRED) if (!(k in input) || input[k] === null) details[k] ??= ["is required"];
    changes.description ??= null;
    changes.sort_order ??= 0;
    changes.external_id ??= null;
  }
  return { changes, details };
}
