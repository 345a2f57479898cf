/**
 * Wall-clock times in an IANA time zone, for one-off maintenance windows (docs/maintenance-windows.md
 * "Attributes"): `2026-12-01T02:00` with no offset means 02:00 in the window's zone, and the
 * dashboard's date-time fields show a stored time in that zone.
 */
import { DAY_MS } from "./uptime.ts";

const WALL_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?(Z|z|[+-]\d{2}:?\d{2})?$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: timezone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    if (formatters.size > 64) formatters.clear();
    formatters.set(timezone, f);
  }
  return f;
}

/** The zone's wall clock at `t` as the epoch ms of the same reading in UTC (seconds precision). */
function wallClockAsUtc(t: number, timezone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timezone).formatToParts(new Date(t))) if (part.type !== "literal") p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
}

/** The zone's offset from UTC at `t`, in ms. */
function offsetAt(t: number, timezone: string): number {
  const whole = Math.floor(t / 1000) * 1000;
  return wallClockAsUtc(whole, timezone) - whole;
}


/**
 * Epoch ms of a wall-clock reading in `timezone`. A reading that does not exist (skipped by a
 * daylight-saving change) moves forward by the gap; one that exists twice is the first of the two.
 * (Offsets change at most once within a day of any time.)
 */
function zonedToUtc(wallAsUtc: number, timezone: string): number {
  const before = wallAsUtc - offsetAt(wallAsUtc - DAY_MS, timezone);
  const after = wallAsUtc - offsetAt(wallAsUtc + DAY_MS, timezone);
  const reading = Math.floor(wallAsUtc / 1000) * 1000;
  const fits = [before, after].filter((c) => wallClockAsUtc(c, timezone) === reading);
  return fits.length ? Math.min(...fits) : before;
}

/**
 * An ISO 8601 date-time, with Z or an offset (an instant), or without (a wall-clock time in
 * `timezone`); null for anything else, or an impossible date.
 *
 * @example parseZonedTime("2026-12-01T02:00", "Europe/Berlin") // Date.parse("2026-12-01T01:00:00Z")
 */
export function parseZonedTime(text: string, timezone: string): number | null {
  const m = WALL_TIME.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => (m[i] === undefined ? 0 : Number(m[i])));
  const ms = m[7] ? Number(m[7].padEnd(3, "0")) : 0;
  if (mo! < 1 || mo! > 12 || d! < 1 || h! > 23 || mi! > 59 || s! > 59) return null;
  const wall = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms);
  const back = new Date(wall);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo! - 1 || back.getUTCDate() !== d) return null;
  const zone = m[8];
  if (zone === undefined) return zonedToUtc(wall, timezone);
  if (zone === "Z" || zone === "z") return wall;
  const sign = zone[0] === "-" ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  const oh = Number(digits.slice(0, 2)), om = Number(digits.slice(2));
  if (oh > 23 || om > 59) return null;
  return wall - sign * (oh * 60 + om) * 60_000;
}

/** `t` as the wall-clock reading `YYYY-MM-DDTHH:MM` in `timezone` (a datetime-local field's value). */
export function wallClockMinute(t: number, timezone: string): string {
  return new Date(wallClockAsUtc(t, timezone)).toISOString().slice(0, 16);
}
