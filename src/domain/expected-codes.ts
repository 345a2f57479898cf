/**
 * `expected_http_codes` rules (docs/monitors.md "HTTP attributes": lists `200,201,204`, ranges
 * `200-299`, classes `2xx`, mixed; null means 200-299). Pure so the API validator and the probes
 * share one parser.
 */
export interface ExpectedCodes {
  /** canonical text used in messages, e.g. "200-299" or "200,3xx" */
  text: string;
  matches(status: number): boolean;
}

interface CodeRange { from: number; to: number }

const DEFAULT_TEXT = "200-299";

/** Parses one token; returns null when it is not a code, range or class. */
function parseToken(token: string): CodeRange | null {
  const t = token.trim().toLowerCase();
  let m = /^([1-5])xx$/.exec(t);
  if (m) return { from: Number(m[1]) * 100, to: Number(m[1]) * 100 + 99 };
  m = /^(\d{3})\s*-\s*(\d{3})$/.exec(t);
  if (m) {
    const from = Number(m[1]);
    const to = Number(m[2]);
    return from <= to ? { from, to } : null;
  }
  if (/^\d{3}$/.test(t)) return { from: Number(t), to: Number(t) };
  return null;
}

/** Returns the list of problems with a spec (empty when valid); used by validation. */
export function expectedCodesProblems(spec: string): string[] {
  const tokens = spec.split(",").map((t) => t.trim());
  if (tokens.length === 0 || tokens.every((t) => t === "")) return ["is empty"];
  return tokens.filter((t) => parseToken(t) === null).map((t) => `"${t}" is not a code, range (200-299) or class (2xx)`);
}

/**
 * Builds a matcher. Invalid tokens are skipped (validation rejects them on write); a spec with no
 * usable token falls back to the default so a bad row never makes every check pass.
 *
 * @example parseExpectedCodes("200,3xx").matches(302) // true
 */
export function parseExpectedCodes(spec: string | null | undefined): ExpectedCodes {
  const ranges = (spec ?? "").split(",").map(parseToken).filter((r): r is CodeRange => r !== null);
  if (ranges.length === 0) return { text: DEFAULT_TEXT, matches: (s) => s >= 200 && s <= 299 };
  const text = spec!.split(",").map((t) => t.trim()).filter((t) => parseToken(t) !== null).join(",");
  return { text, matches: (s) => ranges.some((r) => s >= r.from && s <= r.to) };
}

/** Redirect statuses an exchange follows when it follows redirects: never seen as the final answer then. */
export const FOLLOWED_REDIRECTS = [301, 302, 303, 307, 308] as const;

/** The followed-redirect codes `spec` expects explicitly (an expected 302 can only be met without following). */
export function expectedRedirects(spec: string | null | undefined): number[] {
  if (!spec) return [];
  const codes = parseExpectedCodes(spec);
  return FOLLOWED_REDIRECTS.filter((c) => codes.matches(c));
}
