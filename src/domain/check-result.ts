/**
 * What one probe run observed (docs/monitors.md "Check results"). Probes return this; the engine
 * stores it.
 */
import { replaceNul } from "./text-rules.ts";

export const CHECK_STATUSES = ["up", "down", "degraded"] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

/**
 * Error codes recorded on checks and incidents; the API returns them verbatim. What each means:
 * docs/monitors.md "Check error codes".
 */
export const CHECK_ERROR_CODES = [
  "connection_timeout",
  "connection_refused",
  "connection_error",
  "dns_error",
  "dns_nxdomain",
  "dns_servfail",
  "dns_timeout",
  "dns_no_answer",
  "dns_answer_mismatch",
  "tls_error",
  "certificate_expired",
  "certificate_invalid",
  "certificate_not_yet_valid",
  "certificate_self_signed",
  "certificate_hostname_mismatch",
  "certificate_untrusted",
  "http_error",
  "too_many_redirects",
  "keyword_missing",
  "content_type_mismatch",
  "body_mismatch",
  "body_truncated",
  "assertion_failed",
  "synthetic_step_failed",
  "ping_not_permitted",
  "ping_timeout",
  "heartbeat_missed",
  "heartbeat_failed",
  "websocket_handshake_failed",
  "websocket_expect_missing",
  "grpc_not_serving",
  "grpc_error",
  "smtp_error",
  "db_auth_failed",
  "db_query_failed",
  "db_error",
  "container_not_found",
  "container_not_running",
  "container_unhealthy",
  "docker_error",
  "domain_expired",
  "rdap_error",
  "target_blocked",
  "internal_error",
] as const;
export type CheckErrorCode = (typeof CHECK_ERROR_CODES)[number];

/**
 * When each moment of the connection came, in ms from the start of the request (of its last hop,
 * after redirects): name resolved, TCP connected, TLS established, first byte of the answer. null
 * for a step that did not happen (an IP target needs no resolution; plain http has no TLS).
 */
export interface CheckTimings {
  dns_ms: number | null;
  connect_ms: number | null;
  tls_ms: number | null;
  ttfb_ms: number | null;
}

export const TIMING_NAMES = ["dns_ms", "connect_ms", "tls_ms", "ttfb_ms"] as const satisfies readonly (keyof CheckTimings)[];

/** an issuer's name is a few dozen characters; a longer one is cut rather than stored whole */
export const MAX_ISSUER_LENGTH = 200;

export interface CheckResult {
  status: CheckStatus;
  /** epoch ms when the check started */
  checked_at: number;
  latency_ms: number | null;
  http_code: number | null;
  error_code: CheckErrorCode | null;
  error_message: string | null;
  degraded_reason: string | null;
  resolved_ip: string | null;
  /** epoch ms of the leaf certificate's notAfter, when a TLS handshake happened */
  ssl_not_after: number | null;
  /** who issued that certificate (its issuer's O, else its CN), shown beside the expiry */
  ssl_issuer: string | null;
  dns_answer: string[] | null;
  synthetic_trace_json: unknown | null;
  /** the connection's own moments, so a slow answer can be told from a slow check queue */
  timings: CheckTimings | null;
}

export function emptyResult(checkedAt: number): CheckResult {
  return {
    status: "up",
    checked_at: checkedAt,
    latency_ms: null,
    http_code: null,
    error_code: null,
    error_message: null,
    degraded_reason: null,
    resolved_ip: null,
    ssl_not_after: null,
    ssl_issuer: null,
    dns_answer: null,
    synthetic_trace_json: null,
    timings: null,
  };
}

/**
 * The result with any NUL in its messages replaced (U+FFFD): a probe's message may quote what a
 * target answered, and no stored text holds a NUL (docs/api-rules.md "Text").
 */
export function withoutNul(r: CheckResult): CheckResult {
  if (!r.error_message?.includes("\0") && !r.degraded_reason?.includes("\0")) return r;
  return { ...r, error_message: replaceNul(r.error_message), degraded_reason: replaceNul(r.degraded_reason) };
}

export function failed(checkedAt: number, code: CheckErrorCode, message: string, extra: Partial<CheckResult> = {}): CheckResult {
  return { ...emptyResult(checkedAt), ...extra, status: "down", error_code: code, error_message: message };
}
