/**
 * DNS probe: asks `dns_resolver` (or the system's first nameserver, for an account that may reach
 * private targets) for `dns_record_type` records of the target name and compares the answers with
 * `dns_expected_answer` (docs/monitors.md "Up, degraded and down").
 */
import { emptyResult, failed, type CheckResult } from "../domain/check-result.ts";
import { latencyReason } from "../domain/cert-expiry.ts";
import type { Answer } from "dns-packet";
import { elapsedMs, startDeadline } from "../net/deadline.ts";
import { buildQuery, parseResolver, queryDns, systemResolver, type Resolver } from "./dns-transport.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { resolveHost } from "../net/resolve-host.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { type Probe } from "./types.ts";

/** One answer as text: MX as "10 mail.example.com", TXT strings joined, names without trailing dot. */
export function formatAnswer(a: Answer): string {
  const d = a.data as unknown;
  switch (a.type) {
    case "MX": {
      const mx = d as { preference?: number; exchange?: string };
      return `${mx.preference ?? 0} ${String(mx.exchange ?? "").replace(/\.$/, "")}`;
    }
    case "TXT": {
      const parts = Array.isArray(d) ? d : [d];
      return parts.map((p) => (Buffer.isBuffer(p) ? p.toString("utf8") : String(p))).join("");
    }
    case "CNAME": case "NS": return String(d).replace(/\.$/, "");
    default: return String(d);
  }
}

/** Names compare case-insensitively and without the trailing dot; TXT compares as written. */
export function answerMatches(answer: string, expected: string, type: string): boolean {
  if (type === "TXT") return answer === expected.trim();
  const norm = (s: string) => s.trim().toLowerCase().replace(/\.$/, "").replace(/\s+/g, " ");
  return norm(answer) === norm(expected);
}

export const dnsProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const type = m.dns_record_type ?? "A";
  const name = (m.target ?? "").trim().replace(/\.$/, "");
  const deadline = startDeadline(m.timeout_ms, ctx.signal, "dns_timeout");
  let server: Resolver | null = null;
  const observed: Partial<CheckResult> = {};
  try {
    if (!name) throw new ProbeFailure("dns_error", "the target has no host name to query");
    if (m.dns_resolver) {
      const chosen = parseResolver(m.dns_resolver);
      const judged = await resolveHost(chosen.host, deadline, ctx.blockPrivateTargets === true);
      server = { host: judged.ip, port: chosen.port };
    } else if (ctx.blockPrivateTargets === true) {
      // this machine's resolver may answer for the private network's names (README "Security")
      throw new ProbeFailure("target_blocked", "dns_resolver is not set, and this machine's own resolver may answer for private names: set dns_resolver to a public resolver such as 1.1.1.1; private targets are blocked for this account");
    } else server = await systemResolver();
    observed.resolved_ip = server.host;
    const started = performance.now();
    const { response } = await queryDns(server, buildQuery(name, type), deadline);
    observed.latency_ms = elapsedMs(started);
    const rcode = response.rcode ?? "NOERROR";
    const at = `${server.host}:${server.port}`;
    if (rcode === "NXDOMAIN") throw new ProbeFailure("dns_nxdomain", `${name} does not exist (NXDOMAIN from ${at})`);
    if (rcode === "SERVFAIL") throw new ProbeFailure("dns_servfail", `resolver ${at} failed to answer for ${name} (SERVFAIL)`);
    if (rcode !== "NOERROR") throw new ProbeFailure("dns_error", `resolver ${at} answered ${rcode} for ${name} ${type}`);
    // CNAME chains ride along with A/AAAA answers; only records of the asked type count
    const answers = (response.answers ?? []).filter((a) => a.type === type).map(formatAnswer);
    observed.dns_answer = answers;
    if (answers.length === 0) throw new ProbeFailure("dns_no_answer", `no ${type} record for ${name} (from ${at})`);
    if (m.dns_expected_answer !== null && m.dns_expected_answer !== undefined && m.dns_expected_answer !== "") {
      if (!answers.some((a) => answerMatches(a, m.dns_expected_answer!, type))) {
        throw new ProbeFailure("dns_answer_mismatch", `expected ${type} ${JSON.stringify(m.dns_expected_answer)}, got ${answers.map((a) => JSON.stringify(a)).join(", ")}`);
      }
    }
    const slow = latencyReason(observed.latency_ms, m.api_max_latency_ms);
    return { ...emptyResult(checkedAt), ...observed, status: slow ? "degraded" : "up", degraded_reason: slow };
  } catch (err) {
    const f = toProbeFailure(err, server ? `${server.host}:${server.port}` : "resolver");
    return failed(checkedAt, f.code, f.message, { ...observed, ...f.extra });
  } finally {
    deadline.dispose();
  }
};
