/**
 * Evaluation of JSON assertion rules (docs/monitors.md "JSON assertions"). Pure: the HTTP and
 * synthetic probes call it with the parsed body, the API validator reuses the op list from monitor.ts.
 * A `regex` rule's pattern is matched beforehand by the check's pattern matcher (user-patterns.ts),
 * which may run on another thread; this module is told whether it matched.
 */
import type { JsonAssertion } from "./monitor.ts";
import { getJsonPath, MISSING } from "./json-path.ts";

export interface AssertionOutcome {
  path: string;
  op: string;
  value: string | null;
  passed: boolean;
  /** what was found, as text; "(missing)" when the path does not exist */
  actual: string;
}

/** Text form used for comparisons and messages: strings as-is, everything else as JSON. */
export function jsonText(v: unknown): string {
  if (v === MISSING || v === undefined) return "(missing)";
  return typeof v === "string" ? v : JSON.stringify(v);
}

function asNumber(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function equalsValue(actual: unknown, expected: string): boolean {
  const a = asNumber(actual);
  const e = asNumber(expected);
  // numbers compare by value so "1.0" equals 1; strings compare exactly.
  if (typeof actual === "number" && a !== null && e !== null) return a === e;
  return jsonText(actual) === expected;
}

function containsValue(actual: unknown, expected: string): boolean {
  if (typeof actual === "string") return actual.includes(expected);
  if (Array.isArray(actual)) return actual.some((el) => equalsValue(el, expected));
  if (actual !== null && typeof actual === "object") return Object.prototype.hasOwnProperty.call(actual, expected);
  return false;
}

function check(op: string, actual: unknown, expected: string, matched: boolean): boolean {
  // A missing path counts as null for the null checks and fails every comparison.
  if (op === "is_null") return actual === null || actual === MISSING;
  if (op === "is_not_null") return actual !== null && actual !== MISSING;
  if (actual === MISSING) return false;
  switch (op) {
    case "equals": return equalsValue(actual, expected);
    case "not_equals": return !equalsValue(actual, expected);
    case "contains": return containsValue(actual, expected);
    case "not_contains": return !containsValue(actual, expected);
    case "greater_than":
    case "less_than": {
      const a = asNumber(actual);
      const e = asNumber(expected);
      if (a === null || e === null) return false;
      return op === "greater_than" ? a > e : a < e;
    }
    case "regex":
      return matched;
    default:
      return false;
  }
}

/** The text a `regex` rule's pattern is matched against, or null when the rule needs no match (another op, or a missing path). */
export function regexSubject(doc: unknown, rule: JsonAssertion): string | null {
  if (rule.op !== "regex") return null;
  const actual = getJsonPath(doc, rule.path);
  return actual === MISSING ? null : jsonText(actual);
}

/** `matched`: whether a `regex` rule's pattern matched its subject (ignored for other ops). */
export function evaluateAssertion(doc: unknown, rule: JsonAssertion, matched = false): AssertionOutcome {
  const actual = getJsonPath(doc, rule.path);
  const value = rule.value ?? null;
  return { path: rule.path, op: rule.op, value, passed: check(rule.op, actual, value ?? "", matched), actual: jsonText(actual) };
}

/** "expected items.0.id equals 7, got 8" */
export function describeFailure(o: AssertionOutcome): string {
  const expected = o.value === null ? o.op.replaceAll("_", " ") : `${o.op.replaceAll("_", " ")} ${JSON.stringify(o.value)}`;
  return `expected ${o.path} ${expected}, got ${o.actual.length > 200 ? o.actual.slice(0, 200) + "…" : o.actual}`;
}
