/**
 * A server shaped like the Docker Engine API, for the docker probe's tests (and any other test that
 * needs one): `GET /containers/{name or id}/json` (with or without a /v1.xx prefix) answers an
 * inspection built from the table it is given, unknown containers get Docker's 404 with its JSON
 * error body. It listens on a unix socket in a temp dir, as dockerd does, or on a loopback TCP port.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The ContainerState of the Engine API, as much of it as tests set. */
export interface ContainerStateFixture {
  Status: "created" | "running" | "paused" | "restarting" | "removing" | "exited" | "dead";
  Running: boolean;
  Paused?: boolean;
  Restarting?: boolean;
  OOMKilled?: boolean;
  Dead?: boolean;
  ExitCode?: number;
  Error?: string;
  Health?: { Status: "starting" | "healthy" | "unhealthy"; FailingStreak: number; Log: { ExitCode: number; Output: string }[] };
}

export interface DockerApiServerOptions {
  /** containers by name */
  containers: Record<string, { id?: string; state: ContainerStateFixture }>;
  /** listen on 127.0.0.1 instead of a unix socket */
  tcp?: boolean;
  /** wait this long before each answer (a slow daemon) */
  delayMs?: number;
  /** answer every request with this status and Docker's JSON error body (a daemon in trouble) */
  failure?: { status: number; message: string };
}

export interface DockerApiServer {
  /** the value for a monitor's docker_host: unix:///…/docker.sock or tcp://127.0.0.1:port */
  dockerHost: string;
  socketPath: string | null;
  port: number | null;
  /** request paths received, in order */
  requests: string[];
  stop(): Promise<void>;
}

/** A running container's state, with a health check when `health` is given. */
export function running(health?: "starting" | "healthy" | "unhealthy"): ContainerStateFixture {
  const state: ContainerStateFixture = { Status: "running", Running: true, ExitCode: 0 };
  if (health) {
    const failing = health === "unhealthy";
    state.Health = { Status: health, FailingStreak: failing ? 3 : 0, Log: failing ? [{ ExitCode: 1, Output: "curl: (7) Failed to connect to localhost port 8080: Connection refused\n" }] : [] };
  }
  return state;
}

/** @example const docker = await startDockerApiServer({ containers: { web: { state: running() } } }); */
export async function startDockerApiServer(o: DockerApiServerOptions): Promise<DockerApiServer> {
  const requests: string[] = [];
  const dir = o.tcp ? null : mkdtempSync(join(tmpdir(), "vigil-docker-"));
  const socketPath = dir ? join(dir, "docker.sock") : null;
  const error = (status: number, message: string) => Response.json({ message }, { status });
  const fetch = async (req: Request) => {
    const url = new URL(req.url);
    requests.push(url.pathname);
    if (o.delayMs) await Bun.sleep(o.delayMs);
    if (o.failure) return error(o.failure.status, o.failure.message);
    const m = /^(?:\/v\d+\.\d+)?\/containers\/([^/]+)\/json$/.exec(url.pathname);
    if (!m || req.method !== "GET") return error(404, "page not found");
    const wanted = decodeURIComponent(m[1]);
    const found = Object.entries(o.containers).find(([name, c]) => name === wanted || (c.id !== undefined && c.id.startsWith(wanted)));
    if (!found) return error(404, `No such container: ${wanted}`);
    const [name, c] = found;
    return Response.json({ Id: c.id ?? `${name}-id`, Name: `/${name}`, State: c.state, Config: { Image: "test/image:latest" } });
  };
  const server = socketPath ? Bun.serve({ unix: socketPath, fetch }) : Bun.serve({ hostname: "127.0.0.1", port: 0, fetch });
  const port = socketPath ? null : (server.port as number);
  return {
    dockerHost: socketPath ? `unix://${socketPath}` : `tcp://127.0.0.1:${port}`,
    socketPath,
    port,
    requests,
    stop: async () => {
      await server.stop(true);
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
