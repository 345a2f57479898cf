/**
 * Docker probe: the Engine API's `GET /containers/{target}/json` over the daemon's unix socket or
 * over TCP (`docker_host`), judged on the container's State (README "Docker container monitors"):
 * up when it runs and, if it has a health check, is healthy; degraded while the health check is
 * starting; down when it is missing, stopped, paused, restarting or unhealthy.
 *
 * A unix socket is read with fetch's `unix` option; a TCP host goes through http-exchange, so it is
 * resolved, judged by the private-target rule and connected to at the judged address like any
 * other target. The socket is a local service, so that rule refuses it as well.
 */
import { ProbeFailure } from "../domain/check-failure.ts";
import { DEFAULT_DOCKER_HOST } from "../domain/monitor-targets.ts";
import { emptyResult, failed, type CheckResult, type CheckTimings } from "../domain/check-result.ts";
import { latencyReason } from "../domain/cert-expiry.ts";
import { elapsedMs, startDeadline, type Deadline } from "../net/deadline.ts";
import { DEFAULT_USER_AGENT, httpExchange } from "../net/http-exchange.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import type { Probe } from "./types.ts";

/** Docker's own default port for an unencrypted TCP socket (dockerd -H tcp://0.0.0.0). */
const DOCKER_TCP_PORT = 2375;
/** An inspect answer is a few KiB; anything far larger is not the Engine API. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Characters of a health check's output quoted in the error. */
const HEALTH_OUTPUT_CHARS = 200;

export type DockerEndpoint = { kind: "unix"; path: string } | { kind: "http"; base: URL };

/** `docker_host` (null: the local socket) as the place to send the request. */
export function dockerEndpoint(dockerHost: string | null): DockerEndpoint {
  const raw = dockerHost?.trim() || DEFAULT_DOCKER_HOST;
  if (raw.startsWith("unix://")) {
    const path = raw.slice("unix://".length);
    if (!path.startsWith("/")) throw new ProbeFailure("docker_error", `docker_host ${JSON.stringify(raw)} must name an absolute socket path (unix:///var/run/docker.sock)`);
    return { kind: "unix", path };
  }
  const tcp = raw.startsWith("tcp://");
  let base: URL;
  try {
    base = new URL(tcp ? `http://${raw.slice("tcp://".length)}` : raw);
  } catch {
    throw new ProbeFailure("docker_error", `docker_host ${JSON.stringify(raw)} is not unix:///path, tcp://host:port or http://host:port`);
  }
  if (base.protocol !== "http:") throw new ProbeFailure("docker_error", `docker_host ${JSON.stringify(raw)} is not unix:///path, tcp://host:port or http://host:port`);
  if (tcp && base.port === "") base.port = String(DOCKER_TCP_PORT);
  return { kind: "http", base };
}

function describeEndpoint(ep: DockerEndpoint): string {
  return ep.kind === "unix" ? ep.path : ep.base.host;
}

interface ApiAnswer {
  status: number;
  body: string;
  resolvedIp: string | null;
  /** the connection's moments; null over the unix socket, where fetch does not tell them */
  timings: CheckTimings | null;
}

/** The body as text, at most `cap` bytes (the rest is dropped: it cannot be the answer we want). */
async function cappedText(res: Response, cap: number): Promise<string> {
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= cap) break;
  }
  return Buffer.concat(chunks).subarray(0, cap).toString("utf8");
}

/** The unix socket's own failures, in words a person can act on; all are docker_error. */
function socketFailure(err: unknown, path: string): ProbeFailure {
  const code = (err as { code?: string }).code ?? "";
  switch (code) {
    case "ENOENT": return new ProbeFailure("docker_error", `no Docker socket at ${path} (ENOENT): is Docker running on this host, and is the socket mounted where Vigil runs?`);
    case "EACCES": case "EPERM": return new ProbeFailure("docker_error", `no permission to open the Docker socket ${path} (${code}): run Vigil as a user of the docker group`);
    case "ECONNREFUSED": return new ProbeFailure("docker_error", `nothing answers on ${path} (ECONNREFUSED): it is not a listening socket; is Docker running?`);
  }
  return new ProbeFailure("docker_error", `could not reach the Docker API on ${path} (${code || (err as Error)?.message || "error"})`);
}

async function askUnix(path: string, apiPath: string, deadline: Deadline): Promise<ApiAnswer> {
  try {
    // keepalive false: the connection is closed after the check, not pooled for the next one
    const res = await fetch(`http://localhost${apiPath}`, { unix: path, keepalive: false, signal: deadline.signal, headers: { "user-agent": DEFAULT_USER_AGENT } });
    return { status: res.status, body: await cappedText(res, MAX_ANSWER_BYTES), resolvedIp: null, timings: null };
  } catch (err) {
    if (deadline.signal.aborted) throw deadline.failure(`waiting for the Docker API on ${path}`);
    throw socketFailure(err, path);
  }
}

