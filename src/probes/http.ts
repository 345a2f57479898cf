/**
 * HTTP(S) probe (issue 4): one request with the monitor's method, headers, body and auth, checked
 * against expected codes, keyword, content type, body text and JSON assertions; degraded on
 * latency above api_max_latency_ms or a certificate inside the expiry warning window.
 */
import { failed, emptyResult, type CheckResult } from "../domain/check-result.ts";
import type { ProbeMonitor } from "../domain/monitor.ts";
import { elapsedMs, startDeadline } from "../net/deadline.ts";
import { displayUrl, httpExchange } from "../net/http-exchange.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { matchOnThisThread } from "../domain/user-patterns.ts";
import { credentialHeaderNames, maskText, secretsOf } from "./request-auth.ts";
import { bodyFor, degradedReasons, requestHeaders, targetUrl } from "./http-request.ts";
import { checkResponse, partialBody } from "./response-checks.ts";
import { syntheticProbe } from "./synthetic.ts";
import type { Probe, ProbeContext } from "./types.ts";

async function plainHttp(m: ProbeMonitor, ctx: ProbeContext): Promise<CheckResult> {
  const checkedAt = ctx.now();
  const secrets = secretsOf(m);
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  const started = performance.now();
  let where = m.target ?? "";
  try {
    const url = targetUrl(m.target, m.port);
    where = url.host;
    const method = m.method ?? "GET";
    const body = bodyFor(method, m.api_body);
    const res = await httpExchange(
      { method, url, headers: requestHeaders(m, url, {}, body), body },
      {
        deadline,
        tlsVerify: m.tls_verify !== false,
        extraCa: ctx.extraCa,
        blockPrivate: ctx.blockPrivateTargets,
        credentialHeaders: credentialHeaderNames(m),
        followRedirects: m.follow_redirects !== false,
      },
    );
    const latency = elapsedMs(started);
    const observed: Partial<CheckResult> = { latency_ms: latency, http_code: res.status, resolved_ip: res.resolvedIp, ssl_not_after: res.sslCert?.notAfter ?? null, ssl_issuer: res.sslIssuer, timings: res.timings };
    const verdict = await checkResponse(
      { status: res.status, headers: res.headers, bodyText: res.body.toString("utf8"), partial: partialBody(res) },
      {
        expectedCodes: m.expected_http_codes,
        keyword: m.keyword,
        contentType: m.api_expected_content_type,
        bodyContains: m.api_expected_body_contains,
        assertions: m.api_json_assertions_json,
      },
      { secrets, patterns: ctx.patterns ?? matchOnThisThread(), signal: deadline.signal },
    );
    if (verdict.failure) {
      const via = res.redirects > 0 ? ` (after ${res.redirects} redirect(s) to ${displayUrl(res.finalUrl)})` : "";
      return failed(checkedAt, verdict.failure.code, maskText(verdict.failure.message + via, secrets), observed);
    }
    const reasons = degradedReasons(m, latency, res.sslCert, ctx.now());
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, where);
    return failed(checkedAt, f.code, maskText(f.message, secrets), f.extra);
  } finally {
    deadline.dispose();
  }
}

/** A monitor with synthetic mode on runs its scenario instead of the single request. */
export const httpProbe: Probe = (m, ctx) => (m.synthetic_enabled && m.synthetic_steps_json ? syntheticProbe(m, ctx) : plainHttp(m, ctx));
