import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startInstance, type Instance } from "../../src/cli/serve.ts";
import { updateAccount } from "../../src/store/accounts.ts";
import { revokePeer } from "../../src/store/peers.ts";
import { createMonitor, httpAttrs, VALID_BY_TYPE } from "../api/fixtures.ts";
import { engineArgs, openTestStore } from "../helpers/engine.ts";
import { runVigil } from "../helpers/process.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { makePeer } from "./helpers.ts";

/**
 * The probe role in this process (its own data directory) against a real in-process leader: what it
 * serves, what it caches, what its checks look like to a target, and when it refuses to start.
 */
let leader: TestServer;
let probe: Instance;
const probeDir = tempDir("vigil-probe-");
const probeLogs: string[] = [];
const SECRET = "probe-cache-secret-c9d1e";
const seen: { ua: string | null; auth: string | null }[] = [];
let target: ReturnType<typeof Bun.serve>;
let monitorId: number;

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      seen.push({ ua: req.headers.get("user-agent"), auth: req.headers.get("authorization") });
      return new Response("ok");
    },
  });
  leader = await startTestServer();
  monitorId = await createMonitor(
    leader,
    httpAttrs({ name: "eu only", is_paused: false, interval_sec: 3600, target: `http://127.0.0.1:${target.port}/`, regions: ["eu"], api_auth_type: "bearer", api_auth_bearer_token: SECRET }),
  );
  const eu = await makePeer(leader.ctx, "eu");
  const args = ["--role", "probe", "--leader", leader.url, "--peer-token", eu.token, "--region", "eu", "--data", probeDir, "--host", "127.0.0.1", "--port", "0", "--log-level", "debug"];
  probe = await startInstance(
    [...args, ...(await engineArgs(args))],
    {},
    { logSink: (l) => probeLogs.push(l) },
  );
}, 30_000);

afterAll(async () => {
  await probe?.shutdown();
  await leader.stop();
  target.stop(true);
  rmSync(probeDir, { recursive: true, force: true });
});

test("a probe checks its region's monitors with the secret, names its region in the User-Agent, and the leader stores the result", async () => {
  const stored = await waitFor(async () => (await leader.api("GET", `/api/v1/monitors/${monitorId}/checks?region=eu`)).json.pagination.total >= 1);
  expect(stored).toBe(true);
  expect(seen.length).toBeGreaterThanOrEqual(1);
  expect(seen[0]!.ua).toBe("Vigil/0.1.0 (uptime monitor; region eu)");
  expect(seen[0]!.auth).toBe(`Bearer ${SECRET}`);
  // the leader's own region is not in this monitor's regions: it ran no check of its own
  expect((await leader.api("GET", `/api/v1/monitors/${monitorId}/checks?region=local`)).json.pagination.total).toBe(0);
});

test("a probe serves only /healthz and /readyz: no API, no bootstrap account", async () => {
  expect((await fetch(probe.url + "/healthz")).status).toBe(200);
  const ready = await fetch(probe.url + "/readyz");
  expect(ready.status).toBe(200);
  const apiRes = await fetch(probe.url + "/api/v1/monitors", { headers: { authorization: `Bearer ${leader.token}` } });
  expect(apiRes.status).toBe(404);
  expect(((await apiRes.json()) as { error: { code: string } }).error.code).toBe("not_found");
  expect((await fetch(probe.url + "/peer/v1/hello")).status).toBe(404);
  expect(existsSync(join(probeDir, "bootstrap-token"))).toBe(false);
});

test("the cached definitions hold the secret sealed, never in plaintext; the probe logs no secret", async () => {
  const store = await openTestStore(probeDir);
  try {
    const rows = await store.db.selectFrom("kv").select(["key", "value"]).where("key", "like", "peer.%").execute();
    expect(rows.some((r) => r.key === `peer.def.${monitorId}`)).toBe(true);
    expect(rows.some((r) => r.key === "peer.cursor")).toBe(true);
    for (const r of rows) expect(r.value).not.toContain(SECRET);
  } finally {
    await store.close();
  }
  expect(probeLogs.join("\n")).not.toContain(SECRET);
  expect(leader.logText()).not.toContain(SECRET);
});