async function askHttp(base: URL, apiPath: string, deadline: Deadline, extraCa: string | undefined, blockPrivate: boolean): Promise<ApiAnswer> {
  const res = await httpExchange(
    { method: "GET", url: new URL(apiPath, base), headers: {}, body: null },
    { deadline, tlsVerify: true, extraCa, blockPrivate, credentialHeaders: [], followRedirects: false, maxBodyBytes: MAX_ANSWER_BYTES },
  );
  return { status: res.status, body: res.body.toString("utf8"), resolvedIp: res.resolvedIp, timings: res.timings };
}

/** The part of the Engine API's ContainerState that the verdict reads. */
interface ContainerState {
  Status?: string;
  Running?: boolean;
  Paused?: boolean;
  Restarting?: boolean;
  OOMKilled?: boolean;
  ExitCode?: number;
  Error?: string;
  Health?: { Status?: string; FailingStreak?: number; Log?: { ExitCode?: number; Output?: string }[] | null } | null;
}

type Verdict = { kind: "up"; degradedReason: string | null } | { kind: "down"; failure: ProbeFailure };

function stateWords(s: ContainerState): string {
  const status = s.Status || (s.Paused ? "paused" : s.Restarting ? "restarting" : "not running");
  const exited = status === "exited" || status === "dead" ? ` (code ${s.ExitCode ?? "?"})` : "";
  const oom = s.OOMKilled ? ", killed for lack of memory" : "";
  const error = s.Error ? `: ${s.Error}` : "";
  return `${status}${exited}${oom}${error}`;
}

/**
 * Running means serving: a paused container has Running true but answers nothing, and a restarting
 * one is in a crash loop, so both are not running here.
 */
export function containerVerdict(name: string, s: ContainerState): Verdict {
  if (!s.Running || s.Paused || s.Restarting) {
    return { kind: "down", failure: new ProbeFailure("container_not_running", `container ${name} is ${stateWords(s)}`) };
  }
  const health = s.Health?.Status;
  if (health === "unhealthy") {
    const last = s.Health?.Log?.at(-1);
    const output = last?.Output?.trim() ? `: ${JSON.stringify(last.Output.trim().slice(0, HEALTH_OUTPUT_CHARS))}` : "";
    const streak = s.Health?.FailingStreak ? `${s.Health.FailingStreak} failed health checks in a row` : "its health check fails";
    const lastWords = last ? `; the last exited ${last.ExitCode ?? "?"}${output}` : "";
    return { kind: "down", failure: new ProbeFailure("container_unhealthy", `container ${name} is unhealthy (${streak}${lastWords})`) };
  }
  if (health === "starting") return { kind: "up", degradedReason: `container ${name} is running, its health check is still starting` };
  return { kind: "up", degradedReason: null };
}

function apiMessage(body: string): string | null {
  try {
    const m = (JSON.parse(body) as { message?: unknown }).message;
    return typeof m === "string" && m !== "" ? m : null;
  } catch {
    return null;
  }
}

export const dockerProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  const started = performance.now();
  const blockPrivate = ctx.blockPrivateTargets === true || m.block_private_targets === true;
  const observed: Partial<CheckResult> = {};
  let where = m.docker_host ?? DEFAULT_DOCKER_HOST;
  try {
    const ep = dockerEndpoint(m.docker_host);
    where = describeEndpoint(ep);
    const name = (m.target ?? "").trim().replace(/^\//, "");
    if (name === "") throw new ProbeFailure("docker_error", "the target names no container (a name or id)");
    if (ep.kind === "unix" && blockPrivate) {
      throw new ProbeFailure("target_blocked", `the Docker socket ${ep.path} is a local service; private targets are blocked for this account`);
    }
    const apiPath = `/containers/${encodeURIComponent(name)}/json`;
    const answer = ep.kind === "unix" ? await askUnix(ep.path, apiPath, deadline) : await askHttp(ep.base, apiPath, deadline, ctx.extraCa, blockPrivate);
    const latency = elapsedMs(started);
    Object.assign(observed, { latency_ms: latency, resolved_ip: answer.resolvedIp, timings: answer.timings });
    if (answer.status === 404) {
      throw new ProbeFailure("container_not_found", `${apiMessage(answer.body) ?? `no container ${name}`} (Docker API on ${where})`);
    }
    if (answer.status !== 200) {
      throw new ProbeFailure("docker_error", `the Docker API on ${where} answered ${answer.status}${apiMessage(answer.body) ? `: ${apiMessage(answer.body)}` : ""}`);
    }
    let state: ContainerState | undefined;
    try {
      state = (JSON.parse(answer.body) as { State?: ContainerState }).State;
    } catch {
      state = undefined;
    }
    if (!state || typeof state !== "object") throw new ProbeFailure("docker_error", `the answer from ${where} is not a Docker container inspection (no State)`);
    const verdict = containerVerdict(name, state);
    if (verdict.kind === "down") throw verdict.failure;
    const reasons = [verdict.degradedReason, latencyReason(latency, m.api_max_latency_ms)].filter((r): r is string => r !== null);
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, where);
    return failed(checkedAt, f.code, f.message, { ...observed, ...f.extra });
  } finally {
    deadline.dispose();
  }
};
