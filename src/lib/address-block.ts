import ipaddr from "ipaddr.js";

/**
 * The addresses one client holds, as a limit's key (README "Security", Limits): an IPv4 address
 * alone, and for IPv6 the /64 it is in, since a single host or home is usually given a whole /64 and
 * can walk through it. An IPv4 address mapped into IPv6 is its IPv4 address. Anything that is not an
 * address is its own key.
 *
 * @example addressBlock("2001:db8:1:2::99") === "2001:db8:1:2::/64"
 */
export function addressBlock(ip: string): string {
  if (!ip.includes(":")) return ip;
  let a: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    a = ipaddr.process(ip);
  } catch {
    return ip;
  }
  if (a.kind() === "ipv4") return a.toString();
  const p = (a as ipaddr.IPv6).parts;
  return `${p[0]!.toString(16)}:${p[1]!.toString(16)}:${p[2]!.toString(16)}:${p[3]!.toString(16)}::/64`;
}