test("the probe follows an edit on the leader without a restart", async () => {
  const before = seen.length;
  // moving the monitor out of eu removes it from the probe; back in, it is checked at once
  await leader.api("PATCH", `/api/v1/monitors/${monitorId}`, { regions: ["us"] });
  expect(await waitFor(() => probeLogs.some((l) => l.includes('"monitor unscheduled"') && l.includes(`"monitor_id":${monitorId}`)))).toBe(true);
  await leader.api("PATCH", `/api/v1/monitors/${monitorId}`, { regions: ["eu"] });
  expect(await waitFor(() => seen.length > before)).toBe(true);
});

test("a docker monitor over a unix socket this probe lacks: docker_error naming the socket, and the region does not count", async () => {
  const socket = join(probeDir, "no-such-dir", "docker.sock");
  const id = await createMonitor(leader, { ...VALID_BY_TYPE.docker, name: "container on another box", is_paused: false, interval_sec: 3600, regions: ["eu"], docker_host: `unix://${socket}` });
  const check = await waitFor(async () => (await leader.api("GET", `/api/v1/monitors/${id}/checks?region=eu`)).json.data[0]?.attributes);
  expect(check).toMatchObject({ status: "down", region: "eu", error_code: "docker_error" });
  expect(check.error_message).toBe(`this probe (region eu) has no Docker socket at ${socket}, so this region does not count toward the monitor's state`);
  // its only region left the quorum: the monitor has no verdict yet
  expect((await leader.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status).toBe("unknown");
  await leader.api("DELETE", `/api/v1/monitors/${id}`);
});

async function probeStartFails(token: string, region: string): Promise<{ code: number; stderr: string }> {
  const dir = tempDir("vigil-probe-bad-");
  try {
    const res = await runVigil(["serve", "--role", "probe", "--leader", leader.url, "--peer-token", token, "--region", region, "--data", dir, "--host", "127.0.0.1", "--port", "0"]);
    return { code: res.code, stderr: res.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a probe refuses to start with a region other than its token's, the leader's own region, or a revoked token", async () => {
  const us = await makePeer(leader.ctx, "us");
  const wrong = await probeStartFails(us.token, "ap");
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toContain('belongs to region "us"');

  const local = await makePeer(leader.ctx, "local");
  const own = await probeStartFails(local.token, "local");
  expect(own.code).toBe(1);
  expect(own.stderr).toContain("leader's own region");

  await revokePeer(leader.ctx.db, us.id, Date.now());
  const revoked = await probeStartFails(us.token, "us");
  expect(revoked.code).toBe(1);
  expect(revoked.stderr).toContain("unknown or revoked");
  expect(revoked.stderr).not.toContain(us.token);
}, 30_000);

test("an account's private-target rule reaches the probe with its monitors' definitions, and the probe refuses the target", async () => {
  const updates = () => probeLogs.filter((l) => l.includes('"monitor definitions updated"')).length;
  const before = updates();
  // as `vigil account update default --block-private-targets` does beside the running leader
  await updateAccount(leader.ctx.db, 1, { blockPrivateTargets: true });
  await leader.ctx.privateTargets.reload();
  // no monitor was edited: the rule change alone re-sends the account's definitions
  expect(await waitFor(() => updates() > before)).toBe(true);
  const seenBefore = seen.length;
  // moving it out of eu and back makes the probe check it at once
  await leader.api("PATCH", `/api/v1/monitors/${monitorId}`, { regions: ["us"] });
  expect(await waitFor(() => probeLogs.some((l) => l.includes('"monitor unscheduled"') && l.includes(`"monitor_id":${monitorId}`)))).toBe(true);
  await leader.api("PATCH", `/api/v1/monitors/${monitorId}`, { regions: ["eu"] });
  const blocked = await waitFor(async () => {
    const latest = (await leader.api("GET", `/api/v1/monitors/${monitorId}/checks?region=eu`)).json.data[0]?.attributes;
    return latest?.error_code === "target_blocked" ? latest : null;
  });
  expect(blocked?.error_message).toContain("private targets are blocked");
  expect(seen.length).toBe(seenBefore);
}, 30_000);
