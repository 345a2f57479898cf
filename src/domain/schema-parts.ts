import { Type, type TNull, type TSchema, type TUnion, type TUnsafe } from "@sinclair/typebox";

/**
 * Pieces the attribute catalogues build their TypeBox schemas from, typed so that `Static<>` of a
 * catalogue's schema is the attribute's real type (a union of its literals, `| null` when nullable):
 * a view reading an attribute that was renamed or retyped is a type error.
 */

/** One of `values`: a union of string literals in the JSON Schema, the values' union in TypeScript. */
export function enumOf<const T extends readonly string[]>(values: T, opts: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Union(values.map((v) => Type.Literal(v)), opts) as unknown as TUnsafe<T[number]>;
}

/** `schema` or null. */
export function nullable<S extends TSchema>(schema: S, description?: string): TUnion<[S, TNull]> {
  return Type.Union([schema, Type.Null()], description ? { description } : {});
}

/** `schema` without its null branch: the OpenAPI document's form of an attribute a create requires. */
export function notNull(schema: TSchema): TSchema {
  const branches = (schema.anyOf as TSchema[] | undefined)?.filter((b) => b.type !== "null");
  return branches?.length === 1 ? { ...branches[0], description: schema.description ?? branches[0]!.description } : schema;
}

/**
 * `external_id`, the name a configuration file gives a resource (README "Configuration as code"):
 * optional on every resource the API creates, unique within the account for its kind (the service
 * checks that against the store).
 */
export const EXTERNAL_ID_SCHEMA = nullable(
  Type.String({ minLength: 1, maxLength: 200, description: "optional name of the resource in a configuration file (vigil export, vigil apply); unique within the account for this kind of resource" }),
);
export const EXTERNAL_ID_MESSAGE = "must be a string of 1 to 200 characters, or null";
