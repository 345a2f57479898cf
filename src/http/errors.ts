import { newDetails } from "../domain/details.ts";

/**
 * Errors the API returns (docs/api-rules.md "Statuses and error codes"). Anything thrown that is
 * not an ApiError becomes 500 internal_error with no detail in the body.
 */
export type ValidationDetails = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ValidationDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const unauthorized = (message = "send an API token as 'Authorization: Bearer <token>'") =>
  new ApiError(401, "unauthorized", message, undefined, { "www-authenticate": 'Bearer realm="vigil"' });
export const invalidToken = () =>
  new ApiError(401, "invalid_token", "the API token is unknown or revoked", undefined, { "www-authenticate": 'Bearer realm="vigil", error="invalid_token"' });
export const planFeatureDisabled = () =>
  new ApiError(403, "plan_feature_disabled", "the API is available on the Pro and Enterprise plans; this token's account is on the free plan");
export const insufficientScope = (scope: string) =>
  new ApiError(403, "insufficient_scope", `this token lacks the scope '${scope}' that this endpoint requires`);
export const notFound = (what = "resource") => new ApiError(404, "not_found", `${what} not found`);
export const methodNotAllowed = (allow: string[]) =>
  new ApiError(405, "method_not_allowed", `method not allowed here; allowed: ${allow.join(", ")}`, undefined, { allow: allow.join(", ") });
export const unsupportedMediaType = () =>
  new ApiError(415, "unsupported_media_type", "send the body as JSON with 'Content-Type: application/json'");
export const invalidJson = (why: string) => new ApiError(400, "invalid_json", why);
// No `Connection: close` on a 413: Bun closes the socket as soon as such an answer is written, and a
// client still sending its body then reads a reset instead of the answer (README "Security", Limits).
export const payloadTooLarge = (limit: number) => new ApiError(413, "payload_too_large", `the body is larger than ${limit} bytes`);
export const validationError = (details: ValidationDetails) =>
  new ApiError(422, "validation_error", "the request has invalid attributes: " + Object.keys(details).join(", "), details);
export const rateLimited = (retryAfterSec: number) =>
  new ApiError(429, "rate_limited", `rate limit exceeded; retry in ${retryAfterSec} s`, undefined, { "retry-after": String(retryAfterSec) });

/** Collects validation messages per attribute, so one response names every bad attribute at once. */
export class DetailsCollector {
  readonly details: ValidationDetails = newDetails();
  add(attr: string, message: string): void {
    (this.details[attr] ??= []).push(message);
  }
  get empty(): boolean {
    return Object.keys(this.details).length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) throw validationError(this.details);
  }
}
