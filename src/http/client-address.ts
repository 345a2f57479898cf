/**
 * The address a request came from (a ping's source, a login's client). The socket's peer address is the truth unless that peer is one of
 * the operator's proxies (`--trusted-proxy`); then X-Forwarded-For is read from the right, skipping
 * trusted hops, and the first untrusted address is the client. Reading from the right matters: the
 * left part of the header is whatever the client chose to send.
 */
import { isIP } from "node:net";
import { TrustedProxies } from "../lib/trusted-proxies.ts";

export function normalizeIp(raw: string | null | undefined): string | null {
  if (!raw) return null;
  let s = raw.trim();
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end > 0) s = s.slice(1, end); // [v6]:port
  } else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(s)) {
    s = s.slice(0, s.lastIndexOf(":")); // v4:port
  }
  const zone = s.indexOf("%");
  if (zone > 0) s = s.slice(0, zone);
  const lower = s.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1]!;
  return isIP(lower) ? lower : null;
}

export function trustedSet(proxies: readonly string[]): TrustedProxies {
  return new TrustedProxies(proxies);
}

export function clientAddress(socketIp: string | null | undefined, forwardedFor: string | null, trusted: TrustedProxies): string | null {
  const peer = normalizeIp(socketIp);
  if (!peer || !forwardedFor || !trusted.has(peer)) return peer;
  const hops = forwardedFor.split(",").map(normalizeIp).filter((h): h is string => h !== null);
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted.has(hops[i]!)) return hops[i]!;
  return hops[0] ?? peer; // every hop is a trusted proxy: the left-most is the closest to the client
}
