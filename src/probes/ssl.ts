/**
 * SSL probe: a TLS handshake with SNI to host[:port] (default 443, or an https URL), validating the
 * chain against system roots + --extra-ca. The handshake itself never rejects, so the chain's
 * earliest notAfter is recorded even for an untrusted or expired certificate; judgePeerCertificate
 * then judges it.
 */
import { emptyResult, failed, type CheckResult, type CheckTimings } from "../domain/check-result.ts";
import { certExpiryVerdict, latencyReason } from "../domain/cert-expiry.ts";
import { elapsedMs, sinceMs, startDeadline } from "../net/deadline.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { judgePeerCertificate } from "../net/peer-certificate.ts";
import { resolveHost, splitHostPort } from "../net/resolve-host.ts";
import { connectTls } from "../net/tls-connect.ts";
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
    const socket = await connectTls({
      target, port, endpoint, extraCa: ctx.extraCa, blockPrivate: ctx.blockPrivateTargets === true, signal: deadline.signal,
      onAbort: () => deadline.failure(`during the TLS handshake with ${endpoint}`),
      onConnect: () => (timings.connect_ms = sinceMs(begun)),
    });
    const latency = elapsedMs(started);
    timings.tls_ms = sinceMs(begun);
    observed.timings = timings;
    const seen = judgePeerCertificate(socket, target.host, endpoint);
    socket.destroy();
    Object.assign(observed, { latency_ms: latency, ssl_not_after: seen.watched?.notAfter ?? null, ssl_issuer: seen.issuer });
    if (!seen.watched) throw new ProbeFailure("tls_error", `${endpoint} sent no certificate`);
    // expiry is what an ssl monitor watches, so it is judged even with tls_verify off
    const expiry = certExpiryVerdict(seen.watched.notAfter, ctx.now(), m.ssl_expiry_warn_days, seen.watched.name);
    if (expiry.kind === "expired") throw new ProbeFailure("certificate_expired", `${expiry.reason} (${endpoint})`);
    if (m.tls_verify !== false && seen.refusal) throw seen.refusal;
    const reasons = [expiry.kind === "expiring" ? expiry.reason : null, latencyReason(latency, m.api_max_latency_ms)].filter((r): r is string => r !== null);
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, endpoint);
    return failed(checkedAt, f.code, f.message, { ...observed, ...f.extra });
  } finally {
    deadline.dispose();
  }
};
