import type { SessionRecord } from "../auth/sessions.ts";
import { anyUserExists } from "../auth/users.ts";
import { ApiError } from "../http/errors.ts";
import { retryAfterSeconds } from "../lib/fixed-window.ts";
import { randomToken } from "../lib/tokens.ts";
import type { Actor } from "../services/actor.ts";
import { html } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { authPage, errorPage, type Section } from "./views/layout.ts";
import { readForm, type WebContext } from "./web-context.ts";

/** What a signed-in dashboard handler gets. */
export interface Signed {
  request: Request;
  url: URL;
  params: Record<string, string>;
  socketIp: string | null;
  session: SessionRecord;
  /**
   * Whom the services act for: the session's account. Plans and scopes gate API tokens; a signed-in
   * user acts on their whole account, whatever its plan.
   */
  actor: Actor;
  /** the POSTed form (already CSRF-checked); empty for GET */
  form: URLSearchParams;
}

export type RouteCtx = {
  request: Request;
  params: Record<string, string>;
  server: { requestIP(r: Request): { address: string } | null; timeout?(r: Request, seconds: number): void } | null;
};
export const socketIpOf = (c: RouteCtx) => c.server?.requestIP(c.request)?.address ?? null;

/**
 * Characters a path to return to never needs: controls (C0, DEL, C1), spaces of every kind, the
 * bidirectional controls that make a link read as another, and the backslash browsers take for "/".
 */
const NOT_IN_NEXT = /[\u0000-\u0020\u007f-\u00a0\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff\\]/;
const NEXT_BASE = "http://next.invalid";

/**
 * A same-site path to return to after sign-in, as the Location header carries it; anything else
 * (another host, //evil, a scheme, a control or bidi character) becomes "/". The decision is taken
 * on the path the URL parser makes of `next`, the one a browser would follow: dot segments and
 * their encoded forms ("/..//evil", "/%2e%2e//evil", "/a/../..//evil") resolve to "//evil", which
 * is another host, so they are refused too. The normalised path is what is sent, never `next` as
 * given; percent-encoding is kept ("/%C3%A9" stays "/%C3%A9") and a raw "/é" is sent as "/%C3%A9":
 * a header holds ASCII only.
 */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || NOT_IN_NEXT.test(next)) return "/";
  let url: URL;
  try {
    url = new URL(next, NEXT_BASE);
  } catch {
    return "/";
  }
  if (url.origin !== NEXT_BASE || !url.pathname.startsWith("/") || url.pathname.startsWith("//") || url.pathname.startsWith("/\\")) return "/";
  return url.pathname + url.search + url.hash;
}

/**
 * Wraps a dashboard handler: no session → the sign-in page (or the first-run setup while no user
 * exists); POST → the form must be same-origin with the session's CSRF token, or it is refused
 * with 403 before the handler runs.
 */
export function signedIn(web: WebContext, section: Section, handler: (s: Signed) => Promise<Response>) {
  return async (c: RouteCtx): Promise<Response> => {
    const { request } = c;
    const url = new URL(request.url);
    const session = await web.session(request);
    if (!session) {
      if (!(await anyUserExists(web.app.db))) return redirect("/setup");
      if (request.method !== "GET") return send(request, authPage("Signed out", html`<h1>Signed out</h1><p>Your session has ended. <a href="/login">Sign in</a> again.</p>`), { status: 401 });
      return redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`);
    }
    await web.noteDashboardHosts(request, socketIpOf(c));
    let form = new URLSearchParams();
    if (request.method === "POST") {
      const parsed = await readForm(request);
      if (!parsed) return send(request, errorPage(session, section, "Bad request", "The form could not be read."), { status: 400 });
      if (!web.csrfOk(request, session, parsed)) {
        web.log.warn("form refused: CSRF check failed", { path: url.pathname, user_id: session.user_id });
        return send(request, errorPage(session, section, "Request refused", "This form did not come from this dashboard, or it has expired. Go back, reload the page and try again."), { status: 403 });
      }
      form = parsed;
      const refused = overWriteLimit(web, session, section, request, url);
      if (refused) return refused;
    }
    try {
      const actor = { accountId: session.account_id, requestId: `web-${randomToken(9)}` };
      return await handler({ request, url, params: c.params ?? {}, socketIp: socketIpOf(c), session, actor, form });
    } catch (err) {
      // a service's 404 means "not yours or not there"
      if (err instanceof ApiError && err.status === 404) return send(request, errorPage(session, section, "Not found", "This does not exist, or belongs to another account."), { status: 404 });
      web.log.error("dashboard request failed", { path: url.pathname, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      return send(request, errorPage(session, section, "Something went wrong", "The request failed; the server log has the details."), { status: 500 });
    }
  };
}

/**
 * Form submissions are limited per user and account like the API's requests per account (README
 * "Security", Limits): a script driving the dashboard cannot write faster than a token could.
 */
function overWriteLimit(web: WebContext, session: SessionRecord, section: Section, request: Request, url: URL): Response | null {
  const now = web.app.clock.now();
  const limit = web.app.config.webWriteLimit;
  const verdict = web.formWrites.hit(`${session.user_id}:${session.account_id}`, limit, now);
  if (verdict.allowed) return null;
  const wait = retryAfterSeconds(verdict, now);
  web.log.warn("form refused: over the dashboard's write limit", { path: url.pathname, user_id: session.user_id, account_id: session.account_id, limit });
  const message = `More than ${limit} changes a minute were sent from this dashboard by you. Nothing was changed; wait ${wait} s, then send the form again.`;
  return send(request, errorPage(session, section, "Too many changes", message), { status: 429, headers: { "retry-after": String(wait) } });
}

export function notFoundPage(s: Signed, section: Section, what: string): Response {
  return send(s.request, errorPage(s.session, section, "Not found", `This ${what} does not exist, or belongs to another account.`), { status: 404 });
}

/**
 * Elysia hook that leaves POST bodies unread: web handlers read the form themselves (readForm),
 * with a size cap and without Elysia's own parsing. Local to each web plugin.
 */
export const leaveBodyUnread = () => ({ unread: true });
