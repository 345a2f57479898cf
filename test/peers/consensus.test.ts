import { afterAll, beforeAll, expect, test } from "bun:test";
import { createMonitor, httpAttrs, VALID_BY_TYPE } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { batch, makePeer, peerCall, resultItem } from "./helpers.ts";

/**
 * The consensus incident engine fed live through the peer protocol: three probe regions report to
 * a real in-process leader whose clock the test moves, so "3 silent intervals" takes no waiting.
 * Monitors run only in the probes' regions, so the leader's own scheduler adds nothing.
 */
let s: TestServer;
let now = Date.now();
const clock = { now: () => now };
const peers: Record<string, { token: string }> = {};
const T0 = now;

beforeAll(async () => {
  s = await startTestServer([], { clock });
  for (const r of ["eu", "us", "ap"]) peers[r] = await makePeer(s.ctx, r);
});
afterAll(() => s.stop());

/** Sends one result from `region` stamped `atMs` after T0 (the leader's clock moves there too). */
async function report(region: string, monitorId: number, status: "up" | "down", atMs: number, over: Record<string, unknown> = {}) {
  now = Math.max(now, T0 + atMs);
  const item = resultItem(monitorId, status, T0 + atMs, over);
  const res = await peerCall(s.url, peers[region]!.token, "POST", "/results", batch([item]));
  expect(res.status).toBe(200);
  return { outcome: res.json.data.results[0].outcome as string, item };
}

