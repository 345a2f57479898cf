import { csrfMatches, resumeSession, type SessionRecord } from "../auth/sessions.ts";
import { SignInLimits } from "../auth/sign-in-limits.ts";
import type { AppContext } from "../context.ts";
import { clientAddress, normalizeIp, trustedSet } from "../http/client-address.ts";
import type { TrustedProxies } from "../lib/trusted-proxies.ts";
import { FixedWindowLimiter } from "../lib/fixed-window.ts";
import { readLimited } from "../http/read-limited.ts";
import { safeEqual } from "../lib/tokens.ts";
import type { SaturationReport } from "../domain/saturation-report.ts";
import { noteDashboardHost } from "../services/custom-domains.ts";
import { CSRF_COOKIE, isSecureRequest, readCookie, SESSION_COOKIE } from "./cookies.ts";

/** A host name, IPv4 address or bracketed IPv6 address, with an optional port. */
const HOST_PORT = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;


export interface WebOptions {
  /** whether this instance's checks start on time (the scheduler's last verdict), for the banner */
  saturation?: () => SaturationReport;
}

/**
 * What every web route needs besides the AppContext: who is signed in, where the request came
 * from, whether it is https, and whether a form POST is same-origin with a matching CSRF token.
 */
export class WebContext {
  readonly signIns: SignInLimits;
  /** signed-in form submissions per user and account, one-minute windows (--web-write-limit) */
  readonly formWrites = new FixedWindowLimiter<string>(60_000);
  private readonly trusted: TrustedProxies;
  private readonly baseOrigin: string;
  /** host names already remembered as the dashboard's (README "Custom domains"); bounded */
  private readonly notedHosts = new Set<string>();

  constructor(readonly app: AppContext, private readonly opts: WebOptions = {}) {
    this.trusted = trustedSet(app.config.trustedProxies);
    this.signIns = new SignInLimits(app.config.guessLimit);
    this.baseOrigin = new URL(app.config.baseUrl).origin;
  }

  get log() {
    return this.app.log.child("web");
  }

  /** The scheduler's last saturation verdict when it says saturated, else null (no banner). */
  saturation(): SaturationReport | null {
    const r = this.opts.saturation?.();
    return r?.saturated ? r : null;
  }

  clientIp(request: Request, socketIp: string | null): string {
    return clientAddress(socketIp, request.headers.get("x-forwarded-for"), this.trusted) ?? "unknown";
  }

  secure(request: Request, socketIp: string | null): boolean {
    return isSecureRequest(request, this.app.config.baseUrl, this.fromTrustedProxy(socketIp));
  }

  private fromTrustedProxy(socketIp: string | null): boolean {
    const peer = normalizeIp(socketIp);
    return peer !== null && this.trusted.has(peer);
  }

  /**
   * The origin the browser used: its Host and the request's scheme, or a trusted proxy's
   * X-Forwarded-Host and X-Forwarded-Proto (their first value: the one the proxy nearest the
   * browser set). A Host that is not a host name or address with a port falls back to --base-url.
   */
  requestOrigin(request: Request, socketIp: string | null): string {
    const proxied = this.fromTrustedProxy(socketIp);
    const first = (name: string) => (proxied ? request.headers.get(name)?.split(",")[0]?.trim() || null : null);
    const host = (first("x-forwarded-host") ?? request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
    const proto = first("x-forwarded-proto")?.toLowerCase();
    const scheme = proto === "https" || proto === "http" ? proto : new URL(request.url).protocol.slice(0, -1);
    if (!HOST_PORT.test(host)) return this.app.config.baseUrl;
    return `${scheme}://${host}`;
  }

  /**
   * The host names this request reached the instance by: its Host and, from a trusted proxy,
   * X-Forwarded-Host; lower case, without port or trailing dot.
   */
  hostNames(request: Request, socketIp: string | null): string[] {
    const given = [request.headers.get("host") ?? new URL(request.url).host];
    if (this.fromTrustedProxy(socketIp)) given.push(request.headers.get("x-forwarded-host")?.split(",")[0]?.trim() ?? "");
    const names = given.map((h) => h.toLowerCase().replace(/\.(?=(:\d+)?$)/, "")).filter((h) => HOST_PORT.test(h)).map((h) => h.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1"));
    return [...new Set(names)];
  }

  /**
   * Remembers the names a signed-in user reached the dashboard by, so that no status page can claim
   * one of them as its custom domain (README "Custom domains"). A failure to write is logged, never
   * the user's problem.
   */
  async noteDashboardHosts(request: Request, socketIp: string | null): Promise<void> {
    for (const host of this.hostNames(request, socketIp)) {
      if (this.notedHosts.has(host)) continue;
      try {
        if (!(await noteDashboardHost(this.app, host))) continue;
      } catch (err) {
        this.log.warn("dashboard host not remembered", { host, error: String((err as Error).message ?? err) });
        continue;
      }
      if (this.notedHosts.size >= 1000) this.notedHosts.clear();
      this.notedHosts.add(host);
    }
  }

  /** Where links to this instance point: --base-url when given, else the address the browser used. */
  publicBase(request: Request, socketIp: string | null): string {
    return this.app.config.baseUrlFixed ? this.app.config.baseUrl : this.requestOrigin(request, socketIp);
  }

  /** Where ping URLs point: --heartbeat-url (or --base-url) when given, else the address the browser used. */
  heartbeatBase(request: Request, socketIp: string | null): string {
    return this.app.config.heartbeatUrlFixed ? this.app.config.heartbeatUrl : this.requestOrigin(request, socketIp);
  }

  async session(request: Request): Promise<SessionRecord | undefined> {
    const id = readCookie(request, SESSION_COOKIE);
    if (!id) return undefined;
    return resumeSession(this.app.db, id, this.app.clock.now());
  }

  /**
   * A state-changing request must come from our own pages: its Origin (or, when a browser sends
   * none, its Referer) must be this host or the configured base URL. No header at all is refused.
   */
  sameOrigin(request: Request): boolean {
    const origin = request.headers.get("origin");
    const referer = request.headers.get("referer");
    let source: string;
    try {
      if (origin && origin !== "null") source = new URL(origin).origin;
      else if (referer) source = new URL(referer).origin;
      else return false;
    } catch {
      return false;
    }
    if (source === this.baseOrigin) return true;
    const host = request.headers.get("host") ?? new URL(request.url).host;
    return source === `http://${host}` || source === `https://${host}`;
  }

  /** CSRF for signed-in forms: same origin and the session's token in `_csrf`. */
  csrfOk(request: Request, session: SessionRecord, form: URLSearchParams): boolean {
    return this.sameOrigin(request) && csrfMatches(session, form.get("_csrf"));
  }

  /** CSRF before a session exists (login, first-run setup): double-submit cookie plus origin. */
  preSessionCsrfOk(request: Request, form: URLSearchParams): boolean {
    const cookie = readCookie(request, CSRF_COOKIE);
    const field = form.get("_csrf");
    return this.sameOrigin(request) && !!cookie && !!field && safeEqual(cookie, field);
  }
}

/** Reads an urlencoded form body of at most `limit` bytes; null when it is not one or too large. */
export async function readForm(request: Request, limit = 256 * 1024): Promise<URLSearchParams | null> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return null;
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) return null;
  const bytes = await readLimited(request, limit);
  if (bytes === null) return null;
  return new URLSearchParams(new TextDecoder().decode(bytes));
}
