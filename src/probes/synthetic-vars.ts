/**
 * Variables of a synthetic scenario: extraction from a step's response and {{name}} substitution in
 * later steps' url, headers and body.
 */
import type { SyntheticExtraction } from "../domain/monitor.ts";
import { getJsonPath, MISSING } from "../domain/json-path.ts";
import { jsonText } from "../domain/json-assertions.ts";
import type { PatternMatcher, PatternOutcome } from "../domain/user-patterns.ts";
import { maskText } from "./request-auth.ts";
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

type Readable = { headers: Record<string, string>; bodyText: string };

/**
 * The values of a step's extract rules, in order, or the error text of the first that fails. The
 * response is read as the caller masked it; a JSON value is masked again once parsed (`secrets`),
 * since parsing decodes escapes the text's masking may not have known. The `regex` rules' patterns
 * run together on the check's pattern matcher, bounded by the check's deadline.
 */
export async function extractAll(rules: SyntheticExtraction[], res: Readable, secrets: string[], patterns: PatternMatcher, signal: AbortSignal): Promise<{ values: Vars } | { error: string }> {
  const regexRules = rules.filter((r) => r.from === "regex");
  let groups: PatternOutcome[] = [];
  if (regexRules.length > 0) {
    try {
      groups = await patterns.run({ texts: [res.bodyText], jobs: regexRules.map((r) => ({ pattern: r.path, text: 0, want: "group" })) }, signal);
    } catch (err) {
      return { error: `cannot extract ${regexRules[0]!.name}: ${(err as Error).message}` };
    }
  }
  const values: Vars = {};
  let nextGroup = 0;
  for (const rule of rules) {
    const got = rule.from === "regex" ? fromRegex(rule, groups[nextGroup++]!) : extract(rule, res, secrets);
    if ("error" in got) return got;
    values[rule.name] = got.value;
  }
  return { values };
}

function fromRegex(rule: SyntheticExtraction, o: PatternOutcome): { value: string } | { error: string } {
  if ("refused" in o) return { error: `cannot extract ${rule.name}: regex ${rule.path} cannot be run (RE2 syntax; no backreferences or lookarounds): ${o.refused}; edit the monitor` };
  if (!o.matched) return { error: `cannot extract ${rule.name}: regex ${rule.path} does not match the body` };
  return { value: o.group ?? "" };
}

/** A json or header rule's value, or an error text naming what could not be found. */
function extract(rule: SyntheticExtraction, res: Readable, secrets: string[]): { value: string } | { error: string } {
  switch (rule.from) {
    case "json": {
      const parsed = parseJsonBody(res.bodyText);
      if (!parsed.ok) return { error: `cannot extract ${rule.name}: the body is not JSON` };
      const v = getJsonPath(parsed.value, rule.path);
      if (v === MISSING) return { error: `cannot extract ${rule.name}: JSON path ${rule.path} not found` };
      return { value: maskText(jsonText(v), secrets) };
    }
    case "header": {
      const v = res.headers[rule.path.toLowerCase()];
      return v === undefined ? { error: `cannot extract ${rule.name}: header ${rule.path} not in the response` } : { value: v };
    }
    default:
      return { error: `cannot extract ${String((rule as SyntheticExtraction).name)}: unknown source ${String((rule as SyntheticExtraction).from)}` };
  }
}
