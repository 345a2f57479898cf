import { CHECK_ERROR_CODES, type CheckErrorCode } from "./check-result.ts";

/**
 * What anonymous visitors read about a failure: a plain wording of the error code, never the
 * check's message, which may quote the target's response or name internal addresses (README
 * "Status pages"). Signed-in dashboard pages show the full message.
 */
export const PUBLIC_ERROR_WORDING: Readonly<Record<CheckErrorCode, string>> = {
  connection_timeout: "Timed out",
  connection_refused: "Connection refused",
  connection_error: "Connection failed",
  dns_error: "DNS lookup failed",
  dns_nxdomain: "Domain name not found",
  dns_servfail: "DNS server failure",
  dns_timeout: "DNS lookup timed out",
  dns_no_answer: "No DNS answer",
  dns_answer_mismatch: "Unexpected DNS answer",
  tls_error: "Secure connection failed",
  certificate_expired: "Certificate expired",
  certificate_invalid: "Certificate not valid",
  certificate_not_yet_valid: "Certificate not valid yet",
  certificate_self_signed: "Certificate is self signed",
  certificate_hostname_mismatch: "Certificate issued for another name",
  certificate_untrusted: "Certificate issuer not trusted",
  http_error: "Unexpected HTTP response",
  too_many_redirects: "Too many redirects",
  keyword_missing: "Expected content missing",
  content_type_mismatch: "Unexpected content type",
  body_mismatch: "Unexpected response content",
  body_truncated: "Response cut short",
  assertion_failed: "Response check failed",
  synthetic_step_failed: "Scenario step failed",
  ping_not_permitted: "Ping not permitted",
  ping_timeout: "No reply to ping",
  heartbeat_missed: "Heartbeat missed",
  heartbeat_failed: "Heartbeat reported a failure",
  websocket_handshake_failed: "WebSocket connection refused",
  websocket_expect_missing: "Expected WebSocket message missing",
  grpc_not_serving: "Service not serving",
  grpc_error: "Service check failed",
  smtp_error: "Mail server error",
  db_auth_failed: "Database login failed",
  db_query_failed: "Database query failed",
  db_error: "Database error",
  container_not_found: "Container not found",
  container_not_running: "Container not running",
  container_unhealthy: "Container unhealthy",
  docker_error: "Container host unreachable",
  domain_expired: "Domain expired",
  rdap_error: "Domain lookup failed",
  target_blocked: "Target not allowed",
  internal_error: "Check could not run",
};

const KNOWN = new Set<string>(CHECK_ERROR_CODES);

/** The public wording of an error code; a code this build does not know reads "Check failed". */
export function publicErrorWording(code: string | null): string | null {
  if (code === null) return null;
  return KNOWN.has(code) ? PUBLIC_ERROR_WORDING[code as CheckErrorCode] : "Check failed";
}
