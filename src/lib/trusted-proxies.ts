import ipaddr from "ipaddr.js";

/**
 * The operator's proxies (`--trusted-proxy`): single addresses or CIDR ranges, IPv4 or IPv6. An
 * IPv4 address mapped into IPv6 (::ffff:10.0.0.1) matches its IPv4 range.
 */
type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseEntry(entry: string): Range | null {
  const e = entry.trim();
  try {
    if (e.includes("/")) return ipaddr.parseCIDR(e);
    const a = ipaddr.parse(e.replace(/^\[|\]$/g, ""));
    return [a, a.kind() === "ipv4" ? 32 : 128];
  } catch {
    return null;
  }
}

export function isProxyEntry(entry: string): boolean {
  return parseEntry(entry) !== null;
}

export class TrustedProxies {
  private readonly ranges: Range[];

  constructor(entries: readonly string[]) {
    this.ranges = entries.map(parseEntry).filter((r): r is Range => r !== null);
  }

  get size(): number {
    return this.ranges.length;
  }

  /** Whether `ip` (a normalized address, no port or zone) is one of the proxies. */
  has(ip: string): boolean {
    if (!this.ranges.length) return false;
    let a: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      a = ipaddr.process(ip);
    } catch {
      return false;
    }
    return this.ranges.some(([net, bits]) => net.kind() === a.kind() && a.match([net, bits] as never));
  }
}
