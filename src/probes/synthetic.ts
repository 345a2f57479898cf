/**
 * Multi-step synthetic scenario (`synthetic_steps_json`): steps run in order, each may extract
 * variables for later steps and carries its own expected codes and JSON assertions. The first
 * failing step ends the check as down; the trace records every step that ran, secrets masked.
 */
import { emptyResult, failed, type CheckErrorCode, type CheckResult } from "../domain/check-result.ts";
import type { ProbeMonitor, SyntheticStep } from "../domain/monitor.ts";
import type { AssertionOutcome } from "../domain/json-assertions.ts";
import type { WatchedCertificate } from "../domain/cert-expiry.ts";
import { elapsedMs, startDeadline } from "../net/deadline.ts";
import { displayUrl, httpExchange } from "../net/http-exchange.ts";
import { bodyFor, degradedReasons, requestHeaders, targetUrl } from "./http-request.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { credentialHeaderNames, maskBody, maskHeaders, maskText, secretsOf } from "./request-auth.ts";
import { checkResponse, partialBody } from "./response-checks.ts";
import { extractAll, substitute, substituteHeaders, substituteUrl, UnknownVariable, type Vars } from "./synthetic-vars.ts";
import { matchOnThisThread } from "../domain/user-patterns.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { cutUtf8, MAX_STEP_BODY_BYTES, STEP_BODY_REASON, withCutReason } from "../domain/trace-bounds.ts";
import type { Probe, ProbeContext } from "./types.ts";

/** Bytes of response body kept in the trace under `truncated`. */
export const TRACE_BODY_LIMIT = 1024;

export interface StepTrace {
  name: string;
  request: { method: string; url: string; headers: Record<string, string> };
  status: number | null;
  latency_ms: number;
  assertions: AssertionOutcome[];
  error: string | null;
  body?: string;
  /** the body was cut to a limit (README "Security", Limits); the trace's `reason` says which */
  body_truncated?: true;
}

/**
 * The step's body as its trace keeps it. `full` is masked before it is cut to MAX_STEP_BODY_BYTES,
 * so a secret across the cut is hidden rather than left in part.
 */
function traceBody(body: Buffer, bodyText: string, detail: ProbeMonitor["synthetic_trace_body_detail"], secrets: string[]): { text: string; cut: boolean } | undefined {
  if (detail === "full") {
    const masked = maskText(bodyText, secrets);
    const text = cutUtf8(masked, MAX_STEP_BODY_BYTES);
    return { text, cut: text.length < masked.length };
  }
  if (detail === "truncated") return { text: maskText(body.subarray(0, TRACE_BODY_LIMIT).toString("utf8"), secrets), cut: false };
  return undefined;
}

function stepUrl(step: SyntheticStep, vars: Vars, m: ProbeMonitor): URL {
  const raw = substituteUrl(step.url ?? "", vars);
  try {
    // relative step URLs are taken against the monitor's target, so scenarios can say "/login"
    return new URL(raw, m.target ? targetUrl(m.target, m.port) : undefined);
  } catch {
    throw new ProbeFailure("synthetic_step_failed", `URL ${JSON.stringify(raw)} is not valid`);
  }
}

/** Extracted values shorter than this stay readable in the trace: ids and counts, not credentials. */
export const MIN_HIDDEN_VALUE = 8;

/**
 * Values a scenario extracted (a session token, a CSRF token) are as sensitive as the monitor's own
 * secrets once extracted: the trace and the message hide them everywhere, the response body they
 * were read from included, not only in the later header that carries them.
 */
function hideExtracted(result: CheckResult, vars: Vars): CheckResult {
  const values = [...new Set(Object.values(vars))].filter((v) => v.length >= MIN_HIDDEN_VALUE).sort((a, b) => b.length - a.length);
  if (values.length === 0) return result;
  const trace = result.synthetic_trace_json === null ? null : JSON.parse(maskText(JSON.stringify(result.synthetic_trace_json), values));
  return { ...result, synthetic_trace_json: trace, error_message: result.error_message === null ? null : maskText(result.error_message, values) };
}

export const syntheticProbe: Probe = async (m, ctx) => {
  const vars: Vars = {};
  return hideExtracted(await runScenario(m, ctx, vars), vars);
};

