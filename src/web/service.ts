import { Elysia } from "elysia";
import { sweepExpiredSessions } from "../auth/sessions.ts";
import { sweepFlashes } from "../auth/session-flash.ts";
import type { AppContext } from "../context.ts";
import type { Service } from "../lib/service.ts";
import { assetResponse, faviconResponse } from "./assets.ts";
import { authRoutes } from "./auth-routes.ts";
import { channelRoutes } from "./channel-routes.ts";
import { groupRoutes } from "./group-routes.ts";
import { LiveStreams } from "./live-events.ts";
import { maintenanceRoutes } from "./maintenance-routes.ts";
import { monitorRoutes } from "./monitor-routes.ts";
import { socketIpOf, type RouteCtx } from "./routing.ts";
import { StatusPages, statusPageRoutes } from "./status/status-routes.ts";
import { statusPageEditorRoutes } from "./status-page-editor.ts";
import { statusPageUpdateEditorRoutes } from "./status-page-update-editor.ts";
import { tokenRoutes } from "./token-routes.ts";
import { WebContext, type WebOptions } from "./web-context.ts";
import { html } from "./html.ts";
import { send } from "./respond.ts";
import { authPage, errorPage } from "./views/layout.ts";

const SESSION_SWEEP_MS = 3_600_000;

/** The dashboard and the public status pages as one Elysia plugin. */
export function webPlugin(web: WebContext, live: LiveStreams) {
  const pages = new StatusPages(web);
  // "/" on a page's verified custom domain is the page, except for a user signed in to another
  // account: their sign-in lands on the dashboard, never on someone else's page (README "Custom domains")
  const customDomain = async (c: RouteCtx) => {
    const page = await pages.byHost(c.request);
    if (!page) return null;
    const session = await web.session(c.request);
    if (session && session.account_id !== page.accountId) return null;
    return pages.serve(c.request, socketIpOf(c), page, "html", { prefix: "" });
  };
  return new Elysia({ name: "web" })
    .get("/favicon.svg", faviconResponse)
    .get("/favicon.ico", faviconResponse)
    .get("/assets/:hash/:name", ({ params }: RouteCtx) => assetResponse(params.hash!, params.name!) ?? new Response("not found\n", { status: 404 }))
    .use(statusPageRoutes(pages))
    .use(authRoutes(web))
    .use(live.routes(web))
    .use(monitorRoutes(web, customDomain))
    .use(groupRoutes(web))
    .use(statusPageEditorRoutes(web))
    .use(statusPageUpdateEditorRoutes(web))
    .use(channelRoutes(web))
    .use(maintenanceRoutes(web))
    .use(tokenRoutes(web));
}

/**
 * An address nothing serves, asked by a browser: a page saying so with a way back, the dashboard's
 * for a signed-in person, a bare one otherwise (it names nothing of any account).
 */
async function notFoundPage(web: WebContext, request: Request): Promise<Response> {
  const session = await web.session(request);
  const body = session
    ? errorPage(session, "monitors", "Page not found", "There is no page at this address. It may have been deleted, or the link may be mistyped.")
    : authPage("Page not found", html`<h1>Page not found</h1><p>There is no page at this address.</p><p><a href="/">Go to the dashboard</a></p>`);
  return send(request, body, { status: 404 });
}

/** The leader's web UI: routes, live streams (ended on drain) and an hourly sweep of expired sessions. */
export function startWebService(ctx: AppContext, opts: WebOptions = {}): Service {
  const web = new WebContext(ctx, opts);
  const live = new LiveStreams();
  const sweep = setInterval(() => {
    sweepExpiredSessions(ctx.db, ctx.clock.now()).catch((err) => web.log.warn("session sweep failed", { error: String(err) }));
    sweepFlashes(ctx).catch((err) => web.log.warn("flash sweep failed", { error: String(err) }));
  }, SESSION_SWEEP_MS);
  sweep.unref?.();
  return {
    name: "web",
    plugin: webPlugin(web, live),
    notFoundPage: (request) => notFoundPage(web, request),
    // called before the server stops accepting: open event streams would otherwise hold it up
    drain() {
      live.closeAll();
    },
    async stop() {
      clearInterval(sweep);
      live.closeAll();
    },
  };
}
