import type { DaySegment } from "../../services/public-status.ts";
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

/** "2026-03-01T12:34:56.789Z" → "2026-03-01 12:34:56 UTC"; null → "—". */
export function when(iso: string | null | undefined): string {
  return typeof iso === "string" ? iso.slice(0, 19).replace("T", " ") + " UTC" : "—";
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
 * One segment per UTC day, oldest first; colour by uptime, the date and figure in a title tooltip.
 * The list is one image to assistive technology, labelled with the period's figure.
 */
export function uptimeBar(days: DaySegment[], label: string): SafeHtml {
  const items = days.map((d) => {
    const cls = barClass(d.uptime);
    const title = `${new Date(d.day).toISOString().slice(0, 10)}: ${formatPct(d.uptime)}`;
    return cls ? `<li class=${cls} title="${title}">` : `<li title="${title}">`;
  });
  return html`<ol class="bar" role="img" aria-label="${label}">${raw(items.join(""))}</ol>`;
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

/** Latency of recent checks (oldest left) with a max and a zero line, for the monitor detail. */
export function latencyChart(values: (number | null)[], label: string): SafeHtml {
  const W = 1000, H = 160, top = 18;
  const max = Math.max(1, ...values.filter((v): v is number => v !== null));
  const d = linePath(values, W - 2, H - top - 2, max);
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}">
<line class="grid" x1="0" y1="${top}" x2="${W}" y2="${top}"/><line class="grid" x1="0" y1="${H - 1}" x2="${W}" y2="${H - 1}"/>
<text x="2" y="13">${max} ms</text><text x="${W - 2}" y="13" text-anchor="end">${values.length} ${values.length === 1 ? "check" : "checks, oldest left"}</text>${d ? html`<path class="line" transform="translate(1 ${top})" d="${d}"/>` : ""}</svg>`;
}

export function isoMinute(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? "—" : new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
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
