/**
 * SSL probe: a TLS handshake with SNI to host[:port] (default 443, or an https URL), validating the
 * chain against system roots + --extra-ca. The handshake itself never rejects, so the leaf's
 * notAfter is recorded even for an untrusted or expired certificate; we then judge it ourselves.
 */
import tls, { type TLSSocket } from "node:tls";
import { emptyResult, failed, type CheckResult, type CheckTimings } from "../domain/check-result.ts";
import { certExpiryVerdict, latencyReason } from "../domain/cert-expiry.ts";
import { elapsedMs, sinceMs, startDeadline } from "../net/deadline.ts";
import { certErrorCode, certFailure, toProbeFailure } from "../net/net-errors.ts";
import { guardSocket, resolveHost, splitHostPort } from "../net/resolve-host.ts";
import { certIssuer, certNotAfter, sniFor, trustedCas } from "../net/tls-options.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { type Probe } from "./types.ts";

/** "https://example.com:8443/x" or "example.com:8443" or "example.com" → host and port. */
export function sslEndpoint(target: string, portField: number | null): { host: string; port: number } {
  const t = target.trim();
  if (/^https?:\/\//i.test(t)) {
    const url = new URL(t);
    return { host: url.hostname.replace(/^\[|\]$/g, ""), port: portField ?? (url.port ? Number(url.port) : 443) };
  }
  const { host, port } = splitHostPort(t, portField);
  return { host, port: port ?? 443 };
}

/** `onConnect` is told when TCP is up, for the connection's timings. */
function handshake(ip: string, port: number, host: string, extraCa: string | undefined, blockPrivate: boolean, signal: AbortSignal, onAbort: () => Error, onConnect: () => void): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: ip, port, servername: sniFor(host), ca: trustedCas(extraCa), rejectUnauthorized: false });
    guardSocket(socket, host, blockPrivate);
    const abort = () => {
      socket.destroy();
      reject(onAbort());
    };
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    socket.once("secureConnect", () => {
      signal.removeEventListener("abort", abort);
      resolve(socket);
    });
    let tcpUp = false;
    socket.once("connect", () => {
      tcpUp = true;
      onConnect();
    });
    socket.once("error", (err: Error & { code?: string }) => {
      signal.removeEventListener("abort", abort);
      socket.destroy();
      // once TCP is up, anything that ends the exchange (a reset, a non-TLS reply) is a TLS failure
      reject(tcpUp && !(err instanceof ProbeFailure) && !certErrorCode(err.code ?? "") ? new ProbeFailure("tls_error", `TLS handshake with ${host}:${port} failed (${err.code ?? "error"}: ${err.message})`) : err);
    });
  });
}

/** Hostname check for IP targets without SNI is done by us, since no servername was sent. */
function identityError(socket: TLSSocket, host: string): string | null {
  const cert = socket.getPeerCertificate();
  const err = tls.checkServerIdentity(host, cert);
  return err ? (err as Error & { code?: string }).code ?? "ERR_TLS_CERT_ALTNAME_INVALID" : null;
}

export const sslProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  let endpoint = m.target ?? "";
  const observed: Partial<CheckResult> = {};
  try {
    let host: string, port: number;
    try {
      ({ host, port } = sslEndpoint(m.target ?? "", m.port));
    } catch {
      throw new ProbeFailure("tls_error", `target ${JSON.stringify(m.target)} is not host[:port] or an https URL`);
    }
    endpoint = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    const begun = performance.now();
    const target = await resolveHost(host, deadline, ctx.blockPrivateTargets);
    observed.resolved_ip = target.ip;
    const timings: CheckTimings = { dns_ms: target.ip === target.host ? null : sinceMs(begun), connect_ms: null, tls_ms: null, ttfb_ms: null };
    const started = performance.now();
    const socket = await handshake(target.ip, port, target.host, ctx.extraCa, ctx.blockPrivateTargets === true, deadline.signal, () => deadline.failure(`during the TLS handshake with ${endpoint}`), () => (timings.connect_ms = sinceMs(begun)));
    const latency = elapsedMs(started);
    timings.tls_ms = sinceMs(begun);
    observed.timings = timings;
    const peerCert = socket.getPeerCertificate();
    const notAfter = certNotAfter(peerCert);
    const authError = socket.authorized ? null : String(socket.authorizationError ?? "UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    const identity = identityError(socket, target.host);
    socket.destroy();
    Object.assign(observed, { latency_ms: latency, ssl_not_after: notAfter, ssl_issuer: certIssuer(peerCert) });
    if (notAfter === null) throw new ProbeFailure("tls_error", `${endpoint} sent no certificate`);
    // expiry is what an ssl monitor watches, so it is judged even with tls_verify off
    const expiry = certExpiryVerdict(notAfter, ctx.now(), m.ssl_expiry_warn_days);
    if (expiry.kind === "expired") throw new ProbeFailure("certificate_expired", `${expiry.reason} (${endpoint})`);
    if (m.tls_verify !== false) {
      const problem = authError ?? identity;
      if (problem) throw certFailure(problem, endpoint, target.host);
    }
    const reasons = [expiry.kind === "expiring" ? expiry.reason : null, latencyReason(latency, m.api_max_latency_ms)].filter((r): r is string => r !== null);
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, endpoint);
    return failed(checkedAt, f.code, f.message, { ...observed, ...f.extra });
  } finally {
    deadline.dispose();
  }
};
