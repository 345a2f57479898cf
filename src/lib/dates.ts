/**
 * Dates on the wire (docs/api-rules.md "Dates and date filters"): responses use ISO 8601 UTC with
 * milliseconds and Z; `from`/`to` accept an ISO date, an ISO date-time with Z or an offset, or epoch
 * seconds.
 */
export function toIso(ms: number): string;
export function toIso(ms: number | null | undefined): string | null;
export function toIso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** "2026-03-01 12:34 UTC": a time in plain text, for mail and feeds (pages wrap it in a `<time>`). */
export function utcMinute(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})$/;
const EPOCH_SECONDS = /^-?\d{1,12}(?:\.\d+)?$/;

/** Returns epoch ms, or null when the text is none of the accepted forms (the caller answers 422). */
export function parseDateParam(text: string): number | null {
  const s = text.trim();
  if (EPOCH_SECONDS.test(s)) return Math.round(Number(s) * 1000);
  let m = DATE_ONLY.exec(s);
  if (m) return validUtc(+m[1]!, +m[2]!, +m[3]!, 0, 0, 0, 0, 0);
  m = DATE_TIME.exec(s);
  if (!m) return null;
  const frac = m[7] ? Math.round(Number("0." + m[7]) * 1000) : 0;
  let offsetMin = 0;
  const tz = m[8]!;
  if (tz !== "Z" && tz !== "z") {
    const sign = tz[0] === "-" ? -1 : 1;
    const digits = tz.slice(1).replace(":", "");
    const oh = +digits.slice(0, 2), om = +digits.slice(2);
    if (oh > 23 || om > 59) return null;
    offsetMin = sign * (oh * 60 + om);
  }
  return validUtc(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, m[6] ? +m[6] : 0, frac, offsetMin);
}

function validUtc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, offsetMin: number): number | null {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  // Date.UTC rolls 2026-02-31 into March; a round trip catches impossible days.
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return t - offsetMin * 60_000;
}
