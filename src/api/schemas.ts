import { Type, type TSchema } from "@sinclair/typebox";
import type { ResourceType } from "./envelope.ts";
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from "./query.ts";

/**
 * TypeBox shapes shared by every resource's OpenAPI description: envelopes (api-v1.md "Response
 * envelopes"), pagination and the paging query parameters (decisions.md "Resources").
 */
export const MetaSchema = Type.Object({
  request_id: Type.String(),
  rate_limit: Type.Optional(Type.Object({ limit: Type.Integer(), remaining: Type.Integer(), reset: Type.Integer({ description: "epoch seconds" }) })),
});

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

export const PageQuery = {
  page: Type.Integer({ minimum: 1, default: 1, description: "page number, from 1" }),
  per_page: Type.Integer({ minimum: 1, default: DEFAULT_PER_PAGE, description: `items per page; above ${MAX_PER_PAGE} is clamped to ${MAX_PER_PAGE}` }),
};

export const DateParam = (description: string) =>
  Type.String({ description: `${description}; an ISO 8601 date (2026-11-21), date-time with Z or an offset (seconds and fractions optional), or epoch seconds` });

export const enumOf = (values: readonly string[], opts: Record<string, unknown> = {}) => Type.Union(values.map((v) => Type.Literal(v)), opts);

/** JSON:API-or-flat request body for `type` (decisions.md "Resources"). */
export function writeBody(type: ResourceType, attributes: TSchema): TSchema {
  return Type.Union([attributes, Type.Object({ data: Type.Object({ type: Type.Literal(type), id: Type.Optional(Type.String()), attributes }) })]);
}
