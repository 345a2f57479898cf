import { Elysia } from "elysia";
import { toIso } from "../../lib/dates.ts";
import { GUESS_WINDOW_MS } from "../../auth/sign-in-limits.ts";
import { addressBlock } from "../../lib/address-block.ts";
import { FixedWindowLimiter, retryAfterSeconds } from "../../lib/fixed-window.ts";
import { hashToken, safeEqual } from "../../lib/tokens.ts";
import { BAR_DAYS, loadBadgeData, loadStatusData, publicPageByHost, publicPageBySlug, type PublicStatusPage } from "../../services/public-status.ts";
import { loadFeed } from "../../services/status-feed.ts";
import { confirmSubscription, endSubscription, requestSubscription, subscriptionsNeedBaseUrl, subscriptionsOffered } from "../../services/status-subscriptions.ts";
import { PAGE_ACCESS_COOKIE, readCookie, setCookie } from "../cookies.ts";
import { html } from "../html.ts";
import { send, redirect, type FramePolicy } from "../respond.ts";
import { leaveBodyUnread } from "../routing.ts";
import type { WebContext } from "../web-context.ts";
import { atomFeed } from "./atom-feed.ts";
import { badgeSvg, monitorBadgeSvg, type BadgeKind } from "./badge.ts";
import { statusJson } from "./status-json.ts";
import { renderStatusPage, statusMessagePage } from "./status-view.ts";

/**
 * Public status pages at /s/<slug> (and at / on a page's custom domain), with /badge.svg and .json
 * beside them, and each shown monitor's badges at /badge/<monitor id>/{status,uptime,response,cert}.svg
 * (README "Badges"). Access rules, in order:
 *   unknown or is_enabled false → 404;
 *   is_public false → only signed-in dashboard users of the page's account (others: 401, or 404 when
 *     signed in to another account);
 *   is_token_protected → the access token, once as ?token= (then an HttpOnly cookie scoped to the
 *     page's path), else 401. The page's own account's users need no token. Wrong ?token= guesses
 *     are limited per client address, an IPv6 one by its /64 (--guess-limit; 429 with Retry-After,
 *     whatever that client's next guess is); never per page, so guesses from elsewhere never
 *     refuse the right token.
 * Public, unprotected answers are cacheable (public, max-age=30, ETag) and may be framed; the others
 * are private, no-store and never framed. The Atom feed exists for public, unprotected pages only: a
 * private or token-protected page answers 404 there, to its owners too (a feed reader holds no
 * session, and a token in a feed URL would leak wherever the URL goes).
 */
type Kind = "html" | "json" | "badge" | "feed";

interface Where {
  /** path prefix of the page: /s/<slug>, or "" on a custom domain */
  prefix: string;
  /** a badge of one of the page's monitors rather than of the page */
  monitorBadge?: { monitorId: number; kind: BadgeKind };
}

/** The uptime badge's period: ?days=1..90, 30 by default (the page's bar holds 90 days). */
const BADGE_DAYS_DEFAULT = 30;

function badgeDays(url: URL): number {
  const n = Number(url.searchParams.get("days") ?? BADGE_DAYS_DEFAULT);
  return Number.isInteger(n) ? Math.min(BAR_DAYS, Math.max(1, n)) : BADGE_DAYS_DEFAULT;
}

/** "/badge/<monitor id>/<kind>.svg" → where, or null when it is not one. */
function monitorBadgePath(monitor: string, file: string): Where["monitorBadge"] | null {
  const m = /^(status|uptime|response|cert)\.svg$/.exec(file);
  if (!m || !/^[1-9]\d{0,14}$/.test(monitor)) return null;
  return { monitorId: Number(monitor), kind: m[1] as BadgeKind };
}

const ACCESS_COOKIE_DAYS = 30;

/** Subscription requests per client address in one window (README "Status pages"). */
const SUBSCRIBE_WINDOW_MS = 10 * 60_000;
const SUBSCRIBES_PER_IP = 5;
const SUBSCRIBE_ANSWER = "Thank you. If that address can receive mail, a link to confirm is on its way; it works for 48 hours.";

function accessCookieValue(page: PublicStatusPage): string {
  return hashToken(`status-page-access:${page.id}:${page.accessToken ?? ""}`);
}

export class StatusPages {
  /** wrong ?token= guesses per client address (its /64 for IPv6), whatever the page */
  private readonly guessesByAddress = new FixedWindowLimiter<string>(GUESS_WINDOW_MS);
  private readonly subscribesByIp = new FixedWindowLimiter<string>(SUBSCRIBE_WINDOW_MS);

  constructor(private readonly web: WebContext) {}

