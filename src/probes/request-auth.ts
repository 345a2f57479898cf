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

/**
 * The forms a secret takes in a response: as it is, percent-encoded (a secret put into a URL) and
 * JSON-escaped (a secret quoted in a JSON body or an assertion's actual value), with `/` escaped
 * too as some encoders do (PHP's json_encode by default).
 */
function secretForms(s: string): string[] {
  const json = JSON.stringify(s).slice(1, -1);
  return [...new Set([s, encodeURIComponent(s), json, json.replaceAll("/", "\\/")])];
}

export function maskText(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join(MASK);
  for (const s of secrets) for (const enc of secretForms(s).slice(1)) out = out.split(enc).join(MASK);
  return out;
}

/**
 * A response body as a check judges it (docs/monitors.md "Judged with the secrets masked"): every
 * secret masked, so an assertion cannot tell one secret from another, and when the body was cut
 * short (`cut`), also a start of a secret it ends with: a read that stopped in the middle of an
 * echoed token must not let `^Bearer Zq7` tell its first characters.
 */
export function maskBody(text: string, secrets: string[], cut: boolean): string {
  const out = maskText(text, secrets);
  if (!cut) return out;
  let keep = out.length;
  for (const form of secrets.flatMap(secretForms)) {
    for (let k = Math.min(form.length - 1, keep); k > 0; k--) {
      if (out.startsWith(form.slice(0, k), keep - k)) {
        keep -= k;
        break;
      }
    }
  }
  return keep === out.length ? out : out.slice(0, keep) + MASK;
}

/**
 * A parsed JSON body with the secrets masked in every string, keys included: an escape the text's
 * masking did not know (`\u0041` for `A`) is decoded by parsing, and must not bring a secret back.
 */
export function maskJson(value: unknown, secrets: string[]): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === "string") return maskText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => maskJson(v, secrets));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [maskText(k, secrets), maskJson(v, secrets)]));
  }
  return value;
}

export function maskHeaders(headers: Record<string, string>, sensitiveNames: string[], secrets: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const lower = k.toLowerCase();
    out[k] = ALWAYS_SENSITIVE.includes(lower) || sensitiveNames.includes(lower) ? MASK : maskText(v, secrets);
  }
  return out;
}
