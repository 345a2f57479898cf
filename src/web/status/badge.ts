import { daysLeft, expiryStage } from "../../domain/expiry-stage.ts";
import type { BadgeData } from "../../services/public-status.ts";
import { escapeHtml } from "../html.ts";
import { formatPct } from "../views/widgets.ts";

/**
 * Shields-style flat badges ("status | up"), with text so colour is never the only signal. White
 * text on every value colour and on the grey label reads at 4.5:1 or more (WCAG AA), checked in
 * test/web/badges.test.ts.
 */
export const BADGE_COLOURS = { up: "#1a7f37", warn: "#8a5a00", down: "#c62828", none: "#59636e", info: "#0b57d0" } as const;
export const BADGE_LABEL_COLOUR = "#555";
type Tone = keyof typeof BADGE_COLOURS;

const STATE_TONE: Record<string, Tone> = { up: "up", degraded: "warn", down: "down", unknown: "none", paused: "none", maintenance: "none" };

/** Verdana 11px averages about 6.5 px a character; good enough for a badge's box. */
const textWidth = (s: string) => Math.round(s.length * 6.5) + 10;

export function valueBadgeSvg(label: string, value: string, tone: Tone): string {
  const lw = textWidth(label), vw = textWidth(value), w = lw + vw;
  const l = escapeHtml(label), v = escapeHtml(value);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${l}: ${v}"><title>${l}: ${v}</title>
<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>
<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>
<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="${BADGE_LABEL_COLOUR}"/><rect x="${lw}" width="${vw}" height="20" fill="${BADGE_COLOURS[tone]}"/><rect width="${w}" height="20" fill="url(#s)"/></g>
<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">
<text x="${lw / 2}" y="15" fill="#010101" fill-opacity=".3">${l}</text><text x="${lw / 2}" y="14">${l}</text>
<text x="${lw + vw / 2}" y="15" fill="#010101" fill-opacity=".3">${v}</text><text x="${lw + vw / 2}" y="14">${v}</text></g></svg>`;
}

/** The page's (or one monitor's) state. */
export function badgeSvg(label: string, state: string): string {
  return valueBadgeSvg(label, state, STATE_TONE[state] ?? "none");
}

export const BADGE_KINDS = ["status", "uptime", "response", "cert"] as const;
export type BadgeKind = (typeof BADGE_KINDS)[number];

/** One monitor's badge of `kind`; `days` is the uptime badge's period. */
export function monitorBadgeSvg(kind: BadgeKind, d: BadgeData, days: number, label?: string): string {
  switch (kind) {
    case "status":
      return badgeSvg(label ?? "status", d.state);
    case "uptime": {
      const u = d.uptime;
      const tone: Tone = u === null ? "none" : u >= 0.999 ? "up" : u >= 0.99 ? "warn" : "down";
      return valueBadgeSvg(label ?? `uptime ${days}d`, u === null ? "no data" : formatPct(u), tone);
    }
    case "response":
      if (!d.measuresLatency) return valueBadgeSvg(label ?? "response", "n/a", "none");
      return valueBadgeSvg(label ?? "response", d.avgLatency === null ? "no data" : `${d.avgLatency} ms`, d.avgLatency === null ? "none" : "info");
    case "cert": {
      if (d.expiresAt === null) return valueBadgeSvg(label ?? "certificate", "unknown", "none");
      if (d.expiresAt <= d.now) return valueBadgeSvg(label ?? "certificate", "expired", "down");
      const left = daysLeft(d.expiresAt, d.now);
      const stage = expiryStage(d.expiresAt, d.now, d.warnDays);
      return valueBadgeSvg(label ?? "certificate", left < 1 ? "< 1 day" : `${left} day${left === 1 ? "" : "s"}`, stage >= 2 ? "down" : stage === 1 ? "warn" : "up");
    }
  }
}
