import { validationError } from "../http/errors.ts";

/**
 * What a write takes: the attributes as a client sent them, not yet validated (the validators name
 * every problem, with the messages the API and the dashboard both show). The API also accepts them
 * wrapped as a JSON:API document, `{"data": {"type": ..., "attributes": {...}}}` (README "API
 * behaviour"); the dashboard sends them flat.
 */
export type WriteInput = Record<string, unknown>;

type WrittenType = "monitor" | "status_page" | "notification_channel" | "maintenance_window" | "group" | "status_page_update";

/**
 * The attributes of a write, flat or unwrapped from a JSON:API document. A document of another
 * type, or whose `id` differs from the one written, is a 422 naming the member. Unwrapped after
 * the record was found, so a write to another account's id is a 404 whatever its body.
 */
export function attributesOf(input: WriteInput | undefined, type: WrittenType, id?: number): Record<string, unknown> {
  const b = input ?? {};
  if (!("data" in b)) return b;
  const data = b.data;
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(data)) throw validationError({ data: [`must be an object {"type": "${type}", "attributes": {...}}`] });
  const details: Record<string, string[]> = {};
  if (data.type !== type) details["data.type"] = [`must be "${type}"`];
  if (!isObject(data.attributes)) details["data.attributes"] = ["must be an object of the resource's attributes"];
  if (id !== undefined && data.id !== undefined && String(data.id) !== String(id)) details["data.id"] = ["must match the id in the URL, or be left out"];
  for (const k of Object.keys(b)) if (k !== "data" && k !== "meta" && k !== "jsonapi") details[k] = ['is not allowed beside "data" in a JSON:API body'];
  if (Object.keys(details).length) throw validationError(details);
  return data.attributes as Record<string, unknown>;
}
