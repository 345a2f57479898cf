/**
 * The checks run on a received response, in the order a person would debug them: status code,
 * keyword, content type, expected body text, JSON assertions. The first failure decides the code.
 */
import type { CheckErrorCode } from "../domain/check-result.ts";
import type { JsonAssertion } from "../domain/monitor.ts";
import { parseExpectedCodes } from "../domain/expected-codes.ts";
import { describeFailure, evaluateAssertion, type AssertionOutcome } from "../domain/json-assertions.ts";

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
  /** why bodyText is not the whole body ("the body was truncated at 4194304 bytes"), or null */
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

/**
 * `mask` hides the monitor's secrets in text quoted from the response. It runs on the whole text
 * before quoting cuts it short: masking the cut text instead would leave the start of a secret that
 * straddles the cut (an echoing target once got "Bearer sec-bea…" into a check's error message).
 */
export function checkResponse(res: ReceivedResponse, exp: ResponseExpectations, mask: (text: string) => string = (t) => t): ResponseVerdict {
  const codes = parseExpectedCodes(exp.expectedCodes);
  const fail = (code: CheckErrorCode, message: string, assertions: AssertionOutcome[] = []): ResponseVerdict => ({ failure: { code, message }, assertions });
  if (!codes.matches(res.status)) return fail("http_error", `expected status ${codes.text}, got ${res.status}`);
  const partial = res.partial ? ` (${res.partial})` : "";
  if (exp.keyword && !res.bodyText.includes(exp.keyword)) {
    return fail("keyword_missing", `expected the body to contain keyword ${quote(exp.keyword)}, not found in ${Buffer.byteLength(res.bodyText)} bytes${partial}`);
  }
  if (exp.contentType) {
    const want = mediaType(exp.contentType);
    const got = mediaType(res.headers["content-type"]);
    if (want !== got) return fail("content_type_mismatch", `expected content type ${want}, got ${got || "none"}`);
  }
  if (exp.bodyContains && !res.bodyText.includes(exp.bodyContains)) {
    return fail("body_mismatch", `expected the body to contain ${quote(exp.bodyContains)}, got ${quote(mask(res.bodyText))}${partial}`);
  }
  if (exp.assertions && exp.assertions.length > 0) {
    const parsed = parseJsonBody(res.bodyText);
    if (!parsed.ok && res.partial) return fail("assertion_failed", `expected a JSON body for ${exp.assertions.length} assertion(s), but ${res.partial}`);
    if (!parsed.ok) return fail("assertion_failed", `expected a JSON body for ${exp.assertions.length} assertion(s), got ${quote(mask(res.bodyText))}`);
    const outcomes = exp.assertions.map((rule) => evaluateAssertion(parsed.value, rule));
    const first = outcomes.find((o) => !o.passed);
    if (first) return fail("assertion_failed", describeFailure({ ...first, actual: mask(first.actual) }), outcomes);
    return { failure: null, assertions: outcomes };
  }
  return { failure: null, assertions: [] };
}

/** Why a read body is not the whole body, in words for messages; null when it is whole. */
export function partialBody(res: { truncated: boolean; decodeError: string | null; body: Buffer }): string | null {
  if (res.decodeError) return `the body could not be decoded: ${res.decodeError}`;
  if (res.truncated) return `the body was truncated at ${res.body.length} bytes`;
  return null;
}
