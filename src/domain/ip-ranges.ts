/**
 * Which addresses count as private for `blockPrivateTargets` (probes run on shared instances must
 * not be usable to scan the operator's own network). Pure: takes a literal IP string.
 */
import { isIP } from "node:net";

function v4Parts(ip: string): number[] {
  return ip.split(".").map(Number);
}

function isPrivateV4(ip: string): boolean {
  const [a, b] = v4Parts(ip);
  return (
    a === 0 || a === 10 || a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224 // multicast and reserved
  );
}

export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return isPrivateV4(ip);
  if (family !== 6) return false;
  const lower = ip.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return isPrivateV4(mapped[1]);
  return (
    lower === "::" || lower === "::1" ||
    /^f[cd]/.test(lower) || // unique local fc00::/7
    /^fe[89ab]/.test(lower) || // link-local fe80::/10
    /^ff/.test(lower) // multicast
  );
}
