import { Elysia } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { CONFIG_SCHEMA_PATH, configSchemaJson } from "../domain/config-file-schema.ts";
import { OPENAPI_PATH } from "./pipeline.ts";

/**
 * Serves the OpenAPI document (api/openapi.ts) at /api/v1/openapi.json, beside it the JSON Schema of
 * configuration files (README "Configuration as code") for editors to check them, and Swagger UI at
 * /docs from assets embedded in the binary, so the docs work on a machine without internet.
 */
export function docsPlugin(document: Record<string, unknown>) {
  const json = JSON.stringify(document);
  const configSchema = configSchemaJson();
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Vigil API v1</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script></body></html>`;
  const init = `window.ui = SwaggerUIBundle({ url: "${OPENAPI_PATH}", dom_id: "#swagger-ui", deepLinking: true, persistAuthorization: true });`;
  return new Elysia({ name: "docs" })
    .get(OPENAPI_PATH, () => new Response(json, { headers: { "content-type": "application/json; charset=utf-8", "x-content-type-options": "nosniff" } }))
    .get(CONFIG_SCHEMA_PATH, () => new Response(configSchema, { headers: { "content-type": "application/schema+json; charset=utf-8", "x-content-type-options": "nosniff" } }))
    .get("/docs", () => new Response(page, { headers: { "content-type": "text/html; charset=utf-8", ...DOCS_HEADERS } }))
    .get("/docs/assets/swagger-ui.css", () => assetResponse(swaggerCss, "text/css"))
    .get("/docs/assets/swagger-ui-bundle.js", () => assetResponse(swaggerBundle, "text/javascript"))
    .get("/docs/assets/init.js", () => new Response(init, { headers: { "content-type": "text/javascript" } }));
}

/**
 * Security headers of the docs page (the dashboard's, see web/respond.ts): scripts and styles only
 * from /docs/assets; Swagger UI sets inline style attributes, hence 'unsafe-inline' for styles only.
 */
const DOCS_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  "x-frame-options": "DENY",
};

function assetResponse(path: string, type: string): Response {
  return new Response(Bun.file(path), { headers: { "content-type": type, "cache-control": "public, max-age=86400" } });
}
