import type { DaySegment } from "../../services/public-status.ts";
import { utcMinute } from "../../lib/dates.ts";
import { html, raw, type SafeHtml } from "../html.ts";

/**
 * Small pieces shared by the dashboard and the status pages: state badges (icon + text, so colour
 * is never the only signal), uptime bars, sparklines and the latency chart (inline SVG, no script).
 */
const STATE_LABEL: Record<string, { icon: string; text: string }> = {
  up: { icon: "✔", text: "Up" },
  degraded: { icon: "▲", text: "Degraded" },
  down: { icon: "✖", text: "Down" },
  unknown: { icon: "?", text: "Unknown" },
  paused: { icon: "❚❚", text: "Paused" },
  maintenance: { icon: "⚙", text: "Maintenance" },
};

export function stateBadge(state: string): SafeHtml {
  const s = STATE_LABEL[state] ?? STATE_LABEL.unknown!;
  const cls = state === "maintenance" ? "paused" : state;
  return html`<span class="st st-${cls}"><span aria-hidden="true">${s.icon}</span> ${s.text}</span>`;
}

/**
 * A moment as `<time>`: absolute UTC text (what a page without script shows), the instant in
 * `datetime`, UTC again in the title. The dashboard's script rewrites the text as "2 min ago" or
 * local date and time (app.client.js); the title keeps UTC for hover. null → "—".
 */
function timeTag(ms: number, text: string): SafeHtml {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}" title="${text}">${text}</time>`;
}

/** "2026-03-01T12:34:56.789Z" → "2026-03-01 12:34:56 UTC" in a `<time>`; null → "—". */
export function when(iso: string | null | undefined): SafeHtml | string {
  if (typeof iso !== "string") return "—";
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? "—" : timeTag(ms, iso.slice(0, 19).replace("T", " ") + " UTC");
}

/** 99.996 % is shown as 99.99 %, never rounded up to a perfect 100 %. */
export function formatPct(ratio: number | null): string {
  if (ratio === null) return "no data";
  if (ratio >= 1) return "100%";
  return `${(Math.floor(ratio * 10000) / 100).toFixed(2)}%`;
}

export function barClass(ratio: number | null): string {
  if (ratio === null) return "n";
  if (ratio >= 0.999) return "";
  if (ratio >= 0.99) return "b";
  if (ratio >= 0.95) return "c";
  return "d";
}

/**
 * One segment per UTC day, oldest first; colour by uptime, the date and figure in a title tooltip
 * for a mouse. Assistive technology reads the label (the period's figure) instead of the segments;
 * the figures of each day are in `dailyFigures` beside it, for keyboard, touch and screen readers.
 */
export function uptimeBar(days: DaySegment[], label: string): SafeHtml {
  const items = days.map((d) => {
    const cls = barClass(d.uptime);
    const title = `${new Date(d.day).toISOString().slice(0, 10)}: ${formatPct(d.uptime)}`;
    return cls ? `<li class=${cls} title="${title}">` : `<li title="${title}">`;
  });
  // hidden from assistive technology (90 unlabelled items); the label says the period's figure
  return html`<span class="sr-only">${label}</span><ol class="bar" aria-hidden="true">${raw(items.join(""))}</ol>`;
}

/**
 * The bar's days in words, behind a disclosure (no script, reachable by keyboard and touch): each
 * day below 100% on its own, runs of perfect days and of days without checks as one range each.
 */
export function dailyFigures(days: DaySegment[], name: string): SafeHtml {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const rows: string[] = [];
  for (let i = 0; i < days.length; i++) {
    const d = days[i]!;
    const kind = d.uptime === null ? "none" : d.uptime >= 1 ? "full" : "part";
    if (kind === "part") {
      rows.push(`${day(d.day)}: ${formatPct(d.uptime)}`);
      continue;
    }
    let j = i;
    while (j + 1 < days.length && (kind === "none" ? days[j + 1]!.uptime === null : days[j + 1]!.uptime! >= 1)) j++;
    const range = j > i ? `${day(d.day)} to ${day(days[j]!.day)}` : day(d.day);
    rows.push(`${range}: ${kind === "none" ? "no checks" : "100%"}`);
    i = j;
  }
  return html`<details class="days"><summary>Daily uptime<span class="sr-only"> of ${name}</span></summary><ul>${rows.map((r) => html`<li>${r}</li>`)}</ul></details>`;
}

const num = (n: number) => (Math.round(n * 10) / 10).toString();

