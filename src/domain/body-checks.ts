/**
 * The checks that judge an answer's body, which the answer to a HEAD request never has: on a HEAD
 * monitor they could never pass, so a write that sets one is refused (docs/monitors.md, "HTTP
 * answers") and an importer drops it with a note.
 */

/** Monitor attributes that look into the body. */
export const BODY_CHECKS = ["keyword", "api_expected_body_contains", "api_json_assertions_json"] as const;
export type BodyCheck = (typeof BODY_CHECKS)[number];

const isSet = (v: unknown) => v !== null && v !== undefined && v !== "" && !(Array.isArray(v) && v.length === 0);

/** The body checks `attrs` sets while its method is HEAD; empty for any other method. */
export function bodyChecksOnHead(attrs: Record<string, unknown>): BodyCheck[] {
  if (String(attrs.method ?? "GET").toUpperCase() !== "HEAD") return [];
  return BODY_CHECKS.filter((a) => isSet(attrs[a]));
}

/** Why `check` is refused on a HEAD monitor, in the words of a 422. */
export function bodyCheckOnHeadProblem(check: string): string {
  return `can never be met on a HEAD request: the answer to HEAD has no body; use GET, or remove ${check}`;
}

/** The same rule for a synthetic step: its assertions and body extractions (json, regex). */
export function stepBodyUseOnHead(step: { method?: unknown; assertions?: unknown; extract?: unknown }): string[] {
  if (step.method !== "HEAD") return [];
  const uses: string[] = [];
  if (isSet(step.assertions)) uses.push("assertions");
  if (Array.isArray(step.extract) && step.extract.some((r) => r !== null && typeof r === "object" && (r as { from?: unknown }).from !== "header")) uses.push("extractions from the body");
  return uses;
}
