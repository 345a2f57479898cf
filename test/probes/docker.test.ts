/**
 * The docker probe against a Docker-Engine-API-shaped server (test/helpers/docker-api-server.ts) on
 * a unix socket in a temp dir, as dockerd listens, and on a loopback TCP port.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProbeMonitor } from "../../src/domain/monitor.ts";
import { dockerEndpoint, dockerProbe } from "../../src/probes/docker.ts";
import { running, startDockerApiServer, type DockerApiServer, type DockerApiServerOptions } from "../helpers/docker-api-server.ts";
import { closedPort } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

const servers: DockerApiServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function docker(o: DockerApiServerOptions): Promise<DockerApiServer> {
  const s = await startDockerApiServer(o);
  servers.push(s);
  return s;
}

const containers: DockerApiServerOptions["containers"] = {
  web: { id: "3f4e8a9b0c1d", state: running() },
  api: { state: running("healthy") },
  worker: { state: running("starting") },
  db: { state: running("unhealthy") },
  crashed: { state: { Status: "exited", Running: false, ExitCode: 1, OOMKilled: true } },
  frozen: { state: { Status: "paused", Running: true, Paused: true } },
  looping: { state: { Status: "restarting", Running: true, Restarting: true, ExitCode: 137 } },
};

const run = (o: Partial<ProbeMonitor>, ctx = context()) => dockerProbe(monitor({ timeout_ms: 5000, ...o }), ctx);

describe("docker_host", () => {
  test("null is the local socket; tcp:// is plain HTTP on port 2375 unless given; http:// as written", () => {
    expect(dockerEndpoint(null)).toEqual({ kind: "unix", path: "/var/run/docker.sock" });
    expect(dockerEndpoint("unix:///run/user/1000/docker.sock")).toEqual({ kind: "unix", path: "/run/user/1000/docker.sock" });
    const tcp = dockerEndpoint("tcp://docker.lan");
    expect(tcp.kind === "http" && tcp.base.href).toBe("http://docker.lan:2375/");
    const http = dockerEndpoint("http://docker.lan:8080");
    expect(http.kind === "http" && http.base.href).toBe("http://docker.lan:8080/");
  });

  test("another scheme is docker_error, saying what is accepted", async () => {
    const r = await run({ target: "web", docker_host: "ssh://root@docker.lan" });
    expect(r).toMatchObject({ status: "down", error_code: "docker_error" });
    expect(r.error_message).toContain("unix:///path, tcp://host:port or http://host:port");
  });
});

describe("docker probe over the unix socket", () => {
  test("a running container without health check is up, by name, by id prefix and by /name", async () => {
    const d = await docker({ containers });
    for (const target of ["web", "3f4e8a", "/web"]) {
      const r = await run({ target, docker_host: d.dockerHost });
      expect(r.error_message).toBeNull();
      expect(r.status).toBe("up");
      expect(r.latency_ms).toBeGreaterThan(0);
    }
    expect(d.requests).toEqual(["/containers/web/json", "/containers/3f4e8a/json", "/containers/web/json"]);
  });

  test("a healthy container is up", async () => {
    const d = await docker({ containers });
    expect((await run({ target: "api", docker_host: d.dockerHost })).status).toBe("up");
  });

  test("a health check still starting is degraded", async () => {
    const d = await docker({ containers });
    const r = await run({ target: "worker", docker_host: d.dockerHost });
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toContain("health check is still starting");
  });

  test("an unhealthy container is container_unhealthy, quoting the last health check", async () => {
    const d = await docker({ containers });
    const r = await run({ target: "db", docker_host: d.dockerHost });
    expect(r).toMatchObject({ status: "down", error_code: "container_unhealthy" });
    expect(r.error_message).toContain("3 failed health checks in a row");
    expect(r.error_message).toContain("Failed to connect to localhost port 8080");
  });

  test("a stopped container is container_not_running, saying its state", async () => {
    const d = await docker({ containers });
    const r = await run({ target: "crashed", docker_host: d.dockerHost });
    expect(r).toMatchObject({ status: "down", error_code: "container_not_running" });
    expect(r.error_message).toBe("container crashed is exited (code 1), killed for lack of memory");
  });

  test("paused and restarting containers are not running", async () => {
    const d = await docker({ containers });
    const paused = await run({ target: "frozen", docker_host: d.dockerHost });
    expect(paused).toMatchObject({ status: "down", error_code: "container_not_running", error_message: "container frozen is paused" });
    const restarting = await run({ target: "looping", docker_host: d.dockerHost });
    expect(restarting).toMatchObject({ status: "down", error_code: "container_not_running", error_message: "container looping is restarting" });
  });

  test("an unknown container is container_not_found with Docker's words; the name is URL-encoded", async () => {
    const d = await docker({ containers });
    const r = await run({ target: "ghost", docker_host: d.dockerHost });
    expect(r).toMatchObject({ status: "down", error_code: "container_not_found" });
    expect(r.error_message).toContain("No such container: ghost");
    const odd = await run({ target: "web/../../version", docker_host: d.dockerHost });
    expect(odd.error_code).toBe("container_not_found");
    expect(d.requests.at(-1)).toBe("/containers/web%2F..%2F..%2Fversion/json");
  });

  test("a daemon error is docker_error with its message", async () => {
    const d = await docker({ containers, failure: { status: 500, message: "error during connect: daemon overloaded" } });
    const r = await run({ target: "web", docker_host: d.dockerHost });
    expect(r).toMatchObject({ status: "down", error_code: "docker_error" });
    expect(r.error_message).toContain("answered 500: error during connect: daemon overloaded");
  });

  test("an answer that is not a container inspection is docker_error", async () => {
    const d = await docker({ containers: { web: { state: null as never } } });
    const r = await run({ target: "web", docker_host: d.dockerHost });
    expect(r).toMatchObject({ status: "down", error_code: "docker_error" });
    expect(r.error_message).toContain("no State");
  });

  test("a missing socket is docker_error naming the path (what a probe peer without Docker gets)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-nodocker-"));
    dirs.push(dir);
    const r = await run({ target: "web", docker_host: `unix://${dir}/docker.sock` });
    expect(r).toMatchObject({ status: "down", error_code: "docker_error" });
    expect(r.error_message).toContain(`no Docker socket at ${dir}/docker.sock`);
  });

  test("a path that is not a listening socket is docker_error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-nodocker-"));
    dirs.push(dir);
    writeFileSync(join(dir, "docker.sock"), "");
    const r = await run({ target: "web", docker_host: `unix://${dir}/docker.sock` });
    expect(r).toMatchObject({ status: "down", error_code: "docker_error" });
    expect(r.error_message).toContain("not a listening socket");
  });

  test("a daemon slower than timeout_ms is connection_timeout", async () => {
    const d = await docker({ containers, delayMs: 2000 });
    const r = await run({ target: "web", docker_host: d.dockerHost, timeout_ms: 200 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout" });
    expect(r.error_message).toContain("200 ms");
  });

  test("slower than api_max_latency_ms is degraded; a generous limit is up", async () => {
    const d = await docker({ containers, delayMs: 50 });
    const r = await run({ target: "web", docker_host: d.dockerHost, api_max_latency_ms: 1 });
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toContain("above 1 ms");
    expect((await run({ target: "web", docker_host: d.dockerHost, api_max_latency_ms: 60_000 })).status).toBe("up");
  });

  test("with the private-target rule on, the socket is refused as a local service", async () => {
    const d = await docker({ containers });
    const byAccount = await run({ target: "web", docker_host: d.dockerHost, block_private_targets: true });
    expect(byAccount).toMatchObject({ status: "down", error_code: "target_blocked" });
    expect(byAccount.error_message).toContain("local service");
    const byInstance = await run({ target: "web", docker_host: d.dockerHost }, context({ blockPrivateTargets: true }));
    expect(byInstance.error_code).toBe("target_blocked");
    expect(d.requests).toHaveLength(0);
  });
});

describe("docker probe over TCP", () => {
  test("a running container is up, with the address used", async () => {
    const d = await docker({ containers, tcp: true });
    const r = await run({ target: "web", docker_host: `tcp://localhost:${d.port}` });
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
    const viaHttp = await run({ target: "crashed", docker_host: `http://127.0.0.1:${d.port}` });
    expect(viaHttp.error_code).toBe("container_not_running");
  });

  test("a closed port is connection_refused; an unknown host is dns_error", async () => {
    expect((await run({ target: "web", docker_host: `tcp://127.0.0.1:${await closedPort()}` })).error_code).toBe("connection_refused");
    expect((await run({ target: "web", docker_host: "tcp://no-such-host.invalid:2375" })).error_code).toBe("dns_error");
  });

  test("the private-target rule refuses a loopback Docker host", async () => {
    const d = await docker({ containers, tcp: true });
    const r = await run({ target: "web", docker_host: d.dockerHost, block_private_targets: true });
    expect(r).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
    expect(d.requests).toHaveLength(0);
  });
});
