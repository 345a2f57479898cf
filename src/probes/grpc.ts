/**
 * gRPC probe: one `grpc.health.v1.Health/Check` call to "host:port" for `grpc_service` ("" asks
 * about the server as a whole), in plaintext HTTP/2 or over TLS with `grpc_tls`. Up when the answer
 * is SERVING (README, gRPC monitors); degraded when slow, or over TLS when the certificate expires
 * within 14 days. The call is made on node:http2 over a socket we open to the address the
 * private-target guard judged, so the :authority and SNI carry the host name while the connection
 * goes to exactly that IP; the connection is closed after the check.
 */
import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from "node:http2";
import type net from "node:net";
import tls, { type TLSSocket } from "node:tls";
import { ProbeFailure } from "../domain/check-failure.ts";
import { emptyResult, failed, type CheckResult, type CheckTimings } from "../domain/check-result.ts";
import type { WatchedCertificate } from "../domain/cert-expiry.ts";
import { elapsedMs, sinceMs, startDeadline, type Deadline } from "../net/deadline.ts";
import { certErrorCode, toProbeFailure } from "../net/net-errors.ts";
import { judgePeerCertificate } from "../net/peer-certificate.ts";
import { resolveHost, splitHostPort } from "../net/resolve-host.ts";
import { judgedTlsOptions } from "../net/tls-options.ts";
import { decodeGrpcMessage, grpcStatusName, HEALTH_CHECK_PATH, healthCheckRequest, MAX_ANSWER_BYTES, readHealthCheckResponse, servingStatusName } from "./grpc-wire.ts";
import { degradedReasons } from "./http-request.ts";
import { connectTcp } from "./tcp.ts";
import type { Probe } from "./types.ts";

const USER_AGENT = "Vigil/0.1 (uptime monitor)";

/** Starts TLS on a connected socket, offering only h2 (gRPC runs on HTTP/2); the chain is judged by the caller. */
function startTls(socket: net.Socket, host: string, extraCa: string | undefined, deadline: Deadline, endpoint: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = tls.connect({ socket, ALPNProtocols: ["h2"], ...judgedTlsOptions(host, extraCa) });
    const abort = () => {
      secure.destroy();
      reject(deadline.failure(`during the TLS handshake with ${endpoint}`));
    };
    if (deadline.signal.aborted) return abort();
    deadline.signal.addEventListener("abort", abort, { once: true });
    secure.once("secureConnect", () => {
      deadline.signal.removeEventListener("abort", abort);
      resolve(secure);
    });
    secure.once("error", (err: Error & { code?: string }) => {
      deadline.signal.removeEventListener("abort", abort);
      secure.destroy();
      // TCP is already up: whatever ends the handshake (a reset, a plaintext reply) is a TLS failure
      reject(certErrorCode(err.code ?? "") ? err : new ProbeFailure("tls_error", `TLS handshake with ${endpoint} failed (${err.code ?? "error"}: ${err.message}); does the server speak TLS? (grpc_tls)`));
    });
  });
}

interface GrpcAnswer {
  httpStatus: number;
  contentType: string;
  /** from the trailers, or from the headers of a trailers-only answer */
  grpcStatus: string | undefined;
  grpcMessage: string;
  body: Buffer;
}

/** One unary call on `session`; resolves when the stream ends. `onHeaders` marks the first byte of the answer. */
function callHealthCheck(session: ClientHttp2Session, service: string, deadline: Deadline, timeoutMs: number, endpoint: string, onHeaders: () => void): Promise<GrpcAnswer> {
  return new Promise((resolve, reject) => {
    const fail = (err: unknown) => reject(err);
    // kept until the session is destroyed: a second error event with no listener would throw
    session.on("error", fail);
    const stream = session.request({
      ":method": "POST",
      ":path": HEALTH_CHECK_PATH,
      "content-type": "application/grpc",
      te: "trailers",
      // the server may stop working on the call once we have given up on it
      "grpc-timeout": `${Math.max(1, timeoutMs)}m`,
      "user-agent": USER_AGENT,
    });
    let headers: IncomingHttpHeaders | null = null;
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const abort = () => reject(deadline.failure(`waiting for the answer of ${endpoint}`));
    deadline.signal.addEventListener("abort", abort, { once: true });
    stream.on("response", (h) => {
      headers = h;
      onHeaders();
    });
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        stream.destroy();
        reject(new ProbeFailure("grpc_error", `${endpoint} sent more than ${MAX_ANSWER_BYTES} bytes, which is no health check answer`));
      } else chunks.push(chunk);
    });
    stream.on("error", fail);
    stream.on("close", () => {
      deadline.signal.removeEventListener("abort", abort);
      if (!headers) {
        const code = stream.rstCode ? ` (HTTP/2 stream reset, code ${stream.rstCode})` : "";
        return reject(new ProbeFailure("grpc_error", `${endpoint} closed the call without an answer${code}; is it a gRPC server, and does it expect TLS (grpc_tls)?`));
      }
      const h: IncomingHttpHeaders = headers;
      const grpcStatus = trailers["grpc-status"] ?? h["grpc-status"];
      const grpcMessage = trailers["grpc-message"] ?? h["grpc-message"];
      resolve({
        httpStatus: Number(h[":status"]),
        contentType: String(h["content-type"] ?? ""),
        grpcStatus: grpcStatus === undefined ? undefined : String(grpcStatus),
        grpcMessage: decodeGrpcMessage(grpcMessage === undefined ? undefined : String(grpcMessage)),
        body: Buffer.concat(chunks),
      });
    });
    stream.end(healthCheckRequest(service));
  });
}

