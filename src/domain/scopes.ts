/** API token scopes (docs/api-rules.md "Endpoints and scopes"). */
export const SCOPES = [
  "monitors:read",
  "monitors:write",
  "checks:read",
  "incidents:read",
  "status_pages:read",
  "status_pages:write",
  // extension: read /metrics (Prometheus) without making it public
  "metrics:read",
] as const;
export type Scope = (typeof SCOPES)[number];

export const PLANS = ["free", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

/** Parses the CLI's `--scopes` value: a comma-separated list, or `all`. Returns the bad names too. */
export function parseScopes(text: string): { scopes: Scope[]; unknown: string[] } {
  const parts = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (parts.length === 1 && parts[0] === "all") return { scopes: [...SCOPES], unknown: [] };
  const unknown = parts.filter((p) => !(SCOPES as readonly string[]).includes(p));
  const scopes = [...new Set(parts.filter((p): p is Scope => (SCOPES as readonly string[]).includes(p)))];
  return { scopes, unknown };
}
