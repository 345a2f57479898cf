/** Cookie reading and writing for the dashboard session, the pre-session CSRF token and status page access. */
export const SESSION_COOKIE = "vigil_session";
export const CSRF_COOKIE = "vigil_csrf";
export const PAGE_ACCESS_COOKIE = "vigil_page_access";

export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

export interface CookieOptions {
  path?: string;
  maxAgeSec?: number;
  secure: boolean;
  sameSite?: "Lax" | "Strict";
}

/**
 * Always HttpOnly (no script reads them) and SameSite (Lax: a link from elsewhere arrives signed in,
 * a cross-site POST does not). Secure follows the scheme: see `isSecureRequest`.
 */
export function setCookie(name: string, value: string, o: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path ?? "/"}`, "HttpOnly", `SameSite=${o.sameSite ?? "Lax"}`];
  if (o.maxAgeSec !== undefined) parts.push(`Max-Age=${o.maxAgeSec}`);
  if (o.secure) parts.push("Secure");
  return parts.join("; ");
}

export function clearCookie(name: string, o: { path?: string; secure: boolean }): string {
  return setCookie(name, "", { ...o, maxAgeSec: 0 });
}

/**
 * Secure cookies only when the instance is reached over https (its base URL, or this request).
 * Browsers treat http://localhost as secure, but a homelab served over plain http on the LAN would
 * never get a Secure cookie back, and nobody could sign in; so Secure follows the scheme.
 */
export function isSecureRequest(request: Request, baseUrl: string, forwardedProtoTrusted: boolean): boolean {
  if (baseUrl.startsWith("https:")) return true;
  if (new URL(request.url).protocol === "https:") return true;
  return forwardedProtoTrusted && request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
}
