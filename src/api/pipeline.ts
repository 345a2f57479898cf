import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { CONFIG_SCHEMA_PATH } from "../domain/config-file-schema.ts";
import type { Scope } from "../domain/scopes.ts";
import { readJsonObject } from "../http/json-body.ts";
import { bodyDrain } from "../http/read-limited.ts";
import { insufficientScope, methodNotAllowed, notFound, unauthorized } from "../http/errors.ts";
import { stateFor, type RequestState } from "../http/request-state.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import type { RouteDef } from "./route.ts";
import { RouteTable } from "../http/route-table.ts";
import { admitApiToken, bearerToken } from "../auth/token-gate.ts";
import { touchApiToken } from "../store/api-tokens.ts";

export const API_PREFIX = "/api/v1";
/** the OpenAPI document (api/openapi.ts), served without a token */
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;
/** the OpenAPI document and the configuration files' JSON Schema (api/docs.ts) */
const PUBLIC_API_PATHS = new Set([OPENAPI_PATH, CONFIG_SCHEMA_PATH]);

/**
 * The /api/v1 pipeline as an Elysia plugin. Authentication, plan, rate limit, route match and scope
 * run in onRequest, before Elysia reads anything; each route then reads and validates its own body,
 * so a request is refused for the first reason in docs/api-rules.md "Order of checks".
 */
export function apiPipeline(ctx: AppContext, routes: RouteDef[]) {
  const table = new RouteTable(routes);
  // routes of the table outside /api/v1 (the peers list) pass the same gate
  const outside = new Set(routes.map((r) => r.path).filter((p) => !p.startsWith(API_PREFIX + "/")));
  const log = ctx.log.child("api");
  const touched = new Map<number, number>();
  const drain = bodyDrain(ctx.config.idleTimeoutSec);

  const logLine = (state: RequestState, method: string, path: string, status: number) => {
    const seconds = (performance.now() - state.startedAt) / 1000;
    ctx.metrics.httpDuration.observe({ method, route: state.route?.path ?? "unmatched", status: String(status) }, seconds);
    log.info("request", { request_id: state.requestId, method, path, status, ms: Math.round(seconds * 100_000) / 100 });
  };

  async function gate(request: Request, path: string): Promise<void> {
    const state = stateFor(request);
    const token = bearerToken(request.headers.get("authorization"));
    if (!token) throw unauthorized();
    const found = await admitApiToken(ctx, state, token);
    state.caller = { accountId: found.account.id, plan: found.account.plan, tokenId: found.token.id, scopes: new Set(found.token.scopes.split(",") as Scope[]) };
    rememberUse(found.token.id, ctx.clock.now());
    const { route, params, allow } = table.match(request.method, path);
    if (!route) throw allow.length ? methodNotAllowed(allow) : notFound("endpoint");
    if (!state.caller.scopes.has(route.scope)) throw insufficientScope(route.scope);
    state.route = route;
    state.params = params;
  }

  // last_used_at is for people reading `token list`; a write per minute per token is plenty.
  function rememberUse(tokenId: number, now: number) {
    if (now - (touched.get(tokenId) ?? 0) < 60_000) return;
    touched.set(tokenId, now);
    touchApiToken(ctx.db, tokenId, now).catch(() => {});
  }

  const app = new Elysia({ name: "api" }).onRequest(async ({ request }) => {
    const url = new URL(request.url);
    const path = url.pathname;
    const ours = path === API_PREFIX || path.startsWith(API_PREFIX + "/") || outside.has(path.replace(/\/$/, ""));
    if (!ours || PUBLIC_API_PATHS.has(path)) return;
    const state = stateFor(request);
    try {
      await gate(request, path);
    } catch (err) {
      const res = errorResponse(state, err, log, request.method, path);
      logLine(state, request.method, path, res.status);
      // an answer from onRequest skips the app's mapResponse hook, which drains the rest otherwise
      await drain(request);
      return res;
    }
  });

  for (const def of routes) {
    app.route(
      def.method,
      def.path,
      async ({ request }) => {
        const state = stateFor(request);
        const url = new URL(request.url);
        try {
          const body = def.body ? await readJsonObject(request) : undefined;
          const res = await def.handler(
            { params: state.params ?? {}, query: url.searchParams, body, caller: state.caller!, requestId: state.requestId, request },
            ctx,
          );
          const response = jsonResponse(state, res.status ?? def.successStatus ?? 200, res.body);
          logLine(state, request.method, url.pathname, response.status);
          return response;
        } catch (err) {
          const response = errorResponse(state, err, log, request.method, url.pathname);
          logLine(state, request.method, url.pathname, response.status);
          return response;
        }
      },
      { parse: "none" } as never,
    );
  }
  return app;
}
