/**
 * Domain probe (README "Domain monitors"): the registration expiry of a registrable domain name
 * through RDAP. Up while it lies beyond `domain_expiry_warn_days`, degraded within them, down
 * (domain_expired) once passed; the expiry goes on the check as `ssl_not_after`.
 */
import { domainToASCII } from "node:url";
import { emptyResult, failed } from "../domain/check-result.ts";
import { latencyReason } from "../domain/cert-expiry.ts";
import { daysLeft } from "../domain/expiry-stage.ts";
import { DAY_MS } from "../domain/uptime.ts";
import { ProbeFailure } from "../domain/check-failure.ts";
import { elapsedMs, startDeadline } from "../net/deadline.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { IANA_RDAP_BOOTSTRAP, registrationExpiry } from "./rdap-lookup.ts";
import { type Probe } from "./types.ts";

/** letters, digits and inner hyphens per label, two labels at least: all that may reach an RDAP path */
const DOMAIN_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The target as RDAP wants it: lower case, ASCII (IDNs in punycode), no trailing dot; null if it is no domain name. */
export function rdapDomainName(target: string | null): string | null {
  const ascii = domainToASCII((target ?? "").trim().replace(/\.$/, "")).toLowerCase();
  return DOMAIN_NAME.test(ascii) ? ascii : null;
}

export const domainProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  try {
    const domain = rdapDomainName(m.target);
    if (!domain) throw new ProbeFailure("rdap_error", `target ${JSON.stringify(m.target)} is not a domain name`);
    const started = performance.now();
    const { expiresAt, fetched } = await registrationExpiry(domain, {
      bootstrapUrl: ctx.rdapBootstrapUrl ?? IANA_RDAP_BOOTSTRAP,
      now: ctx.now,
      extraCa: ctx.extraCa,
      deadline,
    });
    // an answer from memory took no request: there is no latency to report
    const latency = fetched ? elapsedMs(started) : null;
    const at = new Date(expiresAt).toISOString();
    const observed = { latency_ms: latency, ssl_not_after: expiresAt };
    const now = ctx.now();
    if (expiresAt <= now) return failed(checkedAt, "domain_expired", `the registration of ${domain} expired at ${at}`, observed);
    const warnDays = m.domain_expiry_warn_days;
    const left = daysLeft(expiresAt, now);
    const reasons = [
      expiresAt - now <= warnDays * DAY_MS ? `the registration of ${domain} expires in ${left} day${left === 1 ? "" : "s"} (${at}), within the ${warnDays}-day warning window` : null,
      latencyReason(latency, m.api_max_latency_ms),
    ].filter((r): r is string => r !== null);
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, m.target ?? "");
    return failed(checkedAt, f.code, f.message, f.extra);
  } finally {
    deadline.dispose();
  }
};
