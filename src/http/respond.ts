import type { Logger } from "../lib/logger.ts";
import { IncompleteBodyError } from "./read-limited.ts";
import { logStorageFailure, STORAGE_MESSAGES, storageFailure } from "../lib/storage-errors.ts";
import { ApiError } from "./errors.ts";
import type { RequestState } from "./request-state.ts";

/** Headers on every API response; rate-limit headers once the token is known. */
export function standardHeaders(state: RequestState): Record<string, string> {
  const h: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "x-request-id": state.requestId,
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  };
  const rl = state.rateLimit;
  if (rl) {
    h["x-ratelimit-limit"] = String(rl.limit);
    h["x-ratelimit-remaining"] = String(rl.remaining);
    h["x-ratelimit-reset"] = String(Math.ceil(rl.resetAt / 1000));
  }
  return h;
}

export function meta(state: RequestState): Record<string, unknown> {
  const m: Record<string, unknown> = { request_id: state.requestId };
  if (state.rateLimit) {
    m.rate_limit = { limit: state.rateLimit.limit, remaining: state.rateLimit.remaining, reset: Math.ceil(state.rateLimit.resetAt / 1000) };
  }
  return m;
}

export function jsonResponse(state: RequestState, status: number, body: Record<string, unknown>, extra?: Record<string, string>): Response {
  return new Response(JSON.stringify({ ...body, meta: meta(state) }), { status, headers: { ...standardHeaders(state), ...extra } });
}

/**
 * Turns anything thrown into the documented error body. A full disk is 507 insufficient_storage and
 * an I/O error of the store 503 storage_unavailable (logged once a minute, not per request). A body
 * the client stopped sending is a 400, logged as such. Other unexpected errors are logged with the
 * request id and answered as 500 internal_error without a stack trace or message.
 */
export function errorResponse(state: RequestState, err: unknown, log: Logger, method: string, path: string): Response {
  if (err instanceof ApiError) {
    const error: Record<string, unknown> = { code: err.code, message: err.message };
    if (err.details) error.details = err.details;
    return jsonResponse(state, err.status, { error }, err.headers);
  }
  const storage = storageFailure(err);
  if (storage) {
    logStorageFailure(log, storage, { request_id: state.requestId, method, path });
    const { status, code, message } = STORAGE_MESSAGES[storage];
    return jsonResponse(state, status, { error: { code, message } }, { "retry-after": "5" });
  }
  if (err instanceof IncompleteBodyError) {
    // the client went away mid-body: nothing failed here, and no one will read this answer
    log.info("request body cut short: the client closed the connection", { request_id: state.requestId, method, path, status: 400 });
    return jsonResponse(state, 400, { error: { code: "invalid_json", message: err.message } });
  }
  // a DOMException's stack is an empty string: fall back to its name and message
  log.error("unexpected failure", { request_id: state.requestId, method, path, error: (err instanceof Error && err.stack) || String(err) });
  return jsonResponse(state, 500, { error: { code: "internal_error", message: "an unexpected error occurred; the request id identifies it in the server log" } });
}
