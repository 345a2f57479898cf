/**
 * Request building and result rules shared by the http and synthetic probes.
 */
import type { ProbeMonitor } from "../domain/monitor.ts";
import { certExpiryVerdict, latencyReason, type WatchedCertificate } from "../domain/cert-expiry.ts";
import { secretOrigins } from "../domain/secret-origins.ts";
import { authHeaders } from "./request-auth.ts";
import { ProbeFailure } from "../domain/check-failure.ts";

/** The monitor's URL with `port` applied (the port field overrides the URL's own port). */
export function targetUrl(target: string | null, port: number | null): URL {
  let url: URL;
  try {
    url = new URL(target ?? "");
  } catch {
    throw new ProbeFailure("http_error", `target ${JSON.stringify(target)} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ProbeFailure("http_error", `target must be http(s), got ${url.protocol}`);
  if (port !== null && port !== undefined) url.port = String(port);
  return url;
}

/**
 * Monitor headers, then auth (so a custom header cannot silently replace the configured auth). The
 * auth goes only to the origins the monitor's secrets are bound to (README, Security), so a step
 * whose URL a variable points elsewhere is sent without it.
 */
export function requestHeaders(m: ProbeMonitor, url: URL, extra: Record<string, string> = {}, body: string | null = null): Record<string, string> {
  const auth = secretOrigins(m).has(url.origin) ? authHeaders(m) : {};
  const headers: Record<string, string> = { ...(m.api_headers_json ?? {}), ...extra, ...auth };
  const hasType = Object.keys(headers).some((h) => h.toLowerCase() === "content-type");
  if (body !== null && !hasType) headers["content-type"] = looksLikeJson(body) ? "application/json" : "text/plain; charset=utf-8";
  return headers;
}

function looksLikeJson(body: string): boolean {
  try {
    JSON.parse(body);
    return /^\s*[[{]/.test(body);
  } catch {
    return false;
  }
}

/** A body only goes with methods that carry one; GET/HEAD bodies confuse many servers. */
export function bodyFor(method: string, body: string | null | undefined): string | null {
  return body !== null && body !== undefined && body !== "" && method !== "GET" && method !== "HEAD" ? body : null;
}

/**
 * Degraded reasons shared by http, synthetic, websocket and grpc: slow response, the chain's
 * certificate that expires first close to expiry.
 */
export function degradedReasons(m: ProbeMonitor, latencyMs: number, cert: WatchedCertificate | null, now: number): string[] {
  const reasons: string[] = [];
  const slow = latencyReason(latencyMs, m.api_max_latency_ms);
  if (slow) reasons.push(slow);
  if (cert !== null) {
    const v = certExpiryVerdict(cert.notAfter, now, m.ssl_expiry_warn_days, cert.name);
    // "expired" only reaches here with tls_verify off; the check passed, but say so
    if (v.kind !== "ok") reasons.push(v.reason);
  }
  return reasons;
}