  private tooManyGuesses(request: Request, kind: Kind, page: PublicStatusPage, retryAfter: number): Response {
    const headers = { "retry-after": String(retryAfter) };
    const msg = `too many wrong access tokens; try again in ${retryAfter} s`;
    if (kind === "json") return send(request, JSON.stringify({ error: { code: "rate_limited", message: msg } }), { status: 429, contentType: "application/json", headers });
    if (kind === "badge") return send(request, badgeSvg("status", "unknown"), { status: 429, contentType: "image/svg+xml", headers });
    const minutes = Math.ceil(retryAfter / 60);
    return send(request, statusMessagePage(page.theme, "Too many attempts", html`<p>Too many wrong access tokens were tried for this page. Wait ${minutes} minute${minutes > 1 ? "s" : ""} and try again.</p>`), { status: 429, headers });
  }

  private notFound(request: Request, kind: Kind): Response {
    if (kind === "json") return send(request, JSON.stringify({ error: { code: "not_found", message: "status page not found" } }), { status: 404, contentType: "application/json", policy: "embeddable" });
    if (kind === "badge") return send(request, badgeSvg("status", "unknown"), { status: 404, contentType: "image/svg+xml", policy: "embeddable" });
    if (kind === "feed") return send(request, statusMessagePage("light", "Feed not found", html`<p>There is no public feed here.</p>`), { status: 404, policy: "embeddable" });
    return send(request, statusMessagePage("light", "Page not found", html`<p>There is no status page here.</p>`), { status: 404, policy: "embeddable" });
  }

  private refused(request: Request, kind: Kind, page: PublicStatusPage, why: "private" | "token" | "bad-token", where: Where): Response {
    const msg = why === "private" ? "this status page is private; sign in to the dashboard to see it" : "this status page needs its access token";
    if (kind === "json") return send(request, JSON.stringify({ error: { code: "unauthorized", message: msg } }), { status: 401, contentType: "application/json" });
    if (kind === "badge") return send(request, badgeSvg("status", "unknown"), { status: 401, contentType: "image/svg+xml" });
    const self = where.prefix || "/";
    const body =
      why === "private"
        ? html`<p>This status page is private.</p><p><a href="/login?next=${encodeURIComponent(self)}">Sign in</a> with an account that owns it.</p>`
        : html`${why === "bad-token" ? html`<p class="overall down" role="alert">That access token is not valid for this page.</p>` : ""}
<p>This status page is protected. Enter its access token:</p>
<form method="get" action="${self}"><label for="token">Access token</label><br><input id="token" name="token" type="password" autocomplete="off" required> <button type="submit">View</button></form>`;
    return send(request, statusMessagePage(page.theme, why === "private" ? "Private status page" : "Access token required", body), { status: 401 });
  }

