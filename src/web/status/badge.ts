import { escapeHtml } from "../html.ts";

/** Shields-style flat badge: "status | up", coloured per state, with text so colour is not the only signal. */
const COLOURS: Record<string, string> = { up: "#2da44e", degraded: "#d29922", down: "#d93025", unknown: "#8c959f", paused: "#8c959f", maintenance: "#8c959f" };

/** Verdana 11px averages about 6.5 px a character; good enough for a badge's box. */
const textWidth = (s: string) => Math.round(s.length * 6.5) + 10;

export function badgeSvg(label: string, state: string): string {
  const value = state === "up" ? "up" : state;
  const lw = textWidth(label), vw = textWidth(value), w = lw + vw;
  const l = escapeHtml(label), v = escapeHtml(value);
  const colour = COLOURS[state] ?? COLOURS.unknown;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${l}: ${v}"><title>${l}: ${v}</title>
<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>
<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>
<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${vw}" height="20" fill="${colour}"/><rect width="${w}" height="20" fill="url(#s)"/></g>
<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">
<text x="${lw / 2}" y="15" fill="#010101" fill-opacity=".3">${l}</text><text x="${lw / 2}" y="14">${l}</text>
<text x="${lw + vw / 2}" y="15" fill="#010101" fill-opacity=".3">${v}</text><text x="${lw + vw / 2}" y="14">${v}</text></g></svg>`;
}
