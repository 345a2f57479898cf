import { gzipSync } from "bun";
import { createHash } from "node:crypto";

/**
 * Every HTML response carries security headers. Two framing policies:
 * - "dashboard": never framed (frame-ancestors 'none', X-Frame-Options DENY): it has forms that act.
 * - "embeddable": public status pages, badges and JSON: read-only, no forms, nothing a click can
 *   trigger, so other sites may frame them (a status page inside an intranet wiki is common).
 * Private and token-protected status pages use "dashboard": their visitors' cookies are involved.
 * No inline script anywhere: scripts and styles come from /assets/ ('self').
 */
export type FramePolicy = "dashboard" | "embeddable";

const CSP_BASE = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'";

export function securityHeaders(policy: FramePolicy): Record<string, string> {
  const h: Record<string, string> = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "content-security-policy": `${CSP_BASE}; frame-ancestors ${policy === "dashboard" ? "'none'" : "*"}`,
  };
  if (policy === "dashboard") h["x-frame-options"] = "DENY";
  return h;
}

export type CacheMode = "no-store" | "public";

export interface SendOptions {
  status?: number;
  policy?: FramePolicy;
  /** "public": Cache-Control public, max-age=30 with an ETag; otherwise private, no-store */
  cache?: CacheMode;
  contentType?: string;
  headers?: Record<string, string>;
}

/** Bodies above this are gzipped when the client accepts it (every browser does). */
const GZIP_OVER = 1024;

/**
 * A text response with security, cache and compression handled. Public responses get a weak ETag of
 * the uncompressed body and answer If-None-Match with 304.
 */
export function send(request: Request, body: string, o: SendOptions = {}): Response {
  const headers: Record<string, string> = {
    "content-type": o.contentType ?? "text/html; charset=utf-8",
    ...securityHeaders(o.policy ?? "dashboard"),
    vary: "Accept-Encoding, Cookie",
    ...o.headers,
  };
  const status = o.status ?? 200;
  if (o.cache === "public" && status === 200) {
    const etag = `W/"${createHash("sha1").update(body).digest("base64url")}"`;
    headers["cache-control"] = "public, max-age=30";
    headers.etag = etag;
    headers.vary = "Accept-Encoding";
    const inm = request.headers.get("if-none-match");
    if (inm && inm.split(",").some((t) => t.trim() === etag)) return new Response(null, { status: 304, headers });
  } else {
    headers["cache-control"] = "private, no-store";
  }
  if (request.method === "HEAD") return new Response(null, { status, headers });
  if (body.length > GZIP_OVER && /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
    headers["content-encoding"] = "gzip";
    return new Response(gzipSync(Buffer.from(body)), { status, headers });
  }
  return new Response(body, { status, headers });
}

/** 303 See Other: after a form POST the browser GETs the target (no resubmission on reload). */
export function redirect(location: string, headers: Record<string, string> = {}, status = 303): Response {
  return new Response(null, { status, headers: { location, "cache-control": "no-store", ...securityHeaders("dashboard"), ...headers } });
}
