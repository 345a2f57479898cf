/**
 * Gatus's endpoint conditions as Vigil's checks (README "Coming from Gatus"): `[STATUS]` comparisons
 * become expected_http_codes, `[RESPONSE_TIME] <` api_max_latency_ms, `[BODY].path` comparisons JSON
 * assertions, `[CERTIFICATE_EXPIRATION] >` ssl_expiry_warn_days, `[CONNECTED] == true` what every
 * check already requires. A condition Vigil cannot express is returned in `unsupported`, never
 * dropped silently.
 */
import type { JsonAssertion } from "../domain/monitor.ts";
import { PatternBudget, patternTester } from "../domain/user-patterns.ts";
import { goDurationMs } from "./plan.ts";

/** What the endpoint is, from its url scheme (or its dns block). */
export type EndpointKind = "http" | "tcp" | "ping" | "dns" | "websocket" | "grpc" | "ssl" | "smtp";

export interface ConditionOutcome {
  /** allowed status codes, when any [STATUS] condition was given */
  codes: Set<number> | null;
  maxLatencyMs: number | null;
  assertions: JsonAssertion[];
  bodyContains: string | null;
  certWarnDays: number | null;
  dnsAnswer: string | null;
  wsExpect: string | null;
  unsupported: string[];
  notes: string[];
}

const OPERATOR = /^(.+?)\s*(==|!=|<=|>=|<|>)\s*(.+)$/;
const ALL_CODES = Array.from({ length: 500 }, (_, i) => i + 100);

/** `pat(...)`'s glob (only `*` is special) as an anchored regular expression. */
const globRegex = (glob: string) => `^${glob.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`;
const call = (fn: string, text: string): string | null => {
  const m = new RegExp(`^${fn}\\((.*)\\)$`).exec(text.trim());
  return m ? m[1]! : null;
};
const anyOf = (text: string) => call("any", text)?.split(",").map((v) => v.trim());

function statusCodes(op: string, right: string): Set<number> | null {
  const any = anyOf(right);
  const pat = call("pat", right);
  const n = Number(right);
  let test: (c: number) => boolean;
  if (any) {
    if (op !== "==" && op !== "!=") return null;
    const set = new Set(any.map(Number));
    test = op === "==" ? (c) => set.has(c) : (c) => !set.has(c);
  } else if (pat !== null) {
    if (op !== "==" && op !== "!=") return null;
    // the glob is the user's: matched by the linear-time engine, as every user pattern is
    const matches = patternTester(globRegex(pat));
    if (typeof matches === "string") return null;
    test = op === "==" ? (c) => matches(String(c)) : (c) => !matches(String(c));
  } else if (Number.isInteger(n)) {
    test = { "==": (c: number) => c === n, "!=": (c: number) => c !== n, "<": (c: number) => c < n, "<=": (c: number) => c <= n, ">": (c: number) => c > n, ">=": (c: number) => c >= n }[op]!;
  } else return null;
  return new Set(ALL_CODES.filter(test));
}

/** A set of codes as Vigil's expected_http_codes: runs of codes as ranges ("200-299,404"). */
export function codesText(codes: Set<number>): string {
  const sorted = [...codes].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}

/** `[BODY].a.b` → "a.b"; null when the text is not a body path. */
const bodyPath = (text: string): string | null => {
  const m = /^\[BODY\](\S*)$/.exec(text.trim());
  return m ? m[1]!.replace(/^\./, "") : null;
};

