/**
 * Maps socket, DNS and TLS errors from node:net / node:tls to check error codes, with a message a
 * person can act on. Messages carry the error code, never request data (which may hold secrets).
 */
import type { CheckErrorCode } from "../domain/check-result.ts";
import { ProbeFailure } from "../domain/check-failure.ts";

/**
 * Certificate verification failures by OpenSSL's code, each with its own check error code and words:
 * a person fixes a self-signed certificate, a wrong host name and an unknown issuer differently.
 */
const CERT_PROBLEMS: Record<string, { code: CheckErrorCode; words: (endpoint: string, host: string) => string }> = {
  CERT_HAS_EXPIRED: { code: "certificate_expired", words: (e) => `the certificate of ${e} has expired` },
  CERT_NOT_YET_VALID: { code: "certificate_not_yet_valid", words: (e) => `the certificate of ${e} is not valid yet (its notBefore is in the future; check the server's and this machine's clocks)` },
  DEPTH_ZERO_SELF_SIGNED_CERT: { code: "certificate_self_signed", words: (e) => `the certificate of ${e} is self-signed; trust its CA with --extra-ca, or set tls_verify to false` },
  SELF_SIGNED_CERT_IN_CHAIN: { code: "certificate_self_signed", words: (e) => `the certificate chain of ${e} ends in a self-signed root that is not trusted; trust it with --extra-ca, or set tls_verify to false` },
  ERR_TLS_CERT_ALTNAME_INVALID: { code: "certificate_hostname_mismatch", words: (e, h) => `the certificate of ${e} is not issued for ${h}` },
  HOSTNAME_MISMATCH: { code: "certificate_hostname_mismatch", words: (e, h) => `the certificate of ${e} is not issued for ${h}` },
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: { code: "certificate_untrusted", words: (e) => `the certificate of ${e} is signed by an issuer this machine does not know (is the intermediate certificate missing from the server's chain?)` },
  UNABLE_TO_GET_ISSUER_CERT: { code: "certificate_untrusted", words: (e) => `the issuer of the certificate of ${e} is unknown (is the intermediate certificate missing from the server's chain?)` },
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: { code: "certificate_untrusted", words: (e) => `the issuer of the certificate of ${e} is not among the trusted roots (add a private CA with --extra-ca)` },
  CERT_UNTRUSTED: { code: "certificate_untrusted", words: (e) => `the certificate of ${e} is not trusted for this purpose` },
  INVALID_CA: { code: "certificate_untrusted", words: (e) => `the chain of ${e} has a CA certificate that may not issue certificates` },
  CERT_REVOKED: { code: "certificate_invalid", words: (e) => `the certificate of ${e} has been revoked` },
};
const OTHER_CERT_ERRORS = new Set([
  "CERT_SIGNATURE_FAILURE", "CERT_REJECTED", "PATH_LENGTH_EXCEEDED", "INVALID_PURPOSE", "CERT_CHAIN_TOO_LONG",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE", "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY", "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
]);

/** Code for a certificate verification failure reported by `authorizationError` or an error code. */
export function certErrorCode(code: string): CheckErrorCode | null {
  return CERT_PROBLEMS[code]?.code ?? (OTHER_CERT_ERRORS.has(code) ? "certificate_invalid" : null);
}

/** The failure for a certificate problem, in its own words; `host` is the name it was checked for. */
export function certFailure(opensslCode: string, endpoint: string, host: string): ProbeFailure {
  const known = CERT_PROBLEMS[opensslCode];
  if (known) return new ProbeFailure(known.code, `${known.words(endpoint, host)} (${opensslCode})`);
  return new ProbeFailure("certificate_invalid", `the certificate of ${endpoint} is not valid (${opensslCode})`);
}

/**
 * A connect that failed with a reset: the handshake completed and the server reset the connection
 * before the connect was reported (a port that refuses answers the SYN itself, ECONNREFUSED). The
 * port accepted the connection, which is what a tcp check asks (docs/monitors.md, tcp).
 */
export function resetAfterAccept(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "ECONNRESET";
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
  if (e?.code && certErrorCode(e.code)) return certFailure(e.code, endpoint, endpoint);
  const code = netErrorCode(e?.code);
  const detail = e?.code ?? "error";
  const why: Record<string, string> = {
    connection_refused: `connection refused by ${endpoint}`,
    connection_timeout: `timed out connecting to ${endpoint}`,
    dns_error: `could not resolve ${endpoint}`,
    tls_error: `TLS handshake with ${endpoint} failed`,
  };
  // Node's own message for a refused or timed-out connect ("connect ECONNREFUSED 127.0.0.1:80")
  // only repeats the code and the address the sentence already names
  const repeats = e?.message === undefined || e.message === detail || /^connect E[A-Z]+ /.test(e.message);
  return new ProbeFailure(code, `${why[code] ?? `connection to ${endpoint} failed`} (${detail}${repeats ? "" : `: ${e.message}`})`);
}