  /** Resolves the page, applies the access rules, then answers with `kind`. */
  async serve(request: Request, socketIp: string | null, page: PublicStatusPage | undefined, kind: Kind, where: Where): Promise<Response> {
    if (!page || !page.isEnabled) return this.notFound(request, kind);
    if (kind === "feed" && !offersFeed(page)) return this.notFound(request, kind);
    const url = new URL(request.url);
    const session = !page.isPublic || page.isTokenProtected ? await this.web.session(request) : undefined;
    const owner = session !== undefined && session.account_id === page.accountId;
    if (!page.isPublic && !owner) return session ? this.notFound(request, kind) : this.refused(request, kind, page, "private", where);
    if (page.isTokenProtected && !owner) {
      const given = url.searchParams.get("token");
      const token = page.accessToken;
      if (given !== null) {
        const ip = this.web.clientIp(request, socketIp);
        const block = addressBlock(ip);
        const now = this.web.app.clock.now();
        const limit = this.web.app.config.guessLimit;
        // checked before the comparison: a client over its own limit is refused a right guess too
        const limited = this.guessesByAddress.peek(block, limit, now);
        if (!limited.allowed) return this.tooManyGuesses(request, kind, page, retryAfterSeconds(limited, now));
        if (!token || !safeEqual(given, token)) {
          this.guessesByAddress.hit(block, limit, now);
          this.web.log.info("wrong status page access token", { page_id: page.id, ip });
          return this.refused(request, kind, page, "bad-token", where);
        }
        if (kind === "html") {
          // the token leaves the address bar (and history, and Referer) at once
          const cookie = setCookie(PAGE_ACCESS_COOKIE, accessCookieValue(page), {
            path: where.prefix || "/",
            maxAgeSec: ACCESS_COOKIE_DAYS * 86_400,
            secure: this.web.secure(request, socketIp),
          });
          return redirect(where.prefix || "/", { "set-cookie": cookie });
        }
      } else {
        const cookie = readCookie(request, PAGE_ACCESS_COOKIE);
        if (!cookie || !token || !safeEqual(cookie, accessCookieValue(page))) return this.refused(request, kind, page, "token", where);
      }
    }
    const open = page.isPublic && !page.isTokenProtected;
    const policy: FramePolicy = open ? "embeddable" : "dashboard";
    const cache = open ? "public" : "no-store";
    if (where.monitorBadge) {
      const { monitorId, kind: badge } = where.monitorBadge;
      const days = badgeDays(url);
      // only the monitors this page shows: a badge is no way to read any other
      const figures = await loadBadgeData(this.web.app, page, monitorId, days);
      if (!figures) return this.notFound(request, "badge");
      const label = url.searchParams.get("label")?.slice(0, 40) || undefined;
      return send(request, monitorBadgeSvg(badge, figures, days, label), { contentType: "image/svg+xml", policy, cache });
    }
    if (kind === "feed") {
      // --base-url, else links relative to the feed's own address: never the request's Host, as the
      // answer is cached for everyone (README "Links without --base-url")
      const { baseUrl, baseUrlFixed } = this.web.app.config;
      const pageUrl = `${baseUrlFixed ? baseUrl : ""}/s/${page.slug}`;
      const links = { page: pageUrl, self: `${pageUrl}/feed.atom`, host: new URL(baseUrl).hostname };
      return send(request, atomFeed(page, await loadFeed(this.web.app, page), links), { contentType: "application/atom+xml; charset=utf-8", policy, cache });
    }
    const data = await loadStatusData(this.web.app, page);
    if (kind === "json") {
      return send(request, JSON.stringify(statusJson(data, toIso)), { contentType: "application/json; charset=utf-8", policy, cache, headers: open ? { "access-control-allow-origin": "*" } : {} });
    }
    if (kind === "badge") {
      const label = (url.searchParams.get("label") ?? "status").slice(0, 40) || "status";
      return send(request, badgeSvg(label, data.overall), { contentType: "image/svg+xml", policy, cache });
    }
    const base = where.prefix;
    const feed = offersFeed(page) ? `${base}/feed.atom` : null;
    // the subscription form lives at /s/<slug> (a custom domain's page links there for it)
    const subscribe = subscriptionsOffered(this.web.app, page) ? `/s/${page.slug}/subscribe` : null;
    const notice = subscribe && url.searchParams.get("subscribe") === "sent" ? SUBSCRIBE_ANSWER : null;
    return send(request, renderStatusPage(data, { badge: `${base}/badge.svg`, json: base ? `${base}.json` : "/status.json", feed, subscribe, notice }), { policy, cache: notice ? "no-store" : cache });
  }

  /**
   * The subscription form's answer, the same for a new, a pending and a confirmed address (the form
   * says nothing of who subscribed); addresses asked per client IP are limited.
   */
  async subscribe(request: Request, socketIp: string | null, page: PublicStatusPage | undefined): Promise<Response> {
    if (page && subscriptionsNeedBaseUrl(this.web.app, page)) {
      const body = html`<p>Updates by email cannot be sent from here yet: the links in them have to lead back to this site, and the operator of this Vigil has not set its public address (<code>--base-url</code>). Nothing was sent.</p><p><a href="/s/${page.slug}">Back to ${page.name}</a></p>`;
      return send(request, statusMessagePage(page.theme, "Email updates not available", body), { status: 503 });
    }
    if (!page || !subscriptionsOffered(this.web.app, page)) return this.notFound(request, "html");
    const ip = this.web.clientIp(request, socketIp);
    const now = this.web.app.clock.now();
    const verdict = this.subscribesByIp.hit(addressBlock(ip), SUBSCRIBES_PER_IP, now);
    if (!verdict.allowed) {
      const retry = retryAfterSeconds(verdict, now);
      return send(request, statusMessagePage(page.theme, "Too many requests", html`<p>Please try again in ${Math.ceil(retry / 60)} min.</p>`), { status: 429, headers: { "retry-after": String(retry) } });
    }
    const form = new URLSearchParams((await request.text()).slice(0, 4096));
    const ok = await requestSubscription(this.web.app, page, form.get("email") ?? "");
    if (!ok) return send(request, statusMessagePage(page.theme, "Not an email address", html`<p>Please give an address such as name@example.com.</p><p><a href="/s/${page.slug}#subscribe">Back to ${page.name}</a></p>`), { status: 422 });
    return redirect(`/s/${page.slug}?subscribe=sent#subscribe`);
  }

  async confirm(request: Request, page: PublicStatusPage | undefined): Promise<Response> {
    if (!page || !subscriptionsOffered(this.web.app, page)) return this.notFound(request, "html");
    const token = new URL(request.url).searchParams.get("token") ?? "";
    const ok = token !== "" && (await confirmSubscription(this.web.app, page, token));
    const back = html`<p><a href="/s/${page.slug}">${page.name}</a></p>`;
    return ok
      ? send(request, statusMessagePage(page.theme, "Subscribed", html`<p>You will get the updates of ${page.name} by email. Every mail has a link to unsubscribe.</p>${back}`))
      : send(request, statusMessagePage(page.theme, "Link expired", html`<p>This confirmation link has expired or is not known. Subscribe again to get a new one.</p>${back}`), { status: 404 });
  }

