/**
 * Variables of a synthetic scenario: extraction from a step's response and {{name}} substitution in
 * later steps' url, headers and body.
 */
import type { SyntheticExtraction } from "../domain/monitor.ts";
import { getJsonPath, MISSING } from "../domain/json-path.ts";
import { jsonText } from "../domain/json-assertions.ts";
import { parseJsonBody } from "./response-checks.ts";

export type Vars = Record<string, string>;

export class UnknownVariable extends Error {
  constructor(public readonly variable: string) {
    super(`variable {{${variable}}} is not defined by an earlier step`);
  }
}

/** Replaces {{name}}; `encode` is applied to values placed in a URL. Throws UnknownVariable. */
export function substitute(text: string, vars: Vars, encode: (v: string) => string = (v) => v): string {
  return text.replace(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g, (_, name: string) => {
    if (!Object.prototype.hasOwnProperty.call(vars, name)) throw new UnknownVariable(name);
    return encode(vars[name]);
  });
}

/** Substitutes in a URL; values go into the path or query, so they are percent-encoded. */
export function substituteUrl(url: string, vars: Vars): string {
  return substitute(url, vars, encodeURIComponent);
}

export function substituteHeaders(headers: Record<string, string> | undefined, vars: Vars): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) out[k] = substitute(String(v), vars);
  return out;
}

/** Returns the value, or an error text naming what could not be found. */
export function extract(rule: SyntheticExtraction, res: { headers: Record<string, string>; bodyText: string }): { value: string } | { error: string } {
  switch (rule.from) {
    case "json": {
      const parsed = parseJsonBody(res.bodyText);
      if (!parsed.ok) return { error: `cannot extract ${rule.name}: the body is not JSON` };
      const v = getJsonPath(parsed.value, rule.path);
      if (v === MISSING) return { error: `cannot extract ${rule.name}: JSON path ${rule.path} not found` };
      return { value: jsonText(v) };
    }
    case "header": {
      const v = res.headers[rule.path.toLowerCase()];
      return v === undefined ? { error: `cannot extract ${rule.name}: header ${rule.path} not in the response` } : { value: v };
    }
    case "regex": {
      let re: RegExp;
      try {
        re = new RegExp(rule.path);
      } catch {
        return { error: `cannot extract ${rule.name}: invalid regex ${rule.path}` };
      }
      const m = re.exec(res.bodyText);
      if (!m) return { error: `cannot extract ${rule.name}: regex ${rule.path} does not match the body` };
      return { value: m[1] ?? m[0] };
    }
    default:
      return { error: `cannot extract ${String((rule as SyntheticExtraction).name)}: unknown source ${String((rule as SyntheticExtraction).from)}` };
  }
}
