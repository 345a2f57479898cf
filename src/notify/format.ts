import { daysLeftText, expiryDateText } from "../domain/expiry-stage.ts";
import type { AlertPayload } from "./types.ts";

/**
 * Wording shared by the human-readable channels, so Slack, Discord, Teams, Telegram, ntfy, Gotify,
 * Pushover and email say the same things: a title, a one-line summary and labelled details.
 */

/** 3725000 → "1 h 2 min"; 45000 → "45 s"; the two largest units, since "1 d 2 h 3 min 4 s" reads worse. */
export function humanDuration(ms: number): string {
  const sizes: [string, number][] = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];
  let rest = Math.max(0, Math.round(ms / 1000));
  const first = sizes.findIndex(([, size]) => rest >= size);
  if (first === -1) return "0 s";
  const parts: string[] = [];
  for (const [name, size] of sizes.slice(first, first + 2)) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n} ${name}`);
  }
  return parts.join(" ");
}

export type AlertKind = "down" | "up" | "degraded" | "flapping" | "expiring" | "test" | "unknown";

/** The look of an alert: what state it announces, with an emoji and a colour for cards. */
export function alertKind(p: AlertPayload): AlertKind {
  if (p.event === "test") return "test";
  if (p.event === "monitor.flapping") return "flapping";
  if (p.event === "monitor.expiring") return "expiring";
  return p.state === "down" || p.state === "up" || p.state === "degraded" ? p.state : "unknown";
}

const EMOJI = { down: "🔴", up: "🟢", degraded: "🟡", flapping: "🔁", expiring: "⏳", test: "🧪", unknown: "⚪" } as const;
/** RGB colours (Slack/Discord/Teams accents): red, green, amber, purple, orange, blue, grey. */
const COLOUR = { down: 0xd93025, up: 0x1e8e3e, degraded: 0xf29900, flapping: 0x8e44ad, expiring: 0xe8710a, test: 0x1a73e8, unknown: 0x80868b } as const;

export const stateEmoji = (p: AlertPayload): string => EMOJI[alertKind(p)];
export const stateColour = (p: AlertPayload): number => COLOUR[alertKind(p)];
export const colourHex = (p: AlertPayload): string => "#" + stateColour(p).toString(16).padStart(6, "0");

/** "🔴 DOWN: Checkout API" */
export function alertTitle(p: AlertPayload): string {
  const kind = alertKind(p);
  const label = FOLLOWUP_LABELS[p.event] ?? (kind === "test" ? "TEST" : kind.toUpperCase());
  return `${stateEmoji(p)} ${label}: ${p.monitor.name}`;
}

/** "certificate", "domain registration": what a monitor.expiring alert is about. */
const expiringThing = (p: AlertPayload) => (p.expiry?.kind === "domain" ? "domain registration" : "certificate");

/** "2026-12-01 08:00 UTC (10 days left)" */
function expiryText(e: NonNullable<AlertPayload["expiry"]>): string {
  return `${expiryDateText(Date.parse(e.expires_at))} (${daysLeftText(e.days_left)})`;
}

/** One sentence a person can act on. */
export function alertSummary(p: AlertPayload): string {
  const m = p.monitor.name;
  switch (alertKind(p)) {
    case "test":
      return "This is a test notification from Vigil: this channel works.";
    case "expiring": {
      const e = p.expiry;
      if (!e) return `The ${expiringThing(p)} of ${m} expires soon.`;
      return `The ${expiringThing(p)} of ${m} expires on ${expiryText(e)}: renew it before then.`;
    }
    case "flapping": {
      const f = p.flapping;
      const why = f ? `${f.changes} state changes in ${humanDuration(f.window_ms)}` : "frequent state changes";
      return `${m} is flapping (${why}; now ${p.state}). Further alerts are paused until it has been stable for ${humanDuration(f?.window_ms ?? 600_000)}.`;
    }
    case "up": {
      const d = p.incident?.duration_ms;
      return `${m} is up again (was ${p.previous_state})${d !== null && d !== undefined ? ` after ${humanDuration(d)} of downtime` : ""}.`;
    }
    case "down":
      return followupSummary(p) ?? `${m} is down (was ${p.previous_state}).`;
    case "degraded": {
      // leaving down for degraded ends the outage: say so, with how long it lasted
      const d = p.incident?.resolved_at ? p.incident.duration_ms : null;
      return p.previous_state === "down"
        ? `${m} is no longer down but still degraded${d !== null && d !== undefined ? `, after ${humanDuration(d)} of downtime` : ""}.`
        : `${m} is degraded (was ${p.previous_state}).`;
    }
    default:
      return `${m} is ${p.state} (was ${p.previous_state}).`;
  }
}

export interface DetailField {
  label: string;
  value: string;
}

/** "eu-west: down, us-east: up"; null when no region has reported. */
export function regionLine(p: AlertPayload): string | null {
  if (p.regions.length === 0) return null;
  const down = p.regions.filter((r) => r.status === "down").length;
  return `${down}/${p.regions.length} down — ` + p.regions.map((r) => `${r.region}: ${r.status}`).join(", ");
}

/** The labelled details every channel shows, in order; empty ones are left out. */
export function alertFields(p: AlertPayload): DetailField[] {
  const out: DetailField[] = [
    { label: "Monitor", value: p.monitor.name },
    { label: "Type", value: p.monitor.monitor_type },
  ];
  if (p.monitor.target) out.push({ label: "Target", value: p.monitor.target });
  if (p.event === "monitor.expiring") {
    // no state changed: what expires and when, and the state the monitor is in
    if (p.expiry) out.push({ label: "Expires", value: expiryText(p.expiry) });
    out.push({ label: "State", value: p.state }, { label: "Time", value: p.occurred_at });
    return out;
  }
  out.push({ label: "State", value: `${p.state} (was ${p.previous_state})` });
  const regions = regionLine(p);
  if (regions) out.push({ label: "Regions", value: regions });
  if (p.error_code || p.error_message) out.push({ label: "Error", value: [p.error_code, p.error_message].filter(Boolean).join(": ") });
  if (p.incident) {
    const i = p.incident;
    const value = i.resolved_at ? `#${i.id} resolved after ${humanDuration(i.duration_ms ?? 0)} (started ${i.started_at})` : `#${i.id} opened ${i.started_at}`;
    out.push({ label: "Incident", value });
  }
  out.push({ label: "Time", value: p.occurred_at });
  return out;
}

