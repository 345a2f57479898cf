/**
 * Dot paths into a JSON value, as used by `api_json_assertions_json`, synthetic extraction and the
 * heartbeat payload key. Accepts `items.0.id`, `items[0].id` and an optional leading `$.`.
 */
export const MISSING: unique symbol = Symbol("missing");
export type Lookup = unknown | typeof MISSING;

export function splitJsonPath(path: string): string[] {
  const trimmed = path.trim().replace(/^\$\.?/, "");
  if (trimmed === "") return [];
  // `a[0].b` and `a.0.b` mean the same; brackets are rewritten to dots first.
  return trimmed.replace(/\[(\d+)\]/g, ".$1").split(".").filter((p) => p !== "");
}

/**
 * Returns the value at `path`, or MISSING when any segment does not exist. An empty path is the
 * whole document.
 *
 * @example getJsonPath({ items: [{ id: 7 }] }, "items[0].id") // 7
 */
export function getJsonPath(doc: unknown, path: string): Lookup {
  let cur: unknown = doc;
  for (const seg of splitJsonPath(path)) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(seg)) return MISSING;
      const i = Number(seg);
      if (i >= cur.length) return MISSING;
      cur = cur[i];
    } else if (cur !== null && typeof cur === "object") {
      if (!Object.prototype.hasOwnProperty.call(cur, seg)) return MISSING;
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      return MISSING;
    }
  }
  return cur;
}
