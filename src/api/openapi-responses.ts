import { errorBodySchema } from "./schemas.ts";

/**
 * The headers and error responses of the OpenAPI document (README "API behaviour"): what each status
 * means, its error codes and the headers that come with it. Operations point at these by $ref.
 */

const HEADERS = {
  "X-Request-Id": { description: "the request's id, repeated in meta.request_id; a client's own plain X-Request-Id of up to 64 characters is kept", schema: { type: "string" } },
  "X-RateLimit-Limit": { description: "requests the account may make per one-minute window", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "requests left in the current window", schema: { type: "integer", minimum: 0 } },
  "X-RateLimit-Reset": { description: "when the current window ends, in epoch seconds", schema: { type: "integer" } },
  "Retry-After": { description: "whole seconds to wait before retrying", schema: { type: "integer", minimum: 1 } },
  Allow: { description: "the methods this path takes, comma-separated", schema: { type: "string" } },
  "WWW-Authenticate": { description: 'Bearer realm="vigil", with error="invalid_token" for an unknown or revoked token', schema: { type: "string" } },
} as const;
type HeaderName = keyof typeof HEADERS;

export const RATE_LIMIT_HEADERS: HeaderName[] = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];

/** Response headers by reference; `optional` ones are written inline, as a $ref cannot change `required`. */
export function headers(names: HeaderName[], optional: HeaderName[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const n of names) out[n] = { $ref: `#/components/headers/${n}` };
  for (const n of optional) out[n] = { ...HEADERS[n], required: false };
  return out;
}

interface ErrorSpec {
  status: number;
  codes: string[];
  description: string;
  details?: boolean;
  /** whether meta.rate_limit and the X-RateLimit-* headers come with it */
  rateLimit: "always" | "sometimes" | "never";
  headers?: HeaderName[];
}

const RETRY = ["Retry-After"] satisfies HeaderName[];

/** The errors of /api/v1 (and of /metrics, which admits its token the same way). */
const API_ERRORS = {
  InvalidJson: { status: 400, codes: ["invalid_json"], description: "the body is not a JSON object, not UTF-8, or nested deeper than 64 levels", rateLimit: "always" },
  Unauthorized: {
    status: 401,
    codes: ["unauthorized", "invalid_token"],
    description: "no or malformed `Authorization: Bearer` header (unauthorized), or an unknown or revoked token (invalid_token)",
    rateLimit: "never",
    headers: ["WWW-Authenticate"],
  },
  Forbidden: {
    status: 403,
    codes: ["plan_feature_disabled", "insufficient_scope"],
    description: "the token's account is on the free plan (plan_feature_disabled, checked before the rate limit, so without its headers), or the token lacks the scope (insufficient_scope)",
    rateLimit: "sometimes",
  },
  NotFound: { status: 404, codes: ["not_found"], description: "unknown id, or an id of another account", rateLimit: "always" },
  MethodNotAllowed: { status: 405, codes: ["method_not_allowed"], description: "this path does not take the method sent; `Allow` lists those it takes", rateLimit: "always", headers: ["Allow"] },
  PayloadTooLarge: { status: 413, codes: ["payload_too_large"], description: "the body is over 1 MiB", rateLimit: "always" },
  UnsupportedMediaType: {
    status: 415,
    codes: ["unsupported_media_type"],
    description: "the body is not sent as `application/json` (`application/vnd.api+json` and a charset parameter are accepted)",
    rateLimit: "always",
  },
  ValidationError: {
    status: 422,
    codes: ["validation_error"],
    description: "invalid attributes or query parameters; `details` maps each to its messages",
    details: true,
    rateLimit: "always",
  },
  RateLimited: { status: 429, codes: ["rate_limited"], description: "over the account's rate limit; retry after `Retry-After` seconds", rateLimit: "always", headers: RETRY },
  InternalError: { status: 500, codes: ["internal_error"], description: "an unexpected failure; the server log has it under the request id", rateLimit: "always" },
  StorageUnavailable: { status: 503, codes: ["storage_unavailable"], description: "the data store cannot be used now (an I/O error, or the PostgreSQL database is unreachable); nothing was saved", rateLimit: "always", headers: RETRY },
  InsufficientStorage: { status: 507, codes: ["insufficient_storage"], description: "the disk holding the data is full; nothing was saved", rateLimit: "always", headers: RETRY },
} satisfies Record<string, ErrorSpec>;
export type ApiErrorName = keyof typeof API_ERRORS;