async function runScenario(m: ProbeMonitor, ctx: ProbeContext, vars: Vars): Promise<CheckResult> {
  const checkedAt = ctx.now();
  const secrets = secretsOf(m);
  const sensitive = credentialHeaderNames(m);
  const patterns = ctx.patterns ?? matchOnThisThread();
  const steps = m.synthetic_steps_json?.steps ?? [];
  const trace: StepTrace[] = [];
  const observed: Partial<CheckResult> = { synthetic_trace_json: { steps: trace } };
  let sslCert = null as WatchedCertificate | null;
  if (steps.length === 0) return failed(checkedAt, "synthetic_step_failed", "the scenario has no steps", observed);
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  const started = performance.now();
  try {
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      const name = step.name?.trim() || `step ${i + 1}`;
      const method = (step.method ?? "GET").toUpperCase();
      const stepStarted = performance.now();
      const entry: StepTrace = { name, request: { method, url: maskText(step.url ?? "", secrets), headers: {} }, status: null, latency_ms: 0, assertions: [], error: null };
      trace.push(entry);
      const stop = (code: CheckErrorCode, message: string, extra: Partial<CheckResult> = {}) => {
        entry.error = maskText(message, secrets);
        entry.latency_ms = elapsedMs(stepStarted);
        return failed(checkedAt, code, maskText(`step ${JSON.stringify(name)} failed: ${message}`, secrets), { ...observed, ...extra, latency_ms: elapsedMs(started) });
      };
      let url: URL;
      let headers: Record<string, string>;
      let body: string | null;
      try {
        url = stepUrl(step, vars, m);
        body = bodyFor(method, step.body === undefined ? null : substitute(step.body, vars));
        headers = requestHeaders(m, url, substituteHeaders(step.headers, vars), body);
      } catch (err) {
        if (err instanceof UnknownVariable || err instanceof ProbeFailure) return stop("synthetic_step_failed", err.message);
        throw err;
      }
      entry.request = { method, url: maskText(displayUrl(url), secrets), headers: maskHeaders(headers, sensitive, secrets) };
      let res;
      try {
        res = await httpExchange(
          { method, url, headers, body },
          { deadline, tlsVerify: m.tls_verify !== false, extraCa: ctx.extraCa, blockPrivate: ctx.blockPrivateTargets, credentialHeaders: sensitive, followRedirects: m.follow_redirects !== false },
        );
      } catch (err) {
        const f = toProbeFailure(err, url.host);
        return stop(f.code, f.message, f.extra);
      }
      entry.latency_ms = elapsedMs(stepStarted);
      entry.status = res.status;
      const bodyText = res.body.toString("utf8");
      const kept = traceBody(res.body, bodyText, m.synthetic_trace_body_detail, secrets);
      if (kept !== undefined) entry.body = kept.text;
      if (kept?.cut) {
        entry.body_truncated = true;
        observed.synthetic_trace_json = withCutReason({ steps: trace }, STEP_BODY_REASON);
      }
      // the first step's address and certificate describe the monitored site
      if (i === 0 || (sslCert === null && res.sslCert !== null)) {
        sslCert = res.sslCert;
        Object.assign(observed, { ssl_not_after: sslCert?.notAfter ?? null, ssl_issuer: res.sslIssuer });
      }
      if (i === 0) Object.assign(observed, { resolved_ip: res.resolvedIp, timings: res.timings });
      observed.http_code = res.status;
      const verdict = await checkResponse({ status: res.status, headers: res.headers, bodyText, partial: partialBody(res) }, { expectedCodes: step.expected_http_codes, assertions: step.assertions }, { secrets, patterns, signal: deadline.signal });
      entry.assertions = verdict.assertions;
      if (verdict.failure) return stop(verdict.failure.code, verdict.failure.message);
      // extraction reads the response with the monitor's secrets masked: a target that echoes the
      // request back must not let a scenario carry a credential, whole or in pieces, into a later URL
      const readable = { headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, maskText(v, secrets)])), bodyText: maskBody(bodyText, secrets, partialBody(res) !== null) };
      const got = await extractAll(step.extract ?? [], readable, secrets, patterns, deadline.signal);
      if ("error" in got) return stop("synthetic_step_failed", got.error);
      Object.assign(vars, got.values);
    }
    const latency = elapsedMs(started);
    const reasons = degradedReasons(m, latency, sslCert, ctx.now());
    return { ...emptyResult(checkedAt), ...observed, latency_ms: latency, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, m.target ?? "scenario");
    return failed(checkedAt, f.code, maskText(f.message, secrets), { ...observed, ...f.extra });
  } finally {
    deadline.dispose();
  }
}
