/**
 * The checks run on a received response, in the order a person would debug them: status code,
 * keyword, content type, expected body text, JSON assertions. The first failure decides the code.
 */
import type { CheckErrorCode } from "../domain/check-result.ts";
import type { JsonAssertion } from "../domain/monitor.ts";
import { parseExpectedCodes } from "../domain/expected-codes.ts";
import { describeFailure, evaluateAssertion, regexSubject, type AssertionOutcome } from "../domain/json-assertions.ts";
import type { PatternJob, PatternMatcher } from "../domain/user-patterns.ts";
import { maskBody, maskJson } from "./request-auth.ts";

export interface ResponseExpectations {
  expectedCodes: string | null | undefined;
  keyword?: string | null;
  contentType?: string | null;
  bodyContains?: string | null;
  assertions?: JsonAssertion[] | null;
}

export interface ReceivedResponse {
  status: number;
  headers: Record<string, string>;
  bodyText: string;
  /** why bodyText is not the whole body ("only the first 4194304 bytes of the body are read"), or null */
  partial?: string | null;
}

export interface ResponseVerdict {
  failure: { code: CheckErrorCode; message: string } | null;
  assertions: AssertionOutcome[];
}

/** "application/json; charset=utf-8" → "application/json" */
export function mediaType(value: string | undefined | null): string {
  return (value ?? "").split(";")[0].trim().toLowerCase();
}

function quote(s: string, max = 100): string {
  return JSON.stringify(s.length > max ? s.slice(0, max) + "…" : s);
}

export function parseJsonBody(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** What a response is judged with besides the monitor's expectations. */
export interface Judging {
  /** the monitor's secrets: masked in the body before it is judged, and in text quoted from it */
  secrets: string[];
  /** runs the `regex` rules' patterns (user-patterns.ts) */
  patterns: PatternMatcher;
  /** the check's deadline: patterns still running when it fires end the check */
  signal: AbortSignal;
}

/**
 * Judges the body with the monitor's secrets masked (docs/monitors.md "Judged with the secrets
 * masked"): a target that echoes the request back would otherwise let a keyword or a pattern such
 * as `^Bearer Zq7` tell a stored secret one character at a time, by whether the check is up. The
 * mask also runs on the whole text before a message quotes it cut short: masking the cut text
 * instead would leave the start of a secret that straddles the cut.
 */
export async function checkResponse(res: ReceivedResponse, exp: ResponseExpectations, how: Judging): Promise<ResponseVerdict> {
  const codes = parseExpectedCodes(exp.expectedCodes);
  const fail = (code: CheckErrorCode, message: string, assertions: AssertionOutcome[] = []): ResponseVerdict => ({ failure: { code, message }, assertions });
  if (!codes.matches(res.status)) return fail("http_error", `expected status ${codes.text}, got ${res.status}`);
  const partial = res.partial ? ` (${res.partial})` : "";
  const body = maskBody(res.bodyText, how.secrets, Boolean(res.partial));
  if (exp.keyword && !body.includes(exp.keyword)) {
    return fail("keyword_missing", `expected the body to contain keyword ${quote(exp.keyword)}, not found in ${Buffer.byteLength(res.bodyText)} bytes${partial}`);
  }
  if (exp.contentType) {
    const want = mediaType(exp.contentType);
    const got = mediaType(res.headers["content-type"]);
    if (want !== got) return fail("content_type_mismatch", `expected content type ${want}, got ${got || "none"}`);
  }
  if (exp.bodyContains && !body.includes(exp.bodyContains)) {
    return fail("body_mismatch", `expected the body to contain ${quote(exp.bodyContains)}, got ${quote(body)}${partial}`);
  }
  const rules = exp.assertions ?? [];
  if (rules.length === 0) return { failure: null, assertions: [] };
  const parsed = parseJsonBody(body);
  if (!parsed.ok && res.partial) return fail("assertion_failed", `expected a JSON body for ${rules.length} assertion(s), but ${res.partial}`);
  if (!parsed.ok) return fail("assertion_failed", `expected a JSON body for ${rules.length} assertion(s), got ${quote(body)}`);
  const doc = maskJson(parsed.value, how.secrets);
  const matched = await matchRegexRules(doc, rules, how);
  if (typeof matched === "string") return fail("assertion_failed", matched);
  const outcomes = rules.map((rule, i) => evaluateAssertion(doc, rule, matched[i] === true));
  const first = outcomes.find((o) => !o.passed);
  if (first) return fail("assertion_failed", describeFailure(first), outcomes);
  return { failure: null, assertions: outcomes };
}

/** Whether each `regex` rule matched (by rule index), or the message of a check that cannot say. */
async function matchRegexRules(doc: unknown, rules: JsonAssertion[], how: Judging): Promise<(boolean | undefined)[] | string> {
  const texts: string[] = [];
  const jobs: PatternJob[] = [];
  const ruleOf: number[] = [];
  rules.forEach((rule, i) => {
    const subject = regexSubject(doc, rule);
    if (subject === null) return;
    let text = texts.indexOf(subject);
    if (text < 0) text = texts.push(subject) - 1;
    jobs.push({ pattern: rule.value ?? "", text, want: "test" });
    ruleOf.push(i);
  });
  const matched: (boolean | undefined)[] = [];
  if (jobs.length === 0) return matched;
  let outcomes;
  try {
    outcomes = await how.patterns.run({ texts, jobs }, how.signal);
  } catch (err) {
    return `the regex assertions could not be judged: ${(err as Error).message}`;
  }
  for (let j = 0; j < jobs.length; j++) {
    const o = outcomes[j]!;
    const i = ruleOf[j]!;
    if ("refused" in o) return `rule ${i + 1}: the pattern ${quote(jobs[j]!.pattern)} cannot be run (RE2 syntax; no backreferences or lookarounds): ${o.refused}; edit the monitor`;
    matched[i] = o.matched;
  }
  return matched;
}

/** Why a read body is not the whole body, in words for messages; null when it is whole. */
export function partialBody(res: { capped: boolean; decodeError: string | null; body: Buffer }): string | null {
  if (res.decodeError) return `the body could not be decoded: ${res.decodeError}`;
  if (res.capped) return `only the first ${res.body.length} bytes of the body are read`;
  return null;
}