/** A polyline of values (null = gap) scaled into width × height; a lone point becomes a dot. */
function linePath(values: (number | null)[], width: number, height: number, max: number): string {
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const x = (i: number) => (values.length > 1 ? i * step : width / 2);
  let d = "";
  values.forEach((v, i) => {
    if (v === null) return;
    const y = height - (max > 0 ? (v / max) * (height - 2) : 0) - 1;
    const joined = i > 0 && values[i - 1] !== null && values[i - 1] !== undefined;
    d += `${joined ? "L" : "M"}${num(x(i))} ${num(y)}`;
    const next = values[i + 1];
    if (!joined && (next === null || next === undefined)) d += "h0.01"; // round caps draw it as a dot
  });
  return d;
}

/** Response-time sparkline: hourly averages, most recent on the right. */
export function sparkline(values: (number | null)[], label: string): SafeHtml {
  const max = Math.max(0, ...values.filter((v): v is number => v !== null));
  const d = linePath(values, 100, 24, max);
  return html`<svg class="spark" viewBox="0 0 100 24" preserveAspectRatio="none" role="img" aria-label="${label}">${d ? html`<path d="${d}"/>` : ""}</svg>`;
}

/** A check as the latency chart draws it. */
export interface ChartPoint {
  at: number;
  latency: number | null;
  status: string;
}

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/**
 * Latency of recent checks against time (oldest left), with a time axis (UTC labels the script
 * turns into local time) and the down periods marked: a band from each down check to the next
 * check, labelled "down" so colour is not the only signal. `points` are oldest first.
 */
export function latencyChart(points: ChartPoint[], label: string): SafeHtml {
  const W = 1000, H = 190, top = 18, bottom = 24, plotH = H - top - bottom;
  const first = points[0]?.at ?? 0, last = points[points.length - 1]?.at ?? 0;
  const span = Math.max(1, last - first);
  const x = (at: number) => (points.length > 1 ? ((at - first) / span) * (W - 2) + 1 : W / 2);
  const max = Math.max(1, ...points.map((p) => p.latency ?? 0));
  const y = (v: number) => top + plotH - (v / max) * (plotH - 2) - 1;
  let d = "";
  points.forEach((p, i) => {
    if (p.latency === null) return;
    const joined = i > 0 && points[i - 1]!.latency !== null;
    d += `${joined ? "L" : "M"}${num(x(p.at))} ${num(y(p.latency))}`;
    if (!joined && (points[i + 1]?.latency ?? null) === null) d += "h0.01";
  });
  const bands: string[] = [];
  for (let i = 0; i < points.length; i++) {
    if (points[i]!.status !== "down") continue;
    let j = i;
    while (j + 1 < points.length && points[j + 1]!.status === "down") j++;
    const x1 = x(points[i]!.at), x2 = j + 1 < points.length ? x(points[j + 1]!.at) : x(points[j]!.at) + 4;
    const w = Math.max(4, x2 - x1);
    bands.push(`<rect class="down" x="${num(x1)}" y="${top}" width="${num(w)}" height="${plotH}"><title>down from ${hhmm(points[i]!.at)} UTC</title></rect>`);
    if (w > 34) bands.push(`<text class="down-label" x="${num(x1 + 3)}" y="${top + 12}">down</text>`);
    i = j;
  }
  const ticks: string[] = [];
  if (points.length > 1) {
    for (let k = 0; k <= 4; k++) {
      const at = first + (span * k) / 4;
      const anchor = k === 0 ? "start" : k === 4 ? "end" : "middle";
      ticks.push(`<line class="grid" x1="${num(x(at))}" y1="${H - bottom}" x2="${num(x(at))}" y2="${H - bottom + 4}"/><text class="tick" x="${num(x(at))}" y="${H - 6}" text-anchor="${anchor}" data-time="${new Date(at).toISOString()}">${hhmm(at)}</text>`);
    }
  }
  const downs = points.filter((p) => p.status === "down").length;
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}${downs ? `, ${downs} down` : ""}">
${raw(bands.join(""))}<line class="grid" x1="0" y1="${top}" x2="${W}" y2="${top}"/><line class="grid" x1="0" y1="${H - bottom}" x2="${W}" y2="${H - bottom}"/>
<text x="2" y="13">${max} ms</text><text x="${W - 2}" y="13" text-anchor="end">${points.length} ${points.length === 1 ? "check" : "checks"}${points.length > 1 ? html`<tspan data-tz-label=" · local times"> · times UTC</tspan>` : ""}</text>${d ? html`<path class="line" d="${d}"/>` : ""}${raw(ticks.join(""))}</svg>`;
}

/** Epoch ms → "2026-03-01 12:34 UTC" in a `<time>` (see `when`); null → "—". */
export function isoMinute(ms: number | null | undefined): SafeHtml | string {
  return ms === null || ms === undefined ? "—" : timeTag(ms, utcMinute(ms));
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return "ongoing";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
