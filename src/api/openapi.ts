import { outsidePaths } from "./openapi-outside.ts";
import { headers, headResponses, RATE_LIMIT_HEADERS, responseComponents, responsesOf, type ApiErrorName } from "./openapi-responses.ts";
import type { RouteDef } from "./route.ts";
import { componentsOf } from "./schemas.ts";

export interface DocumentOptions {
  version: string;
  baseUrl: string;
  heartbeatUrl: string;
  metricsPublic: boolean;
}

const TAGS: Record<string, string> = {
  Monitors: "What Vigil watches: http, tcp, dns, ssl, ping and heartbeat monitors",
  Checks: "A monitor's history: its checks and its timeline of pings and state changes",
  Incidents: "Opened and resolved by Vigil when a monitor goes down and comes back; read-only",
  "Status pages": "Public or token-protected pages showing chosen monitors, and the updates people write on them",
  "Notification channels": "Where alerts go: webhook, Slack, Discord, Teams, Telegram, ntfy, Gotify, Pushover, email",
  "Maintenance windows": "Planned maintenance, one-off or recurring: checks go on, incidents and alerts wait for the end",
  Groups: "Groups of monitors: the sections of the dashboard and of status pages",
  Peers: "Probe peers: other machines running this account's checks in their regions",
  Heartbeat: "The ping URL a heartbeat monitor's job calls; the token in the path is its only credential",
  Operations: "Health, readiness and Prometheus metrics of the instance",
};

const DESCRIPTION = `The public API v1 of a Vigil instance (OpenAPI 3.1, JSON Schema 2020-12).

Every /api/v1 request carries \`Authorization: Bearer <token>\`; each operation names the scope it needs.
Requests are checked in this order: authentication (401), plan (403 \`plan_feature_disabled\`), rate limit
(429), scope (403 \`insufficient_scope\`), then the request itself. Errors have the body
\`{"error": {"code", "message", "details"?}, "meta": {"request_id", "rate_limit"?}}\`; every response has
\`X-Request-Id\`, and once the token is known \`X-RateLimit-Limit/Remaining/Reset\` and \`meta.rate_limit\`.
HEAD is answered like GET, without a body. The README of the project describes the rest.

Beside this document, \`GET /api/v1/config-schema.json\` (no token needed) serves the JSON Schema of the
configuration files of \`vigil export\` and \`vigil apply\`, built from the same attribute schemas.`;

/** `/api/v1/monitors/:id` → `/api/v1/monitors/{id}` */
export const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

/**
 * The OpenAPI 3.1 document of an instance, built from the route table (each route's TypeBox schemas
 * are JSON Schema 2020-12 as they are) plus the endpoints outside /api/v1 that a client calls.
 */
export function openApiDocument(routes: RouteDef[], opts: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of routes) (paths[openApiPath(def.path)] ??= {})[def.method.toLowerCase()] = operation(def);
  const all = { ...paths, ...outsidePaths(opts) } as Record<string, Record<string, unknown>>;
  // every GET answers HEAD too (the route table's rule, and the ping endpoint's)
  for (const item of Object.values(all)) if (item.get) item.head = headOperation(item.get as Record<string, unknown>);
  const schemas = Object.fromEntries(Object.entries(componentsOf(routes.flatMap((d) => [d.response, d.body]))).map(([name, schema]) => [name, withoutDefaults(schema)]));
  return {
    openapi: "3.1.0",
    info: {
      title: "Vigil API",
      version: opts.version,
      description: DESCRIPTION,
      // the repository grants no licence (no LICENSE file, a private package): say so rather than
      // guess one; an SPDX LicenseRef because OpenAPI 3.1 asks for an identifier or a URL
      license: { name: "Proprietary: no licence has been granted", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: opts.baseUrl, description: "this instance (--base-url)" }],
    security: [{ bearerAuth: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: all,
    components: {
      schemas,
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "an API token from `vigil token create`" } },
      ...responseComponents(),
    },
  };
}

/**
 * `schema` without a `default` anywhere. A default says what the server fills in when a request
 * leaves an attribute out, which only a create body can do; in a response or an update body it would
 * tell code generators the attribute is always there (openapi-typescript makes such properties
 * required), where for one monitor type it is absent.
 */
function withoutDefaults(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDefaults);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "default") continue;
    // under these, keys are attribute names, not keywords
    out[k] = k === "properties" || k === "patternProperties" || k === "$defs" ? Object.fromEntries(Object.entries(v as object).map(([n, s]) => [n, withoutDefaults(s)])) : withoutDefaults(v);
  }
  return out;
}

/** A GET's HEAD: the same answer without its body (README "API behaviour"). */
function headOperation(get: Record<string, unknown>): Record<string, unknown> {
  const { requestBody: _none, ...rest } = get;
  return { ...rest, operationId: `head${(get.operationId as string).slice(3)}`, summary: `${(get.summary as string).replace(/ \(GET\)$/, "")} (HEAD: the GET's answer without its body)`, responses: headResponses(get.responses as Record<string, unknown>) };
}

function operation(def: RouteDef): Record<string, unknown> {
  const parameters: Record<string, unknown>[] = [];
  for (const m of def.path.matchAll(/:(\w+)/g)) {
    parameters.push({ name: m[1], in: "path", required: true, description: "a positive integer; anything else is a 404", schema: { type: "string", pattern: "^[1-9][0-9]*$" } });
  }
  const query = (def.query as { properties?: Record<string, { description?: string }> } | undefined)?.properties ?? {};
  for (const [name, { description, ...schema }] of Object.entries(query)) parameters.push({ name, in: "query", required: false, description, schema });

  const errors: ApiErrorName[] = ["Unauthorized", "Forbidden", "MethodNotAllowed", "RateLimited", "InternalError", "StorageUnavailable", "InsufficientStorage"];
  if (def.path.includes(":")) errors.push("NotFound");
  if (def.body) errors.push("InvalidJson", "PayloadTooLarge", "UnsupportedMediaType");
  if (def.body || def.query || def.refuses) errors.push("ValidationError");
  const success = { description: "success", headers: headers(["X-Request-Id", ...RATE_LIMIT_HEADERS]), content: { "application/json": { schema: withoutDefaults(def.response) } } };
  const op: Record<string, unknown> = {
    operationId: operationId(def),
    summary: def.summary,
    description: `Requires scope \`${def.scope}\`.`,
    tags: [def.tag],
    parameters,
    responses: responsesOf({ [def.successStatus ?? 200]: success }, errors),
  };
  if (def.body) {
    op.requestBody = {
      required: true,
      description: "A flat object of attributes, or JSON:API `{\"data\": {\"type\", \"attributes\"}}`; also as `application/vnd.api+json`.",
      // a PATCH changes only what it sends: nothing is filled in, so no default is said
      content: { "application/json": { schema: def.method === "POST" ? def.body : withoutDefaults(def.body), ...(def.example ? { example: def.example } : {}) } },
    };
  }
  return op;
}

/** `PATCH /api/v1/status-pages/:id` → `patchApiV1StatusPagesById` */
function operationId(def: RouteDef): string {
  const words = def.path.split(/[/-]/).filter(Boolean).map((w) => (w.startsWith(":") ? `By${cap(w.slice(1))}` : cap(w)));
  return def.method.toLowerCase() + words.join("");
}

const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
