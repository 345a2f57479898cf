import { invalidJson, payloadTooLarge, unsupportedMediaType } from "./errors.ts";
import { readLimited } from "./read-limited.ts";

export const MAX_BODY_BYTES = 1024 * 1024;
/** deepest nesting of arrays and objects a JSON body may have */
export const MAX_JSON_DEPTH = 64;

/** application/json or application/vnd.api+json, with any parameters such as charset. */
export function isJsonContentType(header: string | null): boolean {
  if (!header) return false;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || type === "application/vnd.api+json";
}

/**
 * Reads a JSON object body with the documented errors: 415 for another media type, 413 over the
 * limit (checked while streaming, so a lying Content-Length cannot make us buffer more), 400 for
 * text that is not JSON or not an object.
 */
export async function readJsonObject(request: Request, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  if (!isJsonContentType(request.headers.get("content-type"))) throw unsupportedMediaType();
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw payloadTooLarge(limit);
  const bytes = await readLimited(request, limit);
  if (bytes === null) throw payloadTooLarge(limit);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalidJson("the body is not valid UTF-8");
  }
  if (text.trim() === "") throw invalidJson("the body is empty; send a JSON object");
  // JSON.parse copes with any depth, but code that walks a value recursively (JSON.stringify when a
  // value is stored) overflows the stack near 10,000 levels: a peer result with a 100,000-deep
  // synthetic_trace_json failed to store on every retry. No document of ours nests this deep.
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw invalidJson(`the body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Bun's parse error quotes the text it choked on, and a malformed body may hold a secret, so
    // the message quotes nothing from the body.
    throw invalidJson("the body is not valid JSON; check its syntax (quotes, commas, brackets)");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw invalidJson("the body must be a JSON object");
  return value as Record<string, unknown>;
}


/** True when `text` opens more than `max` arrays/objects at once (brackets inside strings ignored). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
