import { Type, type TProperties, type TSchema } from "@sinclair/typebox";
import type { ResourceType } from "./envelope.ts";
import { enumOf } from "../domain/schema-parts.ts";
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from "./query.ts";

/**
 * TypeBox shapes shared by every resource's OpenAPI description: envelopes, pagination and the
 * paging query parameters (docs/api-rules.md "Resources and envelopes", "Paging and sorting").
 */
const RequestId = Type.String({ description: "the X-Request-Id header's value" });
const RateLimitSchema = Type.Object(
  { limit: Type.Integer(), remaining: Type.Integer(), reset: Type.Integer({ description: "epoch seconds" }) },
  { description: "the account's rate-limit window, as in the X-RateLimit-* headers" },
);

/** `meta` of a request whose token is known: every success, and most errors. */
export const MetaSchema = Type.Object({ request_id: RequestId, rate_limit: RateLimitSchema });

/**
 * The error body (README "API behaviour"): `code` is one of `codes`, `details` (attribute →
 * messages) comes with validation errors only. `rateLimit` says whether meta.rate_limit is there:
 * always once the token is known, never before (401) or outside the API (the ping endpoint), and
 * "sometimes" where one status covers both (403: the plan is checked before the window is counted).
 */
export function errorBodySchema(codes: readonly string[], opts: { details?: boolean; rateLimit: "always" | "sometimes" | "never" }): TSchema {
  const details = Type.Object({}, { additionalProperties: Type.Array(Type.String()), description: "attribute or query parameter → messages" });
  const rateLimit: TProperties = { always: { rate_limit: RateLimitSchema }, sometimes: { rate_limit: Type.Optional(RateLimitSchema) }, never: {} }[opts.rateLimit];
  const error: TProperties = { code: enumOf(codes), message: Type.String({ description: "for people; may change" }) };
  if (opts.details) error.details = details;
  return Type.Object({ error: Type.Object(error), meta: Type.Object({ request_id: RequestId, ...rateLimit }) });
}

export const PaginationSchema = Type.Object({
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer(),
  total_pages: Type.Integer({ description: "ceil(total / per_page); 0 when total is 0" }),
});

export function resourceSchema(type: ResourceType, attributes: TSchema): TSchema {
  return Type.Object({ id: Type.String(), type: Type.Literal(type), attributes });
}

export function singleResponse(type: ResourceType, attributes: TSchema): TSchema {
  return Type.Object({ data: resourceSchema(type, attributes), meta: MetaSchema });
}

export function listResponse(type: ResourceType, attributes: TSchema): TSchema {
  return Type.Object({ data: Type.Array(resourceSchema(type, attributes)), pagination: PaginationSchema, meta: MetaSchema });
}

/** ?external_id= on the lists of resources a configuration file names (README "Configuration as code"). */
export const ExternalIdQuery = {
  external_id: Type.String({ minLength: 1, maxLength: 200, description: "only the resource with this external_id" }),
};

export const PageQuery = {
  page: Type.Integer({ minimum: 1, default: 1, description: "page number, from 1" }),
  per_page: Type.Integer({ minimum: 1, default: DEFAULT_PER_PAGE, description: `items per page; above ${MAX_PER_PAGE} is clamped to ${MAX_PER_PAGE}` }),
};

export const DateParam = (description: string) =>
  Type.String({ description: `${description}; an ISO 8601 date (2026-11-21), date-time with Z or an offset (seconds and fractions optional), or epoch seconds` });

export function deletedResponse(type: ResourceType): TSchema {
  return Type.Object({ data: Type.Object({ id: Type.String(), type: Type.Literal(type), attributes: Type.Object({ deleted: Type.Literal(true) }) }), meta: MetaSchema });
}

/** JSON:API-or-flat request body for `type` (docs/api-rules.md "Writes: flat or JSON:API"). */
export function writeBody(type: ResourceType, attributes: TSchema): TSchema {
  return Type.Union([attributes, Type.Object({ data: Type.Object({ type: Type.Literal(type), id: Type.Optional(Type.String()), attributes }) })]);
}

/** The attributes of a create: `attributes` with the ones a POST must hold required. */
export function requiring(attributes: TSchema, required: readonly string[]): TSchema {
  return { ...attributes, required: [...required] };
}

/** One of `variants`, told apart by the value of one attribute (a monitor's monitor_type). */
export function oneOf(variants: TSchema[], description?: string): TSchema {
  return Type.Unsafe({ oneOf: variants, ...(description ? { description } : {}) });
}

/** `google_chat` → `GoogleChat`: a type's name in the names of its schemas. */
export const schemaName = (type: string) => type.split("_").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");

const COMPONENT = Symbol("component");
type Component = TSchema & { [COMPONENT]: { name: string; schema: TSchema } };

/**
 * A schema the OpenAPI document holds once, under components/schemas, and names by $ref where it
 * is used (the per-type schemas of monitors and channels appear in many operations).
 */
export function component(name: string, schema: TSchema): TSchema {
  return { $ref: `#/components/schemas/${name}`, [COMPONENT]: { name, schema } } as unknown as Component;
}

/** Every component the schemas use, by name, those inside components included. */
export function componentsOf(schemas: unknown[]): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== "object") return;
    const c = (v as Partial<Component>)[COMPONENT];
    if (c && !(c.name in out)) {
      out[c.name] = c.schema;
      visit(c.schema);
    }
    for (const x of Object.values(v)) visit(x);
  };
  schemas.forEach(visit);
  return out;
}