/** The ping endpoint's errors: the API's error body, without a rate-limit window of an account. */
const PING_ERRORS = {
  PingNotFound: { status: 404, codes: ["not_found"], description: "unknown or rotated-out token, or an action other than start, fail or an exit code 0-255", rateLimit: "never" },
  PingMethodNotAllowed: { status: 405, codes: ["method_not_allowed"], description: "only GET, HEAD and POST", rateLimit: "never", headers: ["Allow"] },
  PingPayloadTooLarge: { status: 413, codes: ["payload_too_large"], description: "the body is over the ping endpoint's limit (README \"Heartbeat monitors\")", rateLimit: "never" },
  PingRateLimited: { status: 429, codes: ["rate_limited"], description: "over the per-token or per-address ping limit", rateLimit: "never", headers: RETRY },
  PingInternalError: { ...API_ERRORS.InternalError, rateLimit: "never" },
  PingStorageUnavailable: { ...API_ERRORS.StorageUnavailable, rateLimit: "never" },
  PingInsufficientStorage: { ...API_ERRORS.InsufficientStorage, rateLimit: "never" },
} satisfies Record<string, ErrorSpec>;
type PingErrorName = keyof typeof PING_ERRORS;

function documentedError(spec: ErrorSpec): Record<string, unknown> {
  const rl = { always: [RATE_LIMIT_HEADERS, []], sometimes: [[], RATE_LIMIT_HEADERS], never: [[], []] }[spec.rateLimit];
  return {
    description: spec.description,
    headers: headers(["X-Request-Id", ...rl[0]!, ...(spec.headers ?? [])], rl[1]),
    content: { "application/json": { schema: errorBodySchema(spec.codes, spec) } },
  };
}

function errorStatus(name: ApiErrorName | PingErrorName): number {
  return ({ ...API_ERRORS, ...PING_ERRORS } as Record<string, ErrorSpec>)[name]!.status;
}

/** `components.headers` and `components.responses` of the document. */
export function responseComponents(): { headers: Record<string, unknown>; responses: Record<string, unknown> } {
  const specs: Record<string, ErrorSpec> = { ...API_ERRORS, ...PING_ERRORS };
  return {
    headers: Object.fromEntries(Object.entries(HEADERS).map(([n, h]) => [n, { ...h, required: true }])),
    responses: Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, documentedError(spec)])),
  };
}

/**
 * The responses of a HEAD beside a GET: the GET's, but for those a HEAD cannot get (a 405: HEAD is
 * taken wherever GET is), each without its body; shared errors are written out, as their
 * components hold a body.
 */
export function headResponses(get: Record<string, unknown>): Record<string, unknown> {
  const specs: Record<string, ErrorSpec> = { ...API_ERRORS, ...PING_ERRORS };
  const out: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(get)) {
    if (status === "405") continue;
    const ref = (r as { $ref?: string }).$ref;
    const { content: _body, ...rest } = (ref ? documentedError(specs[ref.split("/").pop()!]!) : r) as Record<string, unknown>;
    out[status] = rest;
  }
  return out;
}

/** An operation's responses: its own (by status) and the named shared errors, in status order. */
export function responsesOf(own: Record<number, unknown>, errors: (ApiErrorName | PingErrorName)[]): Record<string, unknown> {
  const all: [number, unknown][] = [...Object.entries(own).map(([s, r]) => [Number(s), r] as [number, unknown]), ...errors.map((n) => [errorStatus(n), { $ref: `#/components/responses/${n}` }] as [number, unknown])];
  return Object.fromEntries(all.sort((a, b) => a[0] - b[0]).map(([s, r]) => [String(s), r]));
}
