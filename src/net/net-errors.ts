/**
 * Maps socket, DNS and TLS errors from node:net / node:tls to check error codes, with a message a
 * person can act on. Messages carry the error code, never request data (which may hold secrets).
 */
import type { CheckErrorCode } from "../domain/check-result.ts";
import { ProbeFailure } from "../domain/check-failure.ts";

const EXPIRED = new Set(["CERT_HAS_EXPIRED"]);
const INVALID_CERT = new Set([
  "ERR_TLS_CERT_ALTNAME_INVALID", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT", "UNABLE_TO_GET_ISSUER_CERT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED", "CERT_NOT_YET_VALID", "CERT_SIGNATURE_FAILURE", "CERT_REVOKED", "CERT_REJECTED",
  "INVALID_CA", "PATH_LENGTH_EXCEEDED", "INVALID_PURPOSE", "HOSTNAME_MISMATCH", "CERT_CHAIN_TOO_LONG",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE", "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY", "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
]);

/** Code for a certificate verification failure reported by `authorizationError` or an error code. */
export function certErrorCode(code: string): CheckErrorCode | null {
  if (EXPIRED.has(code)) return "certificate_expired";
  if (INVALID_CERT.has(code)) return "certificate_invalid";
  return null;
}

export function netErrorCode(code: string | undefined): CheckErrorCode {
  switch (code) {
    case "ECONNREFUSED": return "connection_refused";
    case "ETIMEDOUT": return "connection_timeout";
    case "ENOTFOUND": case "EAI_AGAIN": case "EAI_FAIL": case "EAI_NONAME": case "EAI_NODATA": return "dns_error";
    case undefined: return "connection_error";
  }
  const cert = certErrorCode(code);
  if (cert) return cert;
  if (code.startsWith("ERR_SSL") || code.startsWith("ERR_TLS") || code.includes("SSL")) return "tls_error";
  return "connection_error";
}

/** Converts anything thrown while talking to `endpoint` into a ProbeFailure. */
export function toProbeFailure(err: unknown, endpoint: string): ProbeFailure {
  if (err instanceof ProbeFailure) return err;
  const e = err as { code?: string; message?: string };
  const code = netErrorCode(e?.code);
  const detail = e?.code ?? "error";
  const why: Record<string, string> = {
    connection_refused: `connection refused by ${endpoint}`,
    connection_timeout: `timed out connecting to ${endpoint}`,
    dns_error: `could not resolve ${endpoint}`,
    certificate_expired: `certificate of ${endpoint} has expired`,
    certificate_invalid: `certificate of ${endpoint} is not trusted`,
    tls_error: `TLS handshake with ${endpoint} failed`,
  };
  return new ProbeFailure(code, `${why[code] ?? `connection to ${endpoint} failed`} (${detail}${e?.message && e.message !== detail ? `: ${e.message}` : ""})`);
}
