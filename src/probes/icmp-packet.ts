/**
 * ICMP echo packets (RFC 792 for IPv4, RFC 4443 for IPv6): building requests and recognising our
 * reply among everything a raw socket receives.
 */
export const ICMP_ECHO_REQUEST = 8;
export const ICMP_ECHO_REPLY = 0;
export const ICMP6_ECHO_REQUEST = 128;
export const ICMP6_ECHO_REPLY = 129;

/** Internet checksum (RFC 1071): one's-complement sum of 16-bit words. */
export function internetChecksum(buf: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i + 1 < buf.length; i += 2) sum += (buf[i] << 8) | buf[i + 1];
  if (buf.length % 2 === 1) sum += buf[buf.length - 1] << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/**
 * Echo request carrying `token` as payload, so a reply can be matched even where the kernel
 * rewrites the identifier (unprivileged datagram sockets). The ICMPv6 checksum covers a pseudo
 * header only the kernel knows, so it is left to the kernel (it always fills it for ICMPv6).
 */
export function echoRequest(v6: boolean, id: number, seq: number, token: Uint8Array): Uint8Array {
  const pkt = new Uint8Array(8 + token.length);
  const view = new DataView(pkt.buffer);
  pkt[0] = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO_REQUEST;
  pkt[1] = 0;
  view.setUint16(4, id & 0xffff);
  view.setUint16(6, seq & 0xffff);
  pkt.set(token, 8);
  if (!v6) view.setUint16(2, internetChecksum(pkt));
  return pkt;
}

export interface EchoMatch {
  v6: boolean;
  /** raw IPv4 sockets deliver the IP header before the ICMP message */
  hasIpHeader: boolean;
  /** null when the kernel owns the identifier (datagram sockets) */
  id: number | null;
  seq: number;
  token: Uint8Array;
}

/** True when `data` is the echo reply to our request. */
export function isOurReply(data: Uint8Array, m: EchoMatch): boolean {
  let off = 0;
  if (m.hasIpHeader) {
    if (data.length < 20 || data[0] >> 4 !== 4) return false;
    off = (data[0] & 0x0f) * 4;
  }
  if (data.length < off + 8 + m.token.length) return false;
  if (data[off] !== (m.v6 ? ICMP6_ECHO_REPLY : ICMP_ECHO_REPLY)) return false;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (m.id !== null && view.getUint16(off + 4) !== (m.id & 0xffff)) return false;
  if (view.getUint16(off + 6) !== (m.seq & 0xffff)) return false;
  for (let i = 0; i < m.token.length; i++) if (data[off + 8 + i] !== m.token[i]) return false;
  return true;
}

/** struct sockaddr_in / sockaddr_in6 for a literal address, port 0 (ICMP has no ports). */
export function sockaddr(ip: string, v6: boolean): Uint8Array {
  if (!v6) {
    const sa = new Uint8Array(16);
    new DataView(sa.buffer).setUint16(0, 2, true); // AF_INET, host byte order (little-endian hosts)
    ip.split(".").forEach((p, i) => (sa[4 + i] = Number(p)));
    return sa;
  }
  const sa = new Uint8Array(28);
  new DataView(sa.buffer).setUint16(0, 10, true); // AF_INET6 on Linux
  sa.set(ipv6Bytes(ip), 8);
  return sa;
}

export function ipv6Bytes(ip: string): Uint8Array {
  const out = new Uint8Array(16);
  let text = ip.split("%")[0];
  const v4tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4tail) {
    const [a, b, c, d] = v4tail[1].split(".").map(Number);
    text = text.slice(0, -v4tail[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, null];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === null ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  groups.forEach((g, i) => {
    const v = parseInt(g || "0", 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out;
}
