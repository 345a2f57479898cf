import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { putKv } from "../store/kv.ts";
import type { Service } from "../lib/service.ts";
import { insufficientScope, unauthorized } from "../http/errors.ts";
import { stateFor } from "../http/request-state.ts";
import { errorResponse, standardHeaders } from "../http/respond.ts";
import { admitApiToken, bearerToken } from "../auth/token-gate.ts";
import { FixedWindowLimiter } from "../lib/fixed-window.ts";
import type { Logger } from "../lib/logger.ts";
import { logStorageFailure, storageFailure } from "../lib/storage-errors.ts";
import { withoutEmptyFamilies } from "../lib/prometheus-text.ts";
import { monitorMetricsText, readMonitorMetrics } from "../services/monitor-metrics.ts";

/**
 * /healthz: the process answers (liveness). /readyz: the store takes a write and every service
 * says it is ready (readiness, for load balancers and orchestrators), and where this instance
 * stands among those sharing the database: leader or not, how many monitors it checks. /metrics: Prometheus text,
 * for a token with `metrics:read` unless `--metrics-public` is set; such a token meets the API's
 * plan rule and its limit per window, but its scrapes count in a window of their own, so API clients
 * of the same account never make a scrape fail (docs/api-rules.md "Rate limits and headers"); its
 * per-monitor series are its account's monitors only (--metrics-public: every account's).
 */
/** a write refused for storage this recently keeps the instance not ready, though a probe write fits */
const RECENT_REFUSAL_MS = 10_000;
/** the scrapes' window lasts as long as the API's */
const SCRAPE_WINDOW_MS = 60_000;

export function healthPlugin(ctx: AppContext, services: () => Service[]) {
  const log = ctx.log.child("api");
  const scrapes = new FixedWindowLimiter<number>(SCRAPE_WINDOW_MS);
  return new Elysia({ name: "health" })
    .get("/healthz", () => Response.json({ status: "ok" }))
    .get("/readyz", async () => {
      const problems: string[] = [];
      try {
        await putKv(ctx.db, "readyz", String(ctx.clock.now()));
      } catch (e) {
        problems.push(`store not writable: ${(e as Error).message}`);
      }
      const refused = ctx.writes.lastStorageFailure;
      if (problems.length === 0 && refused && Date.now() - refused.at < RECENT_REFUSAL_MS) {
        problems.push(`store not writable: a write was refused ${Math.round((Date.now() - refused.at) / 1000)} s ago (${refused.kind === "full" ? "disk full" : refused.kind === "io" ? "I/O error" : "database unreachable"})`);
      }
      for (const s of services()) if (s.ready && !s.ready()) problems.push(`${s.name} not ready`);
      // which instance this is, whether it leads, and how many monitors it checks (README "Several instances")
      const scheduler = services().find((s) => s.name === "scheduler")?.status?.();
      const cluster = { ...ctx.cluster.status(), monitors: typeof scheduler?.monitors === "number" ? scheduler.monitors : 0 };
      return Response.json({ status: problems.length ? "not_ready" : "ready", problems, cluster }, { status: problems.length ? 503 : 200 });
    })
    .get("/metrics", async ({ request }) => {
      const state = stateFor(request);
      try {
        if (ctx.config.metricsPublic) return new Response(await metricsBody(ctx, log, null), { headers: { "content-type": ctx.metrics.registry.contentType } });
        const token = bearerToken(request.headers.get("authorization"));
        if (!token) throw unauthorized("send a token with scope metrics:read, or start with --metrics-public");
        const found = await admitApiToken(ctx, state, token, undefined, scrapes);
        if (!found.token.scopes.split(",").includes("metrics:read")) throw insufficientScope("metrics:read");
        return new Response(await metricsBody(ctx, log, found.account.id), { headers: { ...standardHeaders(state), "content-type": ctx.metrics.registry.contentType } });
      } catch (err) {
        return errorResponse(state, err, log, request.method, "/metrics");
      }
    });
}

/**
 * prom-client's registry (the families that have samples), then the per-monitor series (README
 * "Per-monitor metrics") of one account (a token's) or of every account (--metrics-public; null).
 * Those are read before the answer starts,
 * so a read that fails never cuts the text; then the text is written as the client takes it, a chunk
 * at a time. While the database cannot be read they are left out and the instance's own figures are
 * served: those (results held in memory, dropped) are what an operator watches then (README "When the
 * database is unreachable"). A probe has no monitors of its own: the leader shows them.
 */
async function metricsBody(ctx: AppContext, log: Logger, accountId: number | null): Promise<ReadableStream<Uint8Array>> {
  const registry = withoutEmptyFamilies(await ctx.metrics.registry.metrics());
  let monitors: Iterator<string> = [].values();
  if (ctx.config.role === "leader") {
    try {
      monitors = monitorMetricsText(await readMonitorMetrics(ctx, accountId));
    } catch (err) {
      const kind = storageFailure(err);
      if (!kind) throw err;
      logStorageFailure(log, kind, { path: "/metrics" });
    }
  }
  const encoder = new TextEncoder();
  let first = true;
  return new ReadableStream({
    async pull(controller) {
      if (first) {
        first = false;
        controller.enqueue(encoder.encode(registry));
        return;
      }
      const next = monitors.next();
      if (next.done) return controller.close();
      controller.enqueue(encoder.encode(next.value));
      // a turn of the event loop between chunks: a fast client would otherwise take the whole text
      // in one go, and pings and API requests would wait for it
      await new Promise((resolve) => setImmediate(resolve));
    },
  });
}
