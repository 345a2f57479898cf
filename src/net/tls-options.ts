/**
 * TLS settings shared by every probe that speaks TLS: the trust store (system roots plus
 * --extra-ca, since a bare `ca` option would replace the system roots) and SNI rules.
 */
import { rootCertificates, type PeerCertificate } from "node:tls";
import { isIP } from "node:net";
import { MAX_ISSUER_LENGTH } from "../domain/check-result.ts";

export function trustedCas(extraCa: string | undefined): string[] | undefined {
  if (!extraCa || extraCa.trim() === "") return undefined;
  return [...rootCertificates, extraCa];
}

/** SNI must be a host name; RFC 6066 forbids IP literals in server_name. */
export function sniFor(host: string): string | undefined {
  return isIP(host) ? undefined : host;
}

/**
 * Options for a TLS client whose certificate the probe judges itself (judgePeerCertificate): the
 * handshake completes whatever the certificate, and the runtime's host name check, which accepts a
 * name found only in the subject CN, is left out (the chain's verdict stays in `authorized`).
 */
export function judgedTlsOptions(host: string, extraCa: string | undefined) {
  return { servername: sniFor(host), ca: trustedCas(extraCa), rejectUnauthorized: false, checkServerIdentity: () => undefined };
}

/** notAfter of the leaf as epoch ms, or null when the peer sent no certificate. */
export function certNotAfter(cert: PeerCertificate | Record<string, never> | null | undefined): number | null {
  const validTo = (cert as PeerCertificate | undefined)?.valid_to;
  if (!validTo) return null;
  const t = Date.parse(validTo);
  return Number.isFinite(t) ? t : null;
}

/**
 * Who issued the leaf, for people: its issuer's organisation (O), else its common name (CN); null
 * when the peer sent no certificate or its issuer names neither.
 */
export function certIssuer(cert: PeerCertificate | Record<string, never> | null | undefined): string | null {
  const issuer = (cert as PeerCertificate | undefined)?.issuer as Record<string, string | string[] | undefined> | undefined;
  if (!issuer) return null;
  for (const key of ["O", "CN"]) {
    const v = issuer[key];
    const text = (Array.isArray(v) ? v[0] : v)?.trim();
    if (text) return text.slice(0, MAX_ISSUER_LENGTH);
  }
  return null;
}
