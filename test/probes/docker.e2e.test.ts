/**
 * docker monitors end to end: created through the API of a real server, checked by its scheduler
 * against a Docker-Engine-API-shaped server (test/helpers/docker-api-server.ts) on a unix socket
 * and on a loopback TCP port, whose containers the test changes while the monitors run. The checks,
 * the monitor's state and its incidents are read back through the API. One failed check turns a
 * monitor down here (--confirmations 1 in CHECKED_MONITOR_ARGS).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHECKED_MONITOR_ARGS, createMonitor, incidentsOf, NEXT_RUN_MS, waitForCheck, waitForState } from "../helpers/checked-monitor.ts";
import { running, startDockerApiServer, type DockerApiServer, type DockerApiServerOptions } from "../helpers/docker-api-server.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { closedPort } from "../helpers/targets.ts";

let s: TestServer;
let docker: DockerApiServer;
let dockerTcp: DockerApiServer;
const dirs: string[] = [];

/** The daemon's containers; tests change them and the next check sees it. */
const containers: DockerApiServerOptions["containers"] = {
  web: { id: "3f4e8a9b0c1d", state: running() },
  worker: { state: running("starting") },
  db: { state: running("unhealthy") },
};

beforeAll(async () => {
  docker = await startDockerApiServer({ containers });
  dockerTcp = await startDockerApiServer({ containers, tcp: true });
  s = await startTestServer(CHECKED_MONITOR_ARGS);
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([docker?.stop(), dockerTcp?.stop()]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("docker monitor through the server", () => {
  test("a running container is up; it exits: container_not_running, down, an incident; it runs again: resolved", async () => {
    const id = await createMonitor(s, { name: "Web container", monitor_type: "docker", target: "web", docker_host: docker.dockerHost });
    const up = await waitForCheck(s, id);
    // over the unix socket: no address and no connection timings to tell
    expect(up).toMatchObject({ status: "up", error_code: null, resolved_ip: null, timings: null });
    expect(up.latency_ms).toBeNumber();
    expect(docker.requests).toContain("/containers/web/json");
    await waitForState(s, id, "up");

    containers.web!.state = { Status: "exited", Running: false, ExitCode: 137, OOMKilled: true };
    const down = await waitForCheck(s, id, (c) => c.status === "down", NEXT_RUN_MS);
    expect(down).toMatchObject({ error_code: "container_not_running", error_message: "container web is exited (code 137), killed for lack of memory" });
    await waitForState(s, id, "down");
    expect((await incidentsOf(s, id))[0]).toMatchObject({ status: "open", last_error_code: "container_not_running" });

    containers.web!.state = running();
    await waitForState(s, id, "up", NEXT_RUN_MS);
    expect((await incidentsOf(s, id)).map((i) => i.status)).toEqual(["resolved"]);
  }, 120_000);

  test("degraded while the health check is starting; up once it is healthy", async () => {
    const id = await createMonitor(s, { name: "Worker", monitor_type: "docker", target: "worker", docker_host: docker.dockerHost });
    const c = await waitForCheck(s, id);
    expect(c.status).toBe("degraded");
    expect(c.degraded_reason).toBe("container worker is running, its health check is still starting");
    await waitForState(s, id, "degraded");

    containers.worker!.state = running("healthy");
    await waitForState(s, id, "up", NEXT_RUN_MS);
    expect(await incidentsOf(s, id)).toEqual([]);
  }, 90_000);

  test("a daemon over TCP, by id prefix: up with the address used", async () => {
    const id = await createMonitor(s, { name: "Web over TCP", monitor_type: "docker", target: "3f4e8a", docker_host: `tcp://localhost:${dockerTcp.port}` });
    containers.web!.state = running();
    const c = await waitForCheck(s, id);
    expect(c).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
    expect(c.timings).toMatchObject({ dns_ms: expect.any(Number), connect_ms: expect.any(Number), tls_ms: null, ttfb_ms: expect.any(Number) });
    expect(dockerTcp.requests).toContain("/containers/3f4e8a/json");
  }, 60_000);

  test("each failure has its code, on the check and on the incident it opens", async () => {
    const noDocker = mkdtempSync(join(tmpdir(), "vigil-nodocker-"));
    dirs.push(noDocker);
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["unhealthy", { target: "db", docker_host: docker.dockerHost }, "container_unhealthy", "3 failed health checks in a row"],
      ["unknown", { target: "ghost", docker_host: docker.dockerHost }, "container_not_found", "No such container: ghost"],
      ["no socket", { target: "web", docker_host: `unix://${noDocker}/docker.sock` }, "docker_error", `no Docker socket at ${noDocker}/docker.sock`],
      ["daemon not listening", { target: "web", docker_host: `tcp://127.0.0.1:${await closedPort()}` }, "connection_refused", "127.0.0.1"],
    ];
    const ids = await Promise.all(cases.map(([name, attrs]) => createMonitor(s, { name, monitor_type: "docker", ...attrs })));
    for (const [i, [name, , code, words]] of cases.entries()) {
      const c = await waitForCheck(s, ids[i]!);
      expect([name, c.status, c.error_code]).toEqual([name, "down", code]);
      expect(c.error_message).toContain(words);
      await waitForState(s, ids[i]!, "down");
      expect((await incidentsOf(s, ids[i]!))[0]).toMatchObject({ status: "open", last_error_code: code });
    }
  }, 90_000);
});
