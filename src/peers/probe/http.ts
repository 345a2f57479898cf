import { Elysia } from "elysia";
import { ApiError } from "../../api/errors.ts";
import { healthPlugin } from "../../api/health.ts";
import { stateFor } from "../../api/request-state.ts";
import { errorResponse } from "../../api/respond.ts";
import type { AppContext } from "../../context.ts";
import type { Service } from "../../services.ts";

/**
 * A probe's whole HTTP surface: /healthz and /readyz (and /metrics with --metrics-public). No API,
 * no dashboard, no heartbeat endpoint: those are the leader's.
 */
export function buildProbeHttpApp(ctx: AppContext, services: () => Service[]) {
  const log = ctx.log.child("http");
  return new Elysia()
    .onError(({ request, code, error, path }) => errorResponse(stateFor(request), code === "NOT_FOUND" ? new ApiError(404, "not_found", "this is a probe: it serves only /healthz and /readyz") : error, log, request.method, path))
    .use(healthPlugin(ctx, services));
}