/** Plain text: title, summary, details, link. */
export function alertPlainText(p: AlertPayload, opts: { title?: boolean } = {}): string {
  const lines = opts.title === false ? [] : [alertTitle(p), ""];
  lines.push(alertSummary(p), "");
  for (const f of alertFields(p)) lines.push(`${f.label}: ${f.value}`);
  lines.push("", `Dashboard: ${p.dashboard_url}`);
  return lines.join("\n");
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Slack mrkdwn needs &, < and > escaped; nothing else. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

// ---- an open incident's reminder and escalation (README "Dependencies, reminders and escalation") ----

const FOLLOWUP_LABELS: Partial<Record<AlertPayload["event"], string>> = { "monitor.still_down": "STILL DOWN", "monitor.escalated": "ESCALATED" };

/** "Checkout API is still down, for 15 min now."; null for an alert that is neither. */
function followupSummary(p: AlertPayload): string | null {
  if (p.event !== "monitor.still_down" && p.event !== "monitor.escalated") return null;
  const since = p.incident ? Date.parse(p.occurred_at) - Date.parse(p.incident.started_at) : null;
  const forHow = since !== null && since >= 0 ? humanDuration(since) : null;
  if (p.event === "monitor.still_down") return `${p.monitor.name} is still down${forHow ? `, for ${forHow} now` : ""}. This reminder repeats until it recovers.`;
  return `${p.monitor.name} has been down${forHow ? ` for ${forHow}` : ""} and is escalated to you: you will hear when it recovers.`;
}
