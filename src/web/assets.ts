import { createHash } from "node:crypto";
import appJs from "./assets/app.client.js" with { type: "text" };
import baseCss from "./assets/base.css" with { type: "text" };
import dashboardCss from "./assets/dashboard.css" with { type: "text" };
import faviconSvg from "./assets/favicon.svg" with { type: "text" };
import statusCss from "./assets/status.css" with { type: "text" };
import { securityHeaders } from "./respond.ts";

/**
 * The UI's stylesheets and script, embedded in the binary at build time (text imports): no CDN, no
 * external fonts. URLs carry a hash of the content, so they are cached for a year and a new build
 * is picked up at once.
 */
interface Asset {
  body: string;
  type: string;
  url: string;
}

function asset(name: string, body: string, type: string): Asset {
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 12);
  return { body, type, url: `/assets/${hash}/${name}` };
}

export const ASSETS = {
  statusCss: asset("status.css", baseCss + statusCss, "text/css; charset=utf-8"),
  dashboardCss: asset("dashboard.css", baseCss + dashboardCss, "text/css; charset=utf-8"),
  appJs: asset("app.js", appJs, "text/javascript; charset=utf-8"),
};

const byName = new Map(Object.values(ASSETS).map((a) => [a.url.split("/").pop()!, a]));

/** Serves /assets/<hash>/<name>; a stale hash still gets the current file, but is not cached long. */
export function assetResponse(hash: string, name: string): Response | null {
  const a = byName.get(name);
  if (!a) return null;
  const current = a.url === `/assets/${hash}/${name}`;
  return new Response(a.body, {
    headers: {
      "content-type": a.type,
      "cache-control": current ? "public, max-age=31536000, immutable" : "no-cache",
      ...securityHeaders("embeddable"),
    },
  });
}

/**
 * The icon at the addresses browsers ask for (/favicon.svg from the pages' <link rel="icon">,
 * /favicon.ico when they guess): an SVG at both, so no page logs a 404.
 */
export function faviconResponse(): Response {
  return new Response(faviconSvg, {
    headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400", ...securityHeaders("embeddable") },
  });
}
