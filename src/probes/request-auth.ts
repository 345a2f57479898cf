/**
 * Monitor-level authentication (api_auth_type) and the masking that keeps its secrets, and a
 * database monitor's db_password, out of every error message and trace (docs/monitors.md
 * "Authentication secrets", "Database passwords").
 */
import type { ProbeMonitor } from "../domain/monitor.ts";

export const MASK = "***";

/** Header names whose values are always masked in traces, whatever they hold. */
const ALWAYS_SENSITIVE = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"];

export function authHeaders(m: ProbeMonitor): Record<string, string> {
  switch (m.api_auth_type) {
    case "bearer":
      return m.api_auth_bearer_token ? { Authorization: `Bearer ${m.api_auth_bearer_token}` } : {};
    case "basic":
      return m.api_auth_basic_user !== null || m.api_auth_basic_pass !== null
        ? { Authorization: `Basic ${Buffer.from(`${m.api_auth_basic_user ?? ""}:${m.api_auth_basic_pass ?? ""}`).toString("base64")}` }
        : {};
    case "api_key":
      return m.api_auth_api_key_header && m.api_auth_api_key_value ? { [m.api_auth_api_key_header]: m.api_auth_api_key_value } : {};
    default:
      return {};
  }
}

/**
 * Every string that must never appear in output (the monitor's secrets: its HTTP credentials and the
 * database password), longest first so overlapping ones mask fully.
 */
export function secretsOf(m: ProbeMonitor, extra: string[] = []): string[] {
  const s = [m.api_auth_bearer_token, m.api_auth_basic_pass, m.api_auth_api_key_value, m.db_password, ...extra];
  const basic = authHeaders(m).Authorization;
  if (basic) s.push(basic.replace(/^(Bearer|Basic) /, ""));
  return [...new Set(s.filter((x): x is string => typeof x === "string" && x.length > 0))].sort((a, b) => b.length - a.length);
}

/** Header names (lower case) that carry credentials for this monitor. */
export function credentialHeaderNames(m: ProbeMonitor): string[] {
  const names = ["authorization", "proxy-authorization", "cookie"];
  if (m.api_auth_api_key_header) names.push(m.api_auth_api_key_header.toLowerCase());
  return names;
}

export function maskText(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join(MASK);
  // percent-encoded copies (a secret put into a URL) and JSON-escaped ones (a secret quoted in a
  // JSON body or an assertion's actual value) are masked as well
  for (const s of secrets) {
    for (const enc of [encodeURIComponent(s), JSON.stringify(s).slice(1, -1)]) if (enc !== s) out = out.split(enc).join(MASK);
  }
  return out;
}

export function maskHeaders(headers: Record<string, string>, sensitiveNames: string[], secrets: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const lower = k.toLowerCase();
    out[k] = ALWAYS_SENSITIVE.includes(lower) || sensitiveNames.includes(lower) ? MASK : maskText(v, secrets);
  }
  return out;
}
