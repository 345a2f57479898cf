/**
 * Schemas and rules for the structured monitor attributes: JSON assertion rules (docs/monitors.md
 * "JSON assertions") and the synthetic scenario (`synthetic_steps_json`, our design; README
 * "Synthetic scenarios (`synthetic_steps_json`)" documents it). The TypeBox schemas feed the OpenAPI
 * document; the check functions give the messages a person can act on, prefixed with where in the
 * value the problem is.
 */
import { Type } from "@sinclair/typebox";
import { expectedCodesProblems } from "./expected-codes.ts";
import { HTTP_METHODS, JSON_ASSERTION_OPS } from "./monitor.ts";
import { PatternBudget } from "./user-patterns.ts";
import { stepBodyUseOnHead } from "./body-checks.ts";

export const MAX_ASSERTIONS = 50;
export const MAX_STEPS = 20;
export const MAX_EXTRACTIONS = 20;
export const MAX_HEADERS = 50;
export const MAX_BODY_CHARS = 65_536;

const VALUELESS_OPS = new Set(["is_null", "is_not_null"]);

export const JsonAssertionSchema = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 500, description: "dot path into the JSON response, e.g. items.0.id" }),
    op: Type.Union(JSON_ASSERTION_OPS.map((o) => Type.Literal(o)), { description: "comparison" }),
    value: Type.Optional(Type.String({ maxLength: 1000, description: "comparison value; omitted for is_null and is_not_null; for regex an RE2 pattern (no backreferences or lookarounds)" })),
  },
  { additionalProperties: false },
);

export const HeadersSchema = Type.Record(Type.String(), Type.String(), { description: "HTTP header name to value" });

export const SyntheticExtractionSchema = Type.Object(
  {
    name: Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$", description: "variable name, used in later steps as {{name}}" }),
    from: Type.Union([Type.Literal("json"), Type.Literal("header"), Type.Literal("regex")]),
    path: Type.String({ minLength: 1, maxLength: 500, description: "dot path (json), header name (header) or an RE2 pattern whose first group is kept (regex)" }),
  },
  { additionalProperties: false },
);

export const SyntheticStepSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    method: Type.Optional(Type.Union(HTTP_METHODS.map((m) => Type.Literal(m)), { default: "GET" })),
    url: Type.String({ minLength: 1, maxLength: 2048, description: "absolute http(s) URL, or a path starting with / taken against the monitor's target; may use {{variables}}" }),
    headers: Type.Optional(HeadersSchema),
    body: Type.Optional(Type.String({ maxLength: MAX_BODY_CHARS })),
    expected_http_codes: Type.Optional(Type.String({ description: "as the monitor's expected_http_codes; default 200-299" })),
    extract: Type.Optional(Type.Array(SyntheticExtractionSchema, { maxItems: MAX_EXTRACTIONS })),
    assertions: Type.Optional(Type.Array(JsonAssertionSchema, { maxItems: MAX_ASSERTIONS })),
  },
  { additionalProperties: false },
);

export const SyntheticScenarioSchema = Type.Object(
  { steps: Type.Array(SyntheticStepSchema, { minItems: 1, maxItems: MAX_STEPS }) },
  { additionalProperties: false, description: "multi-step scenario: steps run in order; variables extracted by a step are usable in later steps" },
);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function unknownKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string, out: string[]): void {
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) out.push(`${where}: "${k}" is not allowed here; allowed: ${allowed.join(", ")}`);
}

/**
 * Problems of a list of assertion rules; `prefix` goes before each message (e.g. "step 2: assertions: ").
 * `patterns` is shared by every pattern of the attribute (user-patterns.ts, PatternBudget).
 */
export function assertionProblems(value: unknown, prefix = "", patterns = new PatternBudget()): string[] {
  const out: string[] = [];
  if (!Array.isArray(value)) return [`${prefix}must be a list of rules {path, op, value}`];
  if (value.length > MAX_ASSERTIONS) out.push(`${prefix}must have at most ${MAX_ASSERTIONS} rules`);
  value.slice(0, MAX_ASSERTIONS).forEach((rule, i) => {
    const where = `${prefix}rule ${i + 1}`;
    if (!isObject(rule)) return void out.push(`${where}: must be an object {path, op, value}`);
    unknownKeys(rule, ["path", "op", "value"], where, out);
    if (typeof rule.path !== "string" || rule.path.trim() === "" || rule.path.length > 500) out.push(`${where}: path must be a dot path such as items.0.id (1 to 500 characters)`);
    if (typeof rule.op !== "string" || !(JSON_ASSERTION_OPS as readonly string[]).includes(rule.op)) {
      out.push(`${where}: op must be one of ${JSON_ASSERTION_OPS.join(", ")}`);
      return;
    }
    if (VALUELESS_OPS.has(rule.op)) {
      if (rule.value !== undefined && rule.value !== null) out.push(`${where}: value must be omitted for op ${rule.op}`);
      return;
    }
    if (typeof rule.value !== "string") return void out.push(`${where}: value is required for op ${rule.op} and must be a string`);
    if (rule.value.length > 1000) out.push(`${where}: value must be at most 1000 characters`);
    if (rule.op === "regex" && rule.value.length <= 1000) {
      const p = patterns.problem(rule.value);
      if (p) out.push(`${where}: value ${p}`);
    }
    if ((rule.op === "greater_than" || rule.op === "less_than") && !Number.isFinite(Number(rule.value))) {
      out.push(`${where}: value must be a number for op ${rule.op}`);
    }
  });
  return out;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Header names must be HTTP tokens and values single-line, or the request could not be sent. */
export function headerProblems(value: unknown, prefix = ""): string[] {
  if (!isObject(value)) return [`${prefix}must be an object mapping header names to string values`];
  const out: string[] = [];
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) out.push(`${prefix}must have at most ${MAX_HEADERS} headers`);
  for (const [name, v] of entries) {
    if (!TOKEN.test(name)) out.push(`${prefix}header name "${name.slice(0, 100)}" is not a valid HTTP header name`);
    // the value is not echoed: custom headers often carry credentials
    if (typeof v !== "string") out.push(`${prefix}the value of header "${name.slice(0, 100)}" must be a string`);
    else if (/[\r\n\0]/.test(v) || v.length > 8192) out.push(`${prefix}the value of header "${name.slice(0, 100)}" must be one line of at most 8192 characters`);
  }
  return out;
}

