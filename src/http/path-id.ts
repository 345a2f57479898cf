import { notFound } from "./errors.ts";

/** Ids in paths are positive integers; anything else cannot name a record, so it is a 404. */
export function pathId(params: Record<string, string>, what: string, name = "id"): number {
  const raw = params[name] ?? "";
  if (!/^[1-9]\d{0,15}$/.test(raw)) throw notFound(what);
  const id = Number(raw);
  if (!Number.isSafeInteger(id)) throw notFound(what);
  return id;
}
