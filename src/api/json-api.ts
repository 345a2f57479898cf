import type { ResourceType } from "./envelope.ts";
import { notFound, validationError } from "../http/errors.ts";

/**
 * Writes take a flat object or `{ "data": { "type": ..., "attributes": {...} } }` (decisions.md
 * "Resources"). Returns the attributes; a JSON:API body of another type, or whose `id` differs
 * from the path's, is a 422 naming the member.
 */
export function writeAttributes(body: Record<string, unknown> | undefined, type: ResourceType, pathId?: number): Record<string, unknown> {
  const b = body ?? {};
  if (!("data" in b)) return b;
  const data = b.data;
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(data)) throw validationError({ data: [`must be an object {"type": "${type}", "attributes": {...}}`] });
  const details: Record<string, string[]> = {};
  if (data.type !== type) details["data.type"] = [`must be "${type}"`];
  if (!isObject(data.attributes)) details["data.attributes"] = ["must be an object of the resource's attributes"];
  if (pathId !== undefined && data.id !== undefined && String(data.id) !== String(pathId)) details["data.id"] = ["must match the id in the URL, or be left out"];
  for (const k of Object.keys(b)) if (k !== "data" && k !== "meta" && k !== "jsonapi") details[k] = ['is not allowed beside "data" in a JSON:API body'];
  if (Object.keys(details).length) throw validationError(details);
  return data.attributes as Record<string, unknown>;
}

/** Ids in paths are positive integers; anything else cannot name a record, so it is a 404. */
export function pathId(params: Record<string, string>, what: string, name = "id"): number {
  const raw = params[name] ?? "";
  if (!/^[1-9]\d{0,15}$/.test(raw)) throw notFound(what);
  const id = Number(raw);
  if (!Number.isSafeInteger(id)) throw notFound(what);
  return id;
}