export function mapConditions(conditions: unknown[], kind: EndpointKind): ConditionOutcome {
  const o: ConditionOutcome = { codes: null, maxLatencyMs: null, assertions: [], bodyContains: null, certWarnDays: null, dnsAnswer: null, wsExpect: null, unsupported: [], notes: [] };
  const unsupported = (c: string, why: string) => o.unsupported.push(`"${c}" (${why})`);
  const patterns = new PatternBudget();
  for (const raw of conditions) {
    const c = String(raw).trim();
    const m = OPERATOR.exec(c);
    if (!m) {
      unsupported(c, "not a comparison");
      continue;
    }
    const [, left, op, right] = m as unknown as [string, string, string, string];
    const l = left.trim();
    const r = right.trim();
    if (l === "[CONNECTED]") {
      if (op === "==" && r === "true") continue; // every Vigil check needs the connection
      unsupported(c, "Vigil reports a failed connection as down");
    } else if (l === "[STATUS]") {
      const codes = kind === "http" ? statusCodes(op, r) : null;
      if (!codes) unsupported(c, kind === "http" ? "a comparison Vigil's status codes cannot say" : "no status code on this kind of endpoint");
      else o.codes = o.codes ? new Set([...o.codes].filter((x) => codes.has(x))) : codes;
    } else if (l === "[RESPONSE_TIME]") {
      const n = Number(r);
      if ((op === "<" || op === "<=") && Number.isFinite(n) && n >= 1) {
        const ms = Math.min(60_000, Math.round(op === "<" ? n : n + 1) - 1 || 1);
        o.maxLatencyMs = o.maxLatencyMs === null ? ms : Math.min(o.maxLatencyMs, ms);
        if (!o.notes.some((x) => x.startsWith("slower"))) o.notes.push("slower answers make the monitor degraded, not down");
      } else unsupported(c, "Vigil only bounds the response time from above");
    } else if (l === "[CERTIFICATE_EXPIRATION]") {
      const ms = goDurationMs(r);
      if ((op === ">" || op === ">=") && ms !== null && ms > 0 && (kind === "http" || kind === "ssl" || kind === "smtp")) {
        o.certWarnDays = Math.min(365, Math.max(1, Math.ceil(ms / 86_400_000)));
        o.notes.push(`a certificate expiring within ${o.certWarnDays} day${o.certWarnDays === 1 ? "" : "s"} makes the monitor degraded and sends an expiry alert, rather than down`);
      } else unsupported(c, "Vigil warns of certificate expiry ahead of a number of days");
    } else if (l === "[DNS_RCODE]") {
      if (kind === "dns" && op === "==" && r === "NOERROR") continue; // an answer is what Vigil's dns check needs
      unsupported(c, "Vigil's dns check is up on an answer, down otherwise");
    } else if (l === "[BODY]") {
      const pat = call("pat", r);
      const inner = pat !== null && /^\*[^*]+\*$/.test(pat) ? pat.slice(1, -1) : null;
      if (op === "==" && kind === "http" && inner) o.bodyContains = inner;
      else if (op === "==" && kind === "websocket" && inner) o.wsExpect = inner;
      else if (op === "==" && kind === "dns" && pat === null && !anyOf(r)) o.dnsAnswer = r;
      else unsupported(c, kind === "http" ? "Vigil can require the body to contain a text (pat(*text*)), not equal one" : "not a comparison Vigil can make on this kind of endpoint");
    } else if (bodyPath(l) !== null) {
      const path = bodyPath(l)!;
      if (kind === "grpc" && path === "status" && op === "==" && r === "SERVING") continue; // what Vigil's grpc check requires
      if (kind !== "http") unsupported(c, "JSON assertions are for http endpoints");
      else if (bodyPath(r) !== null) unsupported(c, "Vigil compares a JSON value with a constant, not with another path");
      else {
        const rule = assertion(path, op, r);
        const refused = typeof rule === "string" ? rule : regexRefusal(rule, patterns);
        if (refused) unsupported(c, refused);
        else o.assertions.push(rule as JsonAssertion);
      }
    } else if (/^has\(\[BODY\]\S*\)$/.test(l) && (r === "true" || r === "false") && op === "==" && kind === "http") {
      const path = bodyPath(call("has", l)!)!;
      o.assertions.push({ path: path || "$", op: r === "true" ? "is_not_null" : "is_null" });
      if (!o.notes.some((x) => x.includes("has("))) o.notes.push("has() became is_not_null / is_null: a value of null counts as absent");
    } else {
      unsupported(c, l.startsWith("len(") ? "Vigil has no length comparison" : l === "[IP]" ? "Vigil does not check the resolved address" : l === "[DOMAIN_EXPIRATION]" ? "make a domain monitor for the domain's expiry" : "a placeholder Vigil has no check for");
    }
  }
  return o;
}

/**
 * Why a regex assertion built from a condition cannot be kept, or null: the API's rules for a
 * rule's value (docs/monitors.md "JSON assertions"), so the endpoint is imported without the
 * condition, noted, rather than refused whole.
 */
function regexRefusal(rule: JsonAssertion, patterns: PatternBudget): string | null {
  if (rule.op !== "regex") return null;
  if ((rule.value ?? "").length > 1000) return "the pattern it makes is longer than the 1000 characters of a rule's value";
  const p = patterns.problem(rule.value ?? "");
  return p ? `the pattern it makes ${p}` : null;
}

function assertion(path: string, op: string, right: string): JsonAssertion | string {
  const p = path || "$";
  const any = anyOf(right);
  const pat = call("pat", right);
  if (any) return op === "==" ? { path: p, op: "regex", value: `^(${any.map((v) => v.replace(/[.+?^${}()|[\]\\*]/g, "\\$&")).join("|")})$` } : "Vigil cannot say none of several values";
  if (pat !== null) return op === "==" ? { path: p, op: "regex", value: globRegex(pat) } : "Vigil cannot say a value must not match a pattern";
  if (op === "==") return { path: p, op: "equals", value: right };
  if (op === "!=") return { path: p, op: "not_equals", value: right };
  if (op === "<" || op === ">") return Number.isFinite(Number(right)) ? { path: p, op: op === "<" ? "less_than" : "greater_than", value: right } : "a comparison with a number needs a number";
  return `Vigil compares with <, >, == and !=, not ${op}`;
}
