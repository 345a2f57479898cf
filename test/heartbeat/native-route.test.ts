/**
 * The ping endpoint is served by Bun.serve's own router ahead of Elysia (the hot path). These tests
 * check that the server really dispatches services' routes natively, and that the native routes
 * answer exactly as the Elysia plugin with the same handler does, for every kind of ping and error,
 * and record what they accept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { heartbeatEndpoint } from "../../src/heartbeat/endpoint.ts";
import { TokenCache } from "../../src/heartbeat/token-cache.ts";
import { buildHttpApp } from "../../src/server.ts";
import { createHeartbeat, ownIntake, timeline } from "../helpers/heartbeat.ts";
import { rmSync } from "node:fs";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.ts";
import { PING_BODY_LIMIT } from "../../src/domain/ping-body.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"]);
});
afterAll(async () => {
  await server.stop();
});

describe("native routes", () => {
  test("a service's routes are dispatched by Bun.serve before Elysia; other paths still reach Elysia", async () => {
    const seen: string[] = [];
    const app = buildHttpApp(server.ctx, {
      services: [
        {
          name: "probe-route",
          routes: { "/h/:token": (req) => (seen.push(req.params.token!), new Response(`native ${req.params.token}`)) },
          stop: async () => {},
        },
      ],
    }).listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const base = `http://127.0.0.1:${app.server!.port}`;
      const r = await fetch(`${base}/h/abc123def456`);
      expect(await r.text()).toBe("native abc123def456");
      expect(seen).toEqual(["abc123def456"]);
      // not a native route: Elysia's 404 with the API's error body
      const other = await fetch(`${base}/h/abc/def/ghi`);
      expect(other.status).toBe(404);
      expect(((await other.json()) as any).error.code).toBe("not_found");
    } finally {
      await app.stop(true);
    }
  });

  test("native routes and the Elysia plugin answer every case alike, and record what they accept", async () => {
    const ctx = server.ctx;
    const tokens = new TokenCache(ctx.db);
    await tokens.warm();
    // an intake of its own: only it pings its monitor, so it and the server never fold the same pings
    const journalDir = tempDir("vigil-journal-");
    const intake = ownIntake(ctx, journalDir);
    const batches = intake.batches;
    const endpoint = heartbeatEndpoint(ctx, { resolveToken: (t) => tokens.resolve(t), submit: (p) => batches.submit(p) });
    const native = Bun.serve({ hostname: "127.0.0.1", port: 0, routes: endpoint.routes as never, fetch: () => new Response("fallback", { status: 599 }) });
    try {
      const m = await createHeartbeat(server, { periodSec: 60 });
      const big = "x".repeat(PING_BODY_LIMIT + 1);
      const cases: { path: string; method?: string; body?: string }[] = [
        { path: `/h/${m.token}` },
        { path: `/h/${m.token}`, method: "POST", body: "hello" },
        { path: `/h/${m.token}`, method: "HEAD" },
        { path: `/h/${m.token}`, method: "PUT", body: "{}" },
        { path: `/h/${m.token}`, method: "POST", body: big },
        { path: `/h/${m.token}/start` },
        { path: `/h/${m.token}/0` },
        { path: `/h/${m.token}/256` },
        { path: `/h/${m.token}/nonsense` },
        { path: `/h/${"y".repeat(32)}` },
        { path: "/h/bad$token" },
      ];
      const answers = async (send: (path: string, init: RequestInit) => Promise<Response>) => {
        const out: { status: number; body: unknown; type: string | null; allow: string | null }[] = [];
        for (const c of cases) {
          const res = await send(c.path, { method: c.method ?? "GET", body: c.body });
          const text = await res.text();
          const body = text ? JSON.parse(text) : "";
          if (body && typeof body === "object") delete (body as { meta?: unknown }).meta; // request ids differ
          out.push({ status: res.status, body, type: res.headers.get("content-type"), allow: res.headers.get("allow") });
        }
        return out;
      };
      const viaNative = await answers((p, init) => fetch(`http://127.0.0.1:${native.port}${p}`, init));
      const viaElysia = await answers((p, init) => endpoint.plugin.handle(new Request(`http://127.0.0.1${p}`, init)));
      expect(viaNative).toEqual(viaElysia);
      expect(viaNative.map((a) => a.status)).toEqual([200, 200, 200, 405, 413, 200, 200, 404, 404, 404, 404]);
      expect(viaNative[0]!.body).toEqual({ result: "accepted" });
      expect(viaNative[0]!.type).toBe("application/json; charset=utf-8");

      // both paths recorded their accepted pings: GET, POST, HEAD, /start, /0, twice each
      await intake.settle();
      const pings = (await timeline(ctx, m.id)).filter((e) => e.kind !== "transition");
      expect(pings.map((e) => `${e.kind}:${e.result}`).sort()).toEqual(
        Array.from({ length: 2 }, () => ["ping:accepted", "ping:accepted", "ping:accepted", "start:accepted", "ping:accepted"]).flat().sort(),
      );
    } finally {
      await native.stop(true);
      await intake.close();
      rmSync(journalDir, { recursive: true, force: true });
    }
  });
});
