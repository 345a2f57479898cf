import { Elysia } from "elysia";
import { verifyApiToken } from "../auth/api-tokens.ts";
import type { AppContext } from "../context.ts";
import type { Service } from "../services.ts";

/**
 * /healthz: the process answers (liveness). /readyz: the store takes a write and every service
 * says it is ready (readiness, for load balancers and orchestrators). /metrics: Prometheus text,
 * for a token with `metrics:read` unless `--metrics-public` is set.
 */
export function healthPlugin(ctx: AppContext, services: () => Service[]) {
  return new Elysia({ name: "health" })
    .get("/healthz", () => Response.json({ status: "ok" }), { detail: { hide: true } })
    .get("/readyz", async () => {
      const problems: string[] = [];
      try {
        await ctx.db
          .insertInto("kv")
          .values({ key: "readyz", value: String(ctx.clock.now()) })
          .onConflict((oc) => oc.column("key").doUpdateSet({ value: String(ctx.clock.now()) }))
          .execute();
      } catch (e) {
        problems.push(`store not writable: ${(e as Error).message}`);
      }
      for (const s of services()) if (s.ready && !s.ready()) problems.push(`${s.name} not ready`);
      return Response.json({ status: problems.length ? "not_ready" : "ready", problems }, { status: problems.length ? 503 : 200 });
    }, { detail: { hide: true } })
    .get("/metrics", async ({ request }) => {
      if (!ctx.config.metricsPublic) {
        const m = /^Bearer (\S+)$/.exec(request.headers.get("authorization") ?? "");
        const found = m ? await verifyApiToken(ctx.db, m[1]!) : undefined;
        if (!found) return Response.json({ error: { code: "unauthorized", message: "send a token with scope metrics:read, or start with --metrics-public" } }, { status: 401, headers: { "www-authenticate": "Bearer" } });
        if (!found.token.scopes.split(",").includes("metrics:read")) return Response.json({ error: { code: "insufficient_scope", message: "this token lacks the scope 'metrics:read'" } }, { status: 403 });
      }
      return new Response(await ctx.metrics.registry.metrics(), { headers: { "content-type": ctx.metrics.registry.contentType } });
    }, { detail: { hide: true } });
}