/** Turns the answer into the check's verdict: null when SERVING, else the failure. */
function judgeAnswer(a: GrpcAnswer, endpoint: string, service: string): ProbeFailure | null {
  if (a.httpStatus !== 200) return new ProbeFailure("grpc_error", `${endpoint} answered HTTP ${a.httpStatus}, not a gRPC answer`);
  if (!/^application\/grpc/i.test(a.contentType)) {
    return new ProbeFailure("grpc_error", `${endpoint} answered with content type ${JSON.stringify(a.contentType)}, not application/grpc`);
  }
  if (a.grpcStatus === undefined) return new ProbeFailure("grpc_error", `${endpoint} ended the call without a grpc-status`);
  const code = Number(a.grpcStatus);
  if (code !== 0) {
    const name = Number.isInteger(code) ? grpcStatusName(code) : JSON.stringify(a.grpcStatus);
    return new ProbeFailure("grpc_error", `${endpoint} answered ${name}${a.grpcMessage ? `: ${a.grpcMessage}` : ""}`);
  }
  const read = readHealthCheckResponse(a.body);
  if ("problem" in read) return new ProbeFailure("grpc_error", `${endpoint}: ${read.problem}`);
  if (read.status === 1) return null;
  const what = service === "" ? `the server` : `service ${JSON.stringify(service)}`;
  return new ProbeFailure("grpc_not_serving", `${endpoint} reports ${what} as ${servingStatusName(read.status)}`);
}

/** HTTP/2 failures (a preface the server did not understand, a GOAWAY) mean the target does not speak gRPC. */
function grpcFailure(err: unknown, endpoint: string): ProbeFailure {
  const e = err as { code?: string; message?: string };
  if (!(err instanceof ProbeFailure) && typeof e?.code === "string" && e.code.startsWith("ERR_HTTP2")) {
    return new ProbeFailure("grpc_error", `the HTTP/2 exchange with ${endpoint} failed (${e.code}: ${e.message}); is it a gRPC server, and does it expect TLS (grpc_tls)?`);
  }
  return toProbeFailure(err, endpoint);
}

export const grpcProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const { host, port } = splitHostPort(m.target ?? "", m.port);
  const endpoint = `${host.includes(":") ? `[${host}]` : host}:${port ?? "?"}`;
  const blockPrivate = ctx.blockPrivateTargets === true || m.block_private_targets;
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  const observed: Partial<CheckResult> = {};
  let socket: net.Socket | null = null;
  let session: ClientHttp2Session | null = null;
  let watched: WatchedCertificate | null = null;
  try {
    if (!host || port === null || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ProbeFailure("connection_error", `target ${JSON.stringify(m.target)} needs a host and a port (1-65535)`);
    }
    const begun = performance.now();
    const target = await resolveHost(host, deadline, blockPrivate);
    observed.resolved_ip = target.ip;
    const timings: CheckTimings = { dns_ms: target.ip === target.host ? null : sinceMs(begun), connect_ms: null, tls_ms: null, ttfb_ms: null };
    observed.timings = timings;
    socket = await connectTcp(target, port, blockPrivate, deadline.signal, () => deadline.failure(`connecting to ${endpoint}`));
    timings.connect_ms = sinceMs(begun);
    if (m.grpc_tls) {
      const secure = await startTls(socket, target.host, ctx.extraCa, deadline, endpoint);
      socket = secure;
      timings.tls_ms = sinceMs(begun);
      const seen = judgePeerCertificate(secure, target.host, endpoint);
      watched = seen.watched;
      observed.ssl_not_after = watched?.notAfter ?? null;
      if (m.tls_verify !== false && seen.refusal) throw seen.refusal;
    }
    const authority = `${m.grpc_tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
    const connected = socket;
    session = http2.connect(authority, { createConnection: () => connected });
    const answer = await callHealthCheck(session, m.grpc_service ?? "", deadline, m.timeout_ms - sinceMs(begun), endpoint, () => (timings.ttfb_ms = sinceMs(begun)));
    const latency = elapsedMs(begun);
    observed.latency_ms = latency;
    const failure = judgeAnswer(answer, endpoint, m.grpc_service ?? "");
    if (failure) throw failure;
    // as every check with a certificate: degraded within the warning days (14 for grpc, which has
    // no ssl_expiry_warn_days), or when an expired one was accepted with tls_verify off
    const reasons = degradedReasons(m, latency, watched, ctx.now());
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = grpcFailure(err, endpoint);
    return failed(checkedAt, f.code, f.message, { ...observed, ...f.extra });
  } finally {
    session?.destroy();
    socket?.destroy();
    deadline.dispose();
  }
};