  /**
   * GET shows a button (a link opened by a mail scanner unsubscribes nobody); POST, the button's or
   * a mail client's one-click request (RFC 8058), ends the subscription. Same answer either way.
   */
  async unsubscribe(request: Request, page: PublicStatusPage | undefined): Promise<Response> {
    if (!page) return this.notFound(request, "html");
    const token = new URL(request.url).searchParams.get("token") ?? "";
    if (request.method !== "POST") {
      return send(request, statusMessagePage(page.theme, "Unsubscribe", html`<p>Stop getting the updates of ${page.name} by email?</p><form method="post" action="/s/${page.slug}/unsubscribe?token=${token}"><button type="submit">Unsubscribe</button></form>`));
    }
    if (token !== "") await endSubscription(this.web.app, page, token);
    return send(request, statusMessagePage(page.theme, "Unsubscribed", html`<p>No more mail from ${page.name} will come to this address.</p>`));
  }

  bySlug(slug: string): Promise<PublicStatusPage | undefined> {
    return publicPageBySlug(this.web.app, slug);
  }

  /** The page whose custom domain is this request's Host. */
  byHost(request: Request): Promise<PublicStatusPage | undefined> {
    return publicPageByHost(this.web.app, (request.headers.get("host") ?? "").toLowerCase().replace(/:\d+$/, "").replace(/\.$/, ""));
  }
}

/** Only public pages without an access token have a feed (README "Groups, tags and status page updates"). */
const offersFeed = (page: PublicStatusPage) => page.isPublic && !page.isTokenProtected;

type RouteCtx = { request: Request; params: Record<string, string>; server: { requestIP(r: Request): { address: string } | null } | null };
const ip = (c: RouteCtx) => c.server?.requestIP(c.request)?.address ?? null;

export function statusPageRoutes(pages: StatusPages) {
  return new Elysia({ name: "web-status-pages" })
    .onParse(leaveBodyUnread)
    .get("/s/:slug", async (c: RouteCtx) => {
      const raw = c.params.slug!;
      const json = raw.endsWith(".json");
      const slug = json ? raw.slice(0, -5) : raw;
      return pages.serve(c.request, ip(c), await pages.bySlug(slug), json ? "json" : "html", { prefix: `/s/${slug}` });
    })
    .post("/s/:slug/subscribe", async (c: RouteCtx) => pages.subscribe(c.request, ip(c), await pages.bySlug(c.params.slug!)))
    .get("/s/:slug/confirm", async (c: RouteCtx) => pages.confirm(c.request, await pages.bySlug(c.params.slug!)))
    .get("/s/:slug/unsubscribe", async (c: RouteCtx) => pages.unsubscribe(c.request, await pages.bySlug(c.params.slug!)))
    .post("/s/:slug/unsubscribe", async (c: RouteCtx) => pages.unsubscribe(c.request, await pages.bySlug(c.params.slug!)))
    .get("/s/:slug/badge.svg", async (c: RouteCtx) => pages.serve(c.request, ip(c), await pages.bySlug(c.params.slug!), "badge", { prefix: `/s/${c.params.slug}` }))
    .get("/s/:slug/badge/:monitor/:file", async (c: RouteCtx) => {
      const badge = monitorBadgePath(c.params.monitor!, c.params.file!);
      const page = badge ? await pages.bySlug(c.params.slug!) : undefined;
      return pages.serve(c.request, ip(c), page, "badge", { prefix: `/s/${c.params.slug}`, monitorBadge: badge ?? undefined });
    })
    .get("/badge/:monitor/:file", async (c: RouteCtx) => {
      const badge = monitorBadgePath(c.params.monitor!, c.params.file!);
      return pages.serve(c.request, ip(c), badge ? await pages.byHost(c.request) : undefined, "badge", { prefix: "", monitorBadge: badge ?? undefined });
    })
    .get("/s/:slug/feed.atom", async (c: RouteCtx) => pages.serve(c.request, ip(c), await pages.bySlug(c.params.slug!), "feed", { prefix: `/s/${c.params.slug}` }))
    .get("/feed.atom", async (c: RouteCtx) => pages.serve(c.request, ip(c), await pages.byHost(c.request), "feed", { prefix: "" }))
    .get("/badge.svg", async (c: RouteCtx) => pages.serve(c.request, ip(c), await pages.byHost(c.request), "badge", { prefix: "" }))
    .get("/status.json", async (c: RouteCtx) => pages.serve(c.request, ip(c), await pages.byHost(c.request), "json", { prefix: "" }));
}
