/**
 * When a certificate or a domain registration close to expiry alerts (docs/notifications.md "Expiry
 * alerts"): once on entering the monitor's warn window, once more at 7 days left and once at 1 day
 * left; never twice for the same stage of the same expiry date, and afresh for a later date (the
 * certificate was renewed). An expiry already past alerts nothing here: the check is down then, and
 * `monitor.down` says so.
 */
import { DEFAULT_DOMAIN_EXPIRY_WARN_DAYS, DEFAULT_SSL_EXPIRY_WARN_DAYS } from "./monitor.ts";
import { DAY_MS } from "./uptime.ts";

/** 0: outside the warn window; 1: inside it; 2: 7 days or fewer left; 3: 1 day or fewer. */
export type ExpiryStage = 0 | 1 | 2 | 3;

/** What expires: a domain monitor watches its registration, every other type a certificate. */
export type ExpiryKind = "certificate" | "domain";

export const expiryKind = (monitorType: string): ExpiryKind => (monitorType === "domain" ? "domain" : "certificate");

/**
 * The monitor's warn window in days: `domain_expiry_warn_days` for a domain monitor (30 when
 * unset), `ssl_expiry_warn_days` for the others (14 when unset). Reads the domain field only when
 * the monitor has it.
 */
export function expiryWarnDays(m: { monitor_type: string; ssl_expiry_warn_days: number | null; domain_expiry_warn_days?: number | null }): number {
  if (m.monitor_type === "domain") return m.domain_expiry_warn_days ?? DEFAULT_DOMAIN_EXPIRY_WARN_DAYS;
  return m.ssl_expiry_warn_days ?? DEFAULT_SSL_EXPIRY_WARN_DAYS;
}

/** Whole days left, as the checks count them ("expires in 13 days" for 13.8 days): 0 in the last day. */
export function daysLeft(notAfter: number, now: number): number {
  return Math.floor((notAfter - now) / DAY_MS);
}

/** "13 days left", "1 day left", "less than a day left" */
export function daysLeftText(days: number): string {
  return days < 1 ? "less than a day left" : `${days} day${days === 1 ? "" : "s"} left`;
}

/**
 * The stage an expiry date is at `now`. The window is the check's own (remaining time ≤ warn days,
 * as the probes degrade); the 7- and 1-day stages (7 and 1 whole days left) come inside it, so a
 * window shorter than 7 days starts at its own length.
 */
export function expiryStage(notAfter: number, now: number, warnDays: number): ExpiryStage {
  if (notAfter <= now || notAfter - now > warnDays * DAY_MS) return 0;
  const left = daysLeft(notAfter, now);
  if (left <= 1) return 3;
  if (left <= 7) return 2;
  return 1;
}

export interface ExpiryMark {
  /** the expiry date last alerted about, or null before the first alert */
  notAfter: number | null;
  stage: number;
}

/**
 * Whether an expiry seen by a check alerts, and the mark to keep if it does: a later date than the
 * one alerted about starts afresh (a renewal); the same or an earlier one (another region still
 * served the old certificate) alerts only for a stage not yet alerted, and the later date is kept,
 * so two certificates served in turn do not alert on every turn.
 */
export function nextExpiryMark(last: ExpiryMark, seen: { notAfter: number; stage: ExpiryStage }): ExpiryMark | null {
  if (seen.stage === 0) return null;
  if (last.notAfter === null || seen.notAfter > last.notAfter) return { notAfter: seen.notAfter, stage: seen.stage };
  return seen.stage > last.stage ? { notAfter: last.notAfter, stage: seen.stage } : null;
}

/** "2026-12-01 08:00 UTC" */
export function expiryDateText(notAfter: number): string {
  return new Date(notAfter).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/** "certificate expires on 2026-12-01 08:00 UTC (10 days left)": a timeline event's reason. */
export function expiryReason(kind: ExpiryKind, notAfter: number, now: number): string {
  return `${kind === "domain" ? "domain registration" : "certificate"} expires on ${expiryDateText(notAfter)} (${daysLeftText(daysLeft(notAfter, now))})`;
}
