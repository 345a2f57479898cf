/**
 * Every endpoint that takes an API token (/api/v1, /metrics, /peer/v1/peers) admits it the same way:
 * the Bearer scheme in any case, the plan rule, and the plan's limit per window: one per-account
 * window shared by /api/v1 and /peer/v1/peers, and one of its own for /metrics scrapes, so busy API
 * clients never make a scrape fail (docs/api-rules.md "Order of checks" and "Rate limits and headers").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearerToken } from "../../src/auth/token-gate.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { makePeer } from "../peers/helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(["--rate-limit", "pro=4,enterprise=300"]);
});
afterAll(() => s.stop());

const get = (path: string, authorization?: string) => fetch(s.url + path, { headers: authorization ? { authorization } : {} });

describe("the Bearer scheme is case-insensitive", () => {
  test("bearerToken reads any case and one or more spaces; anything else is no token", () => {
    for (const h of ["Bearer vgl_abc", "bearer vgl_abc", "BEARER vgl_abc", "bEaReR  vgl_abc", " Bearer vgl_abc "]) expect({ h, t: bearerToken(h) }).toEqual({ h, t: "vgl_abc" });
    for (const h of [null, "", "Bearer", "Bearer ", "Basic vgl_abc", "Bearervgl_abc", "Bearer vgl abc", "Bearer vgl_\u0000"]) expect({ h, t: bearerToken(h) }).toEqual({ h, t: null });
  });

  test("/api/v1, /metrics and /peer/v1 accept `bearer` and `BEARER`", async () => {
    for (const scheme of ["bearer", "BEARER"]) {
      expect((await get("/api/v1/monitors", `${scheme} ${s.token}`)).status).toBe(200);
      expect((await get("/metrics", `${scheme} ${s.token}`)).status).toBe(200);
      expect((await get("/peer/v1/peers", `${scheme} ${s.token}`)).status).toBe(200);
    }
    const peer = await makePeer(s.ctx, "eu-case");
    expect((await get("/peer/v1/hello", `bearer ${peer.token}`)).status).toBe(200);
  });
});

describe("/metrics and /peer/v1/peers with an API token", () => {
  test("a free account's token is refused with plan_feature_disabled on both", async () => {
    const free = await makeAccount(s.ctx, "free-metrics", "free");
    for (const path of ["/metrics", "/peer/v1/peers"]) {
      const res = await get(path, `Bearer ${free.token}`);
      expect({ path, status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code }).toEqual({ path, status: 403, code: "plan_feature_disabled" });
    }
  });

  test("/api/v1 and /peer/v1/peers share the account's API window; /metrics counts in one of its own, with the same limit", async () => {
    const pro = await makeAccount(s.ctx, "pro-window", "pro");
    const auth = `Bearer ${pro.token}`;
    const remaining = async (paths: string[]) => {
      const out: string[] = [];
      for (const path of paths) {
        const res = await get(path, auth);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        out.push(res.headers.get("x-ratelimit-remaining")!);
      }
      return out;
    };
    const refused = async (path: string) => {
      const res = await get(path, auth);
      const body = (await res.json()) as { error: { code: string } };
      expect({ path, status: res.status, code: body.error.code }).toEqual({ path, status: 429, code: "rate_limited" });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    };
    expect(await remaining(["/api/v1/monitors", "/peer/v1/peers", "/metrics", "/api/v1/monitors", "/peer/v1/peers"])).toEqual(["3", "2", "3", "1", "0"]);
    for (const path of ["/peer/v1/peers", "/api/v1/monitors"]) await refused(path);
    // the API clients' spent window leaves the scrapes theirs: a Prometheus keeps scraping
    expect(await remaining(["/metrics", "/metrics", "/metrics"])).toEqual(["2", "1", "0"]);
    await refused("/metrics");
    // another account's windows are its own
    const other = await makeAccount(s.ctx, "pro-window-2", "pro");
    expect((await get("/metrics", `Bearer ${other.token}`)).status).toBe(200);
    expect((await get("/api/v1/monitors", `Bearer ${other.token}`)).status).toBe(200);
  });
});

test("--metrics-public still serves /metrics to anyone, without a token", async () => {
  const pub = await startTestServer(["--metrics-public"]);
  try {
    for (let i = 0; i < 3; i++) expect((await fetch(pub.url + "/metrics")).status).toBe(200);
  } finally {
    await pub.stop();
  }
});