async function monitor(id: number) {
  return (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes;
}
async function incidents(id: number) {
  return (await s.api("GET", `/api/v1/incidents?monitor_id=${id}`)).json.data.map((i: { id: string; attributes: Record<string, unknown> }) => ({ id: i.id, ...i.attributes }));
}
async function checkIds(id: number): Promise<{ id: number; region: string; status: string; checked_at: string }[]> {
  const res = await s.api("GET", `/api/v1/monitors/${id}/checks?per_page=100`);
  return res.json.data.map((c: { id: string; attributes: { region: string; status: string; checked_at: string } }) => ({ id: Number(c.id), ...c.attributes }));
}

const threeRegions = (name: string) => createMonitor(s, httpAttrs({ name, is_paused: false, interval_sec: 10, timeout_ms: 2000, regions: ["eu", "us", "ap"] }));

test("one region failing opens nothing; two of three open an incident; recovery resolves it, with exact fields", async () => {
  const id = await threeRegions("consensus");
  for (const r of ["eu", "us", "ap"]) await report(r, id, "up", 0);
  expect((await monitor(id)).last_status).toBe("up");

  // ap fails, confirmed (2 in a row): one region of three is a network problem, not an outage
  await report("ap", id, "down", 1000);
  await report("ap", id, "down", 2000);
  expect((await monitor(id)).last_status).toBe("up");
  expect(await incidents(id)).toEqual([]);

  // us fails too: unconfirmed first (degraded), then confirmed: two of three are down
  await report("us", id, "down", 3000);
  expect((await monitor(id)).last_status).toBe("degraded");
  const opening = await report("us", id, "down", 4000, { error_message: "us saw 503" });
  expect((await monitor(id)).last_status).toBe("down");
  let [inc] = await incidents(id);
  const byUid = await checkIds(id);
  const rootId = byUid.find((c) => c.region === "us" && c.checked_at === new Date(T0 + 4000).toISOString())!.id;
  expect(inc).toMatchObject({ status: "open", started_at: new Date(T0 + 4000).toISOString(), root_check_id: rootId, failure_count: 4, last_error_message: "us saw 503", resolved_at: null, duration_ms: null });
  expect(opening.outcome).toBe("stored");

  // while open every failed check from any region counts; the last error is the latest failure's
  await report("eu", id, "down", 5000, { error_message: "eu saw 502", http_code: 502 });
  await report("eu", id, "up", 6000);
  expect((await monitor(id)).last_status).toBe("down"); // ap and us still count as down
  await report("us", id, "up", 7400);
  expect((await monitor(id)).last_status).toBe("up");
  [inc] = await incidents(id);
  const resolvedId = (await checkIds(id)).find((c) => c.region === "us" && c.status === "up" && c.checked_at === new Date(T0 + 7400).toISOString())!.id;
  expect(inc).toMatchObject({
    status: "resolved",
    started_at: new Date(T0 + 4000).toISOString(),
    resolved_at: new Date(T0 + 7400).toISOString(),
    duration_ms: 3000, // 3.4 s, whole seconds
    failure_count: 5,
    last_error_code: "http_error",
    last_error_message: "eu saw 502",
    last_http_code: 502,
    root_check_id: rootId,
    resolved_check_id: resolvedId,
  });
  // failure_count is exactly the failed checks that arrived before the resolving one
  expect((await checkIds(id)).filter((c) => c.status === "down" && c.id < resolvedId).length).toBe(5);
});

test("a region silent for 3 intervals leaves the quorum, and rejoins when it reports again", async () => {
  const base = now - T0 + 1000;
  const id = await threeRegions("quorum");
  for (const r of ["eu", "us"]) await report(r, id, "up", base);
  await report("ap", id, "down", base);
  await report("ap", id, "down", base + 1000);
  expect((await monitor(id)).last_status).toBe("up");

  // ap falls silent; 31 s later (interval 10 s) us fails, confirmed. Were ap's stale downs still
  // counted this would be 2 of 3 down; without ap it is 1 of 2, a tie, and a tie keeps the state.
  await report("eu", id, "up", base + 31_000);
  await report("us", id, "down", base + 31_500);
  await report("us", id, "down", base + 32_000);
  expect((await monitor(id)).last_status).toBe("up");
  expect(await incidents(id)).toEqual([]);

  // ap reports again (still failing): it is back in the quorum and its downs count at once
  await report("ap", id, "down", base + 33_000);
  expect((await monitor(id)).last_status).toBe("down");
  const [inc] = await incidents(id);
  const root = (await checkIds(id)).find((c) => c.region === "ap" && c.checked_at === new Date(T0 + base + 33_000).toISOString())!;
  expect(inc).toMatchObject({ status: "open", root_check_id: root.id, started_at: root.checked_at });
  // failures of the regions in the quorum since their last success: us 2, ap 3
  expect(inc.failure_count).toBe(5);
});

test("maintenance: the state is computed but no incident opens; pause freezes: results are dropped", async () => {
  const id = await createMonitor(s, httpAttrs({ name: "maint", is_paused: false, is_in_maintenance: true, interval_sec: 10, regions: ["eu", "us"] }));
  const base = now - T0 + 1000;
  for (const r of ["eu", "us"]) {
    await report(r, id, "down", base);
    await report(r, id, "down", base + 1000);
  }
  expect((await monitor(id)).last_status).toBe("down");
  expect(await incidents(id)).toEqual([]);

  await s.api("PATCH", `/api/v1/monitors/${id}`, { is_paused: true });
  const before = (await checkIds(id)).length;
  const r = await report("eu", id, "up", base + 2000);
  expect(r.outcome).toBe("dropped");
  expect((await checkIds(id)).length).toBe(before);
  expect((await monitor(id)).last_status).toBe("down");
});

test("docker over a unix socket: a probe's docker_error is kept as a check but leaves its region out of the quorum; over TCP it counts", async () => {
  const base = now - T0 + 1000;
  const docker = (name: string, docker_host: string | null) =>
    createMonitor(s, { ...VALID_BY_TYPE.docker, name, docker_host, is_paused: false, interval_sec: 10, timeout_ms: 2000, regions: ["eu", "us", "ap"] });
  const noSocket = { error_code: "docker_error", error_message: "this probe (region eu) has no Docker socket at /var/run/docker.sock", http_code: null };

  const local = await docker("docker local", null);
  for (const r of ["eu", "us", "ap"]) await report(r, local, "up", base);
  // two of three regions lack the socket: were they counted, 2 of 3 confirmed downs would open an incident
  for (const at of [base + 1000, base + 2000]) for (const r of ["eu", "us"]) expect((await report(r, local, "down", at, noSocket)).outcome).toBe("stored");
  expect((await monitor(local)).last_status).toBe("up");
  expect(await incidents(local)).toEqual([]);
  expect((await checkIds(local)).filter((c) => c.status === "down").map((c) => c.region).sort()).toEqual(["eu", "eu", "us", "us"]);
  // ap alone decides now: the container stops, confirmed, and the monitor is down
  const stopped = { error_code: "container_not_running", error_message: "container nextcloud is exited", http_code: null };
  await report("ap", local, "down", base + 3000, stopped);
  await report("ap", local, "down", base + 4000, stopped);
  expect((await monitor(local)).last_status).toBe("down");
  const [inc] = await incidents(local);
  expect(inc).toMatchObject({ status: "open", failure_count: 2, last_error_code: "container_not_running" });
  // a socketless region's result adds no failure to the open incident, and its region stays out
  await report("eu", local, "down", base + 5000, noSocket);
  expect((await incidents(local))[0]).toMatchObject({ failure_count: 2, last_error_code: "container_not_running" });
  // ap recovers: with eu and us out, the monitor is up at once
  await report("ap", local, "up", base + 6000);
  expect((await monitor(local)).last_status).toBe("up");

  // Docker over TCP is the same daemon from everywhere: failing to reach it is a failure
  const remote = await docker("docker remote", "tcp://192.0.2.10:2375");
  for (const r of ["eu", "us", "ap"]) await report(r, remote, "up", base + 7000);
  for (const at of [base + 8000, base + 9000]) for (const r of ["eu", "us"]) await report(r, remote, "down", at, { ...noSocket, error_message: "cannot reach the Docker host" });
  expect((await monitor(remote)).last_status).toBe("down");
});
