import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

test("/healthz and /readyz answer when the store is writable", async () => {
  expect((await fetch(s.url + "/healthz")).status).toBe(200);
  const r = await fetch(s.url + "/readyz");
  expect(r.status).toBe(200);
  const body = await r.json();
  expect(body).toMatchObject({ status: "ready", problems: [] });
  // one instance alone leads and checks everything (README "Several instances")
  expect(body.cluster).toMatchObject({ region: "local", leader: true, monitors: 0 });
  expect(body.cluster.leader_instance).toBe(body.cluster.instance);
  expect(body.cluster.region_instances).toEqual([body.cluster.instance]);
  const kv = await s.ctx.db.selectFrom("kv").selectAll().where("key", "=", "readyz").executeTakeFirst();
  expect(kv).toBeDefined();
});

test("/metrics needs a token with metrics:read and then serves Prometheus text", async () => {
  expect((await fetch(s.url + "/metrics")).status).toBe(401);
  const noScope = await makeAccount(s.ctx, "no-metrics", "pro", ["monitors:read"]);
  expect((await fetch(s.url + "/metrics", { headers: { authorization: `Bearer ${noScope.token}` } })).status).toBe(403);
  await s.api("GET", "/api/v1/does-not-exist");
  const r = await fetch(s.url + "/metrics", { headers: { authorization: `Bearer ${s.token}` } });
  expect(r.status).toBe(200);
  const text = await r.text();
  expect(text).toContain("vigil_http_request_duration_seconds_bucket");
  expect(text).toMatch(/vigil_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} [1-9]/);
  expect(text).toContain("vigil_process_resident_memory_bytes");
  expect(text).toContain("vigil_bun_heap_size_bytes");
  // the per-space breakdown walks the whole heap under Bun on every scrape: left out
  expect(text).not.toContain("heap_space_size");
});

test("--metrics-public serves /metrics without a token", async () => {
  const pub = await startTestServer(["--metrics-public"]);
  try {
    expect((await fetch(pub.url + "/metrics")).status).toBe(200);
  } finally {
    await pub.stop();
  }
});