const VARIABLE = /\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g;

function variablesIn(text: string): string[] {
  return [...text.matchAll(VARIABLE)].map((m) => m[1]!);
}

/** Problems of a synthetic scenario, each naming the step (1-based) and key. */
export function scenarioProblems(value: unknown): string[] {
  if (!isObject(value)) return ['must be an object {"steps": [...]}'];
  const out: string[] = [];
  unknownKeys(value, ["steps"], "scenario", out);
  const steps = value.steps;
  if (!Array.isArray(steps) || steps.length === 0) return [...out, "steps must be a list of 1 to 20 steps"];
  if (steps.length > MAX_STEPS) out.push(`steps must have at most ${MAX_STEPS} entries`);
  const defined = new Set<string>();
  const patterns = new PatternBudget();
  steps.slice(0, MAX_STEPS).forEach((step, i) => {
    const where = `step ${i + 1}`;
    if (!isObject(step)) return void out.push(`${where}: must be an object with at least a url`);
    unknownKeys(step, ["name", "method", "url", "headers", "body", "expected_http_codes", "extract", "assertions"], where, out);
    if (step.name !== undefined && (typeof step.name !== "string" || step.name.trim() === "" || step.name.length > 100)) out.push(`${where}: name must be a string of 1 to 100 characters`);
    if (step.method !== undefined && !(HTTP_METHODS as readonly string[]).includes(step.method as string)) out.push(`${where}: method must be one of ${HTTP_METHODS.join(", ")}`);
    const used: string[] = [];
    if (typeof step.url !== "string" || step.url.trim() === "" || step.url.length > 2048) {
      out.push(`${where}: url is required: an absolute http(s) URL or a path starting with / (at most 2048 characters)`);
    } else {
      used.push(...variablesIn(step.url));
      const plain = step.url.replace(VARIABLE, "x");
      if (!plain.startsWith("/") && !/^https?:\/\/[^/\s]+/i.test(plain)) out.push(`${where}: url must be an absolute http(s) URL or a path starting with /`);
    }
    if (step.headers !== undefined) {
      out.push(...headerProblems(step.headers, `${where}: headers: `));
      if (isObject(step.headers)) for (const v of Object.values(step.headers)) if (typeof v === "string") used.push(...variablesIn(v));
    }
    if (step.body !== undefined) {
      if (typeof step.body !== "string" || step.body.length > MAX_BODY_CHARS) out.push(`${where}: body must be a string of at most ${MAX_BODY_CHARS} characters`);
      else used.push(...variablesIn(step.body));
    }
    if (step.expected_http_codes !== undefined) {
      if (typeof step.expected_http_codes !== "string") out.push(`${where}: expected_http_codes must be a string such as "200,201" or "2xx"`);
      else for (const p of expectedCodesProblems(step.expected_http_codes)) out.push(`${where}: expected_http_codes ${p}`);
    }
    for (const name of used) if (!defined.has(name)) out.push(`${where}: variable {{${name}}} is not extracted by an earlier step`);
    if (step.assertions !== undefined) out.push(...assertionProblems(step.assertions, `${where}: assertions: `, patterns));
    for (const use of stepBodyUseOnHead(step)) out.push(`${where}: ${use} can never be met on a HEAD request (its answer has no body); use GET`);
    if (step.extract !== undefined) {
      if (!Array.isArray(step.extract)) out.push(`${where}: extract must be a list of {name, from, path}`);
      else {
        if (step.extract.length > MAX_EXTRACTIONS) out.push(`${where}: extract must have at most ${MAX_EXTRACTIONS} entries`);
        step.extract.slice(0, MAX_EXTRACTIONS).forEach((rule, j) => out.push(...extractionProblems(rule, `${where}: extract ${j + 1}`, defined, patterns)));
      }
    }
  });
  return out;
}

function extractionProblems(rule: unknown, where: string, defined: Set<string>, patterns: PatternBudget): string[] {
  if (!isObject(rule)) return [`${where}: must be an object {name, from, path}`];
  const out: string[] = [];
  unknownKeys(rule, ["name", "from", "path"], where, out);
  if (typeof rule.name !== "string" || !/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(rule.name)) {
    out.push(`${where}: name must start with a letter or _ and use only letters, digits, _, . and - (at most 64)`);
  } else defined.add(rule.name);
  if (rule.from !== "json" && rule.from !== "header" && rule.from !== "regex") out.push(`${where}: from must be one of json, header, regex`);
  if (typeof rule.path !== "string" || rule.path.trim() === "" || rule.path.length > 500) {
    out.push(`${where}: path must be a string of 1 to 500 characters`);
  } else if (rule.from === "regex") {
    const p = patterns.problem(rule.path);
    if (p) out.push(`${where}: path ${p}`);
  }
  return out;
}
