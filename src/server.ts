import { Elysia } from "elysia";
import { docsPlugin } from "./api/docs.ts";
import { ApiError, methodNotAllowed, notFound } from "./http/errors.ts";
import { healthPlugin } from "./api/health.ts";
import { openApiDocument } from "./api/openapi.ts";
import { apiPipeline } from "./api/pipeline.ts";
import { stateFor } from "./http/request-state.ts";
import { bodyDrain } from "./http/read-limited.ts";
import { errorResponse } from "./http/respond.ts";
import type { RouteDef } from "./api/route.ts";
import { RouteTable } from "./http/route-table.ts";
import { apiRoutes } from "./api/routes.ts";
import type { AppContext } from "./context.ts";
import type { Service } from "./lib/service.ts";
import { VERSION } from "./version.ts";

export interface ServerParts {
  /** the running services, for /readyz */
  services?: Service[];
  /** API routes; tests may pass extra ones. Default: every resource of api/routes.ts */
  routes?: RouteDef[];
  /** further Elysia plugins: heartbeat endpoint, web UI, peer protocol */
  plugins?: Elysia<any, any, any, any, any, any, any>[];
}

/** Builds the whole HTTP surface of one process: API, docs, health, and the plugins given. */
export function buildHttpApp(ctx: AppContext, parts: ServerParts = {}) {
  const log = ctx.log.child("http");
  // the services' hot paths go to Bun.serve's router, which dispatches them before Elysia
  const routes = Object.assign({}, ...(parts.services ?? []).map((s) => s.routes ?? {}));
  const apiRoutesServed = parts.routes ?? apiRoutes;
  const { baseUrl, heartbeatUrl, metricsPublic } = ctx.config;
  // every route with its methods, built once all plugins are in; routes taking any method ("ALL")
  // answer a wrong one themselves
  let served: RouteTable<ServedRoute> | null = null;
  const notFoundPage = parts.services?.find((s) => s.notFoundPage)?.notFoundPage;
  const drain = bodyDrain(ctx.config.idleTimeoutSec);
  const app = new Elysia({ serve: { routes } })
    .onError(async ({ request, code, error, path }) => {
      await drain(request);
      const state = stateFor(request);
      let err: unknown = error;
      if (code === "NOT_FOUND") {
        served ??= new RouteTable(servedRoutes(app).filter((r) => r.method !== "ALL"));
        err = wrongMethodOrNotFound(served, request.method, path);
        if (notFoundPage && (err as ApiError).status === 404 && wantsPage(request, path)) return notFoundPage(request);
      } else if (code === "PARSE") err = new ApiError(400, "invalid_json", "the body could not be parsed");
      return errorResponse(state, err, log, request.method, path);
    })
    // every answer of every route (the API's, the dashboard's, the status pages', the peers'); async,
    // since Elysia awaits only a hook declared async and takes anything else returned as the answer
    .mapResponse({ as: "global" }, async ({ request }) => {
      await drain(request);
    })
    .use(apiPipeline(ctx, apiRoutesServed))
    .use(docsPlugin(openApiDocument(apiRoutesServed, { version: VERSION, baseUrl, heartbeatUrl, metricsPublic })))
    .use(healthPlugin(ctx, () => parts.services ?? []));
  for (const p of parts.plugins ?? []) app.use(p);
  return app;
}

/**
 * A browser asking for a page that is not there gets a page of the dashboard with a way back (README
 * "Dashboard"); API clients, and anything under /api/, keep the JSON error.
 */
function wantsPage(request: Request, path: string): boolean {
  return (request.method === "GET" || request.method === "HEAD") && !path.startsWith("/api/") && (request.headers.get("accept") ?? "").includes("text/html");
}

export type ServedRoute = { method: string; path: string };

function servedRoutes(app: { routes: readonly ServedRoute[] }): ServedRoute[] {
  return app.routes.map((r) => ({ method: r.method, path: r.path }));
}

/**
 * A known path asked with another method is a 405 listing the ones it takes (HEAD wherever GET
 * is: the GET route answers it); any other path is a 404 (README "API behaviour").
 */
function wrongMethodOrNotFound(table: RouteTable<ServedRoute>, method: string, path: string): ApiError {
  const { route, allow } = table.match(method, path);
  if (route || allow.length === 0) return notFound("endpoint");
  return methodNotAllowed(allow);
}

/**
 * A probe's whole HTTP surface: /healthz and /readyz (and /metrics with --metrics-public). No API,
 * no dashboard, no heartbeat endpoint: those are the leader's.
 */
export function buildProbeHttpApp(ctx: AppContext, services: () => Service[]) {
  const log = ctx.log.child("http");
  const drain = bodyDrain(ctx.config.idleTimeoutSec);
  return new Elysia()
    .onError(async ({ request, code, error, path }) => {
      await drain(request);
      return errorResponse(stateFor(request), code === "NOT_FOUND" ? new ApiError(404, "not_found", "this is a probe: it serves only /healthz and /readyz") : error, log, request.method, path);
    })
    .mapResponse({ as: "global" }, async ({ request }) => {
      await drain(request);
    })
    .use(healthPlugin(ctx, services));
}

export interface RunningServer {
  port: number;
  url: string;
  /** every route the server answers, for tests built from the route list */
  routes: ServedRoute[];
  stop(): Promise<void>;
}

/** Starts listening. `stop` stops accepting and waits for in-flight requests (up to `graceMs`). */
export function listen(ctx: AppContext, app: ReturnType<typeof buildHttpApp>): RunningServer {
  // idleTimeout bounds how long a request may take to arrive and be answered (slow bodies, stalled
  // clients); Bun itself closes a connection whose request headers are not complete within ~10 s.
  // Bun's own body limit is off: over it Bun answers by itself, a bare 413 without our JSON error
  // body, and closes on a client still sending, which then reads a reset instead of the answer. The
  // limits are ours, per endpoint, counted by the code that reads a body (http/read-limited.ts), which
  // refuses a body as soon as it is over; the rest is read and dropped before the 413 goes out, up to
  // a bound (bodyDrain), and by Bun after it until the client is done or the idle timeout closes the
  // connection (README "Security", Limits).
  app.listen({ hostname: ctx.config.host, port: ctx.config.port, idleTimeout: ctx.config.idleTimeoutSec, maxRequestBodySize: Infinity });
  const server = app.server!;
  const host = ctx.config.host === "0.0.0.0" || ctx.config.host === "::" ? "127.0.0.1" : ctx.config.host;
  return {
    port: server.port!,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`,
    routes: servedRoutes(app),
    async stop() {
      await server.stop(false);
    },
  };
}
