/**
 * The server's certificate chain, read one way by every probe that speaks TLS (http, synthetic,
 * ssl, websocket, grpc, smtp, redis; docs/monitors.md "Certificates"): the certificate whose expiry
 * the check watches, whether the leaf is issued for the host, and what a verifying client refuses,
 * in words that name the certificate concerned.
 *
 * The runtime decides nothing (judgedTlsOptions): the handshake completes whatever the certificate,
 * so the chain is seen even when it is refused, and each probe refuses it here before it sends a
 * byte of its own over the connection.
 */
import { X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import type { DetailedPeerCertificate, PeerCertificate, TLSSocket } from "node:tls";
import { ProbeFailure } from "../domain/check-failure.ts";
import type { WatchedCertificate } from "../domain/cert-expiry.ts";
import { certFailure } from "./net-errors.ts";
import { certIssuer } from "./tls-options.ts";

/** Characters of a certificate's subject a message quotes at most. */
const MAX_SUBJECT_CHARS = 200;

interface ChainLink {
  x509: X509Certificate;
  /** 0 for the leaf, then each issuer in turn */
  depth: number;
  notAfter: number;
  /** issued by itself: a root, or a self-signed leaf */
  selfSigned: boolean;
}

export interface PeerCertificateVerdict {
  /**
   * The certificate that expires first among the leaf and its intermediates; null when the server
   * sent no certificate. Self-signed roots do not count: a root is this machine's trust anchor (the
   * runtime adds it from the trust store whether or not the server sent it), not the server's to renew.
   */
  watched: WatchedCertificate | null;
  /** who issued the leaf (certIssuer) */
  issuer: string | null;
  /** why a client that verifies refuses the certificate for the host (the chain first, then the name), or null */
  refusal: ProbeFailure | null;
}

/**
 * Judges the certificate `socket` was shown for `host` (the name the monitor targets; `endpoint` is
 * how messages name the server).
 *
 * @example const seen = judgePeerCertificate(socket, "example.com", "example.com:443");
 *          if (m.tls_verify !== false && seen.refusal) throw seen.refusal;
 */
export function judgePeerCertificate(socket: TLSSocket, host: string, endpoint: string): PeerCertificateVerdict {
  const leaf = socket.getPeerCertificate(true) as DetailedPeerCertificate | Record<string, never> | null;
  const chain = chainOf(leaf);
  if (chain.length === 0) return { watched: null, issuer: null, refusal: null };
  const counted = chain.filter((l) => l.depth === 0 || !l.selfSigned);
  const first = counted.reduce((a, b) => (b.notAfter < a.notAfter ? b : a));
  return { watched: { notAfter: first.notAfter, name: nameOf(first) }, issuer: certIssuer(leaf as PeerCertificate), refusal: refusalOf(socket, chain, host, endpoint) };
}

/** The leaf and its issuers as the runtime hands them over, up to a self-signed or repeated certificate. */
function chainOf(leaf: DetailedPeerCertificate | Record<string, never> | null): ChainLink[] {
  const links: ChainLink[] = [];
  const seen = new Set<string>();
  let cert = leaf as DetailedPeerCertificate | undefined;
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(cert.raw);
    } catch {
      break;
    }
    const notAfter = Date.parse(x509.validTo);
    if (!Number.isFinite(notAfter)) break;
    const selfSigned = x509.checkIssued(x509);
    links.push({ x509, depth: links.length, notAfter, selfSigned });
    if (selfSigned) break;
    cert = cert.issuerCertificate;
  }
  return links;
}

function refusalOf(socket: TLSSocket, chain: ChainLink[], host: string, endpoint: string): ProbeFailure | null {
  if (!socket.authorized) {
    const code = String(socket.authorizationError ?? "UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    // the runtime says that a certificate of the chain has expired, not which: the person renewing needs to know
    const expired = code === "CERT_HAS_EXPIRED" ? chain.find((l) => l.notAfter <= Date.now()) : undefined;
    if (expired) return new ProbeFailure("certificate_expired", `${nameOf(expired)} expired at ${new Date(expired.notAfter).toISOString()} (${endpoint})`);
    return certFailure(code, endpoint, host);
  }
  const leaf = chain[0]!.x509;
  if (issuedFor(leaf, host)) return null;
  const failure = certFailure("ERR_TLS_CERT_ALTNAME_INVALID", endpoint, host);
  if (leaf.subjectAltName) return failure;
  return new ProbeFailure(failure.code, `${failure.message}: it has no subjectAltName, and a name found only in its subject CN does not count; reissue it with the name in its subjectAltName`);
}

/**
 * RFC 6125 as browsers and Go apply it: the host is one of the leaf's subjectAltName entries (DNS
 * names, a wildcard standing for one whole leftmost label; IP addresses for an IP target). The
 * subject CN never counts, even without a subjectAltName, where the runtime's own check falls back to it.
 */
export function issuedFor(leaf: X509Certificate, host: string): boolean {
  const name = host.replace(/^\[|\]$/g, "");
  if (isIP(name)) return leaf.checkIP(name) !== undefined;
  return leaf.checkHost(name.replace(/\.$/, ""), { subject: "never", partialWildcards: false }) !== undefined;
}

/**
 * issuedFor as a drop-in for tls.checkServerIdentity, for clients that take one (Bun's SQL client):
 * an error with the runtime's code when the leaf is not issued for `host`.
 */
export function identityError(host: string, cert: PeerCertificate): Error | undefined {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert.raw);
  } catch {
    return Object.assign(new Error(`the certificate for ${host} cannot be read`), { code: "ERR_TLS_CERT_ALTNAME_INVALID" });
  }
  if (issuedFor(leaf, host)) return undefined;
  return Object.assign(new Error(`the certificate is not issued for ${host}`), { code: "ERR_TLS_CERT_ALTNAME_INVALID" });
}

/** How messages name a certificate of the chain: the leaf as "certificate", the others by their subject. */
function nameOf(link: ChainLink): string {
  if (link.depth === 0) return "certificate";
  const subject = link.x509.subject.split("\n").filter((p) => p !== "").join(", ").slice(0, MAX_SUBJECT_CHARS);
  return `${link.selfSigned ? "root" : "intermediate"} certificate "${subject}"`;
}
