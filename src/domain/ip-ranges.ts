/**
 * Which addresses count as private for the private-target rule (README, Security: a tenant must not
 * be able to reach the operator's own network through a check or a notification). Pure: takes the
 * literal address a connection would go to.
 *
 * Addresses are parsed by ipaddr.js, not by pattern: an IPv6 address can carry an IPv4 one in
 * several notations (`::ffff:127.0.0.1`, `::ffff:7f00:1`, `0:0:0:0:0:ffff:127.0.0.1`, `::127.0.0.1`),
 * and the IPv4 address it carries or reaches is the one judged: IPv4-mapped and SIIT (RFC 6145),
 * IPv4-compatible, the NAT64 well-known prefix 64:ff9b::/96 (RFC 6052) and 6to4 (2002::/16).
 */
import ipaddr from "ipaddr.js";

/** IPv4 ranges that are reachable on the internet although ipaddr.js files them as reserved. */
const PUBLIC_RESERVED_V4: [ipaddr.IPv4, number][] = [
  // documentation ranges (RFC 5737): nothing internal lives there, and tests use them as "public"
  [ipaddr.IPv4.parse("192.0.2.0"), 24],
  [ipaddr.IPv4.parse("198.51.100.0"), 24],
  [ipaddr.IPv4.parse("203.0.113.0"), 24],
];

/** The IPv6 documentation prefixes (RFC 3849, RFC 9637), public like their IPv4 counterparts. */
const PUBLIC_RESERVED_V6: [ipaddr.IPv6, number][] = [
  [ipaddr.IPv6.parse("2001:db8::"), 32],
  [ipaddr.IPv6.parse("3fff::"), 20],
];

/** Ranges ipaddr.js names that are ordinary internet unicast for our purpose (anycast services). */
const PUBLIC_V4_RANGES = new Set(["unicast", "amt", "as112"]);
const PUBLIC_V6_RANGES = new Set(["unicast", "amt", "as112v6"]);

const V4_REASONS: Record<string, string> = {
  unspecified: "an unspecified address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT address",
  private: "a private address",
  reserved: "a reserved address",
};

/** Why `ip` is private, in words ("a loopback address"), or null when it is a public address. */
export function privateAddressReason(ip: string): string | null {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    // fail closed: whatever cannot be read as an address is not let through
    return "not a literal IP address";
  }
  return addr.kind() === "ipv4" ? v4Reason(addr as ipaddr.IPv4) : v6Reason(addr as ipaddr.IPv6);
}

export function isPrivateAddress(ip: string): boolean {
  return privateAddressReason(ip) !== null;
}

const V6_REASONS: Record<string, string> = {
  unspecified: "an unspecified address",
  loopback: "a loopback address",
  linkLocal: "a link-local address",
  uniqueLocal: "a unique local address",
  multicast: "a multicast address",
  deprecatedSiteLocal: "a site-local address",
};

function v4Reason(a: ipaddr.IPv4): string | null {
  const range = a.range();
  if (PUBLIC_V4_RANGES.has(range)) return null;
  if (range === "reserved" && PUBLIC_RESERVED_V4.some(([net, bits]) => a.match(net, bits))) return null;
  return V4_REASONS[range] ?? `a ${range} address`;
}

function v6Reason(a: ipaddr.IPv6): string | null {
  const embedded = embeddedV4(a);
  if (embedded) {
    const why = v4Reason(embedded);
    return why ? `an IPv6 form of ${embedded.toString()} (${why})` : null;
  }
  const range = a.range();
  if (PUBLIC_V6_RANGES.has(range)) return null;
  if (range === "reserved" && PUBLIC_RESERVED_V6.some(([net, bits]) => a.match(net, bits))) return null;
  // a Teredo address tunnels to an IPv4 host through a relay; nothing to monitor lives there
  if (range === "teredo") return "a Teredo tunnel address";
  return V6_REASONS[range] ?? `a ${range} address`;
}

/** The IPv4 address an IPv6 address carries or is translated to, or null for a native IPv6 one. */
function embeddedV4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts;
  const low32 = () => new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
  switch (a.range()) {
    case "ipv4Mapped": // ::ffff:0:0/96
    case "rfc6145": // ::ffff:0:0:0/96
      return low32();
    case "rfc6052": // 64:ff9b::/96 well-known, and 64:ff9b:1::/48 local use (judged as its last 32 bits)
      return low32();
    case "6to4": // 2002:AABB:CCDD::/48 carries AA.BB.CC.DD
      return new ipaddr.IPv4([p[1]! >> 8, p[1]! & 0xff, p[2]! >> 8, p[2]! & 0xff]);
  }
  // IPv4-compatible ::a.b.c.d (the first 96 bits zero), except :: and ::1 themselves: deprecated,
  // but some stacks still route it to the IPv4 address
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1)) return low32();
  return null;
}
