/**
 * TCP probe: a connect to "host:port" (or host + monitor.port; IPv6 as [::1]:port) within
 * timeout_ms. Up when the handshake completes, even when the server resets the connection at once
 * (reported as a failed connect when the reset comes first); the connection is closed at once.
 */
import net from "node:net";
import { emptyResult, failed } from "../domain/check-result.ts";
import { latencyReason } from "../domain/cert-expiry.ts";
import { elapsedMs, sinceMs, startDeadline } from "../net/deadline.ts";
import { resetAfterAccept, toProbeFailure } from "../net/net-errors.ts";
import { guardSocket, resolveHost, splitHostPort, type ResolvedHost } from "../net/resolve-host.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { type Probe } from "./types.ts";

/** Opens a TCP connection to the judged address of `target`, resolving once connected; the caller owns the socket. */
export function connectTcp(target: ResolvedHost, port: number, blockPrivate: boolean, signal: AbortSignal, onAbort: () => Error): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.ip, port });
    guardSocket(socket, target.host, blockPrivate);
    const abort = () => {
      socket.destroy();
      reject(onAbort());
    };
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    socket.once("connect", () => {
      signal.removeEventListener("abort", abort);
      resolve(socket);
    });
    socket.once("error", (err) => {
      signal.removeEventListener("abort", abort);
      socket.destroy();
      reject(err);
    });
  });
}

export const tcpProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const { host, port } = splitHostPort(m.target ?? "", m.port);
  const endpoint = `${host.includes(":") ? `[${host}]` : host}:${port ?? "?"}`;
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  let resolvedIp: string | null = null;
  try {
    if (!host || port === null || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ProbeFailure("connection_error", `target ${JSON.stringify(m.target)} needs a host and a port (1-65535)`);
    }
    const begun = performance.now();
    const target = await resolveHost(host, deadline, ctx.blockPrivateTargets);
    resolvedIp = target.ip;
    const dnsMs = target.ip === target.host ? null : sinceMs(begun);
    const started = performance.now();
    const socket = await connectTcp(target, port, ctx.blockPrivateTargets === true, deadline.signal, () => deadline.failure(`connecting to ${endpoint}`)).catch((err: unknown) => {
      if (resetAfterAccept(err)) return null;
      throw err;
    });
    const latency = elapsedMs(started);
    socket?.destroy();
    const slow = latencyReason(latency, m.api_max_latency_ms);
    const timings = { dns_ms: dnsMs, connect_ms: sinceMs(begun), tls_ms: null, ttfb_ms: null };
    return { ...emptyResult(checkedAt), latency_ms: latency, resolved_ip: target.ip, timings, status: slow ? "degraded" : "up", degraded_reason: slow };
  } catch (err) {
    const f = toProbeFailure(err, endpoint);
    return failed(checkedAt, f.code, f.message, { resolved_ip: resolvedIp, ...f.extra });
  } finally {
    deadline.dispose();
  }
};
