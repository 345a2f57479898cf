/**
 * Certificate expiry rule shared by every check that sees a certificate (docs/monitors.md "Up,
 * degraded and down": degraded when the certificate expires within `ssl_expiry_warn_days`, default
 * 14; the certificate watched is the one of the chain that expires first).
 */
import { daysLeft } from "./expiry-stage.ts";
import { DEFAULT_SSL_EXPIRY_WARN_DAYS } from "./monitor.ts";
import { DAY_MS } from "./uptime.ts";

export type ExpiryVerdict =
  | { kind: "ok" }
  | { kind: "expiring"; reason: string }
  | { kind: "expired"; reason: string };

/** The certificate of a chain that expires first, and how a message names it. */
export interface WatchedCertificate {
  notAfter: number;
  /** "certificate" for the leaf; an intermediate is named with its subject */
  name: string;
}

export function certExpiryVerdict(notAfter: number, now: number, warnDays: number | null, name = "certificate"): ExpiryVerdict {
  const days = warnDays ?? DEFAULT_SSL_EXPIRY_WARN_DAYS;
  const at = new Date(notAfter).toISOString();
  if (notAfter <= now) return { kind: "expired", reason: `${name} expired at ${at}` };
  if (notAfter - now <= days * DAY_MS) {
    const left = daysLeft(notAfter, now);
    return { kind: "expiring", reason: `${name} expires in ${left} day${left === 1 ? "" : "s"} (${at}), within the ${days}-day warning window` };
  }
  return { kind: "ok" };
}

/** Latency rule (docs/monitors.md "Up, degraded and down": degraded above api_max_latency_ms). */
export function latencyReason(latencyMs: number | null, maxMs: number | null): string | null {
  if (maxMs === null || maxMs === undefined || latencyMs === null) return null;
  return latencyMs > maxMs ? `latency ${latencyMs} ms above ${maxMs} ms` : null;
}
