/**
 * The gate of every outgoing connection Vigil makes for a check or a notification (README,
 * Security: the private-target guard). A target host is resolved once, up front, and judged; the
 * connection then goes to exactly that address (so `resolved_ip` is the address actually used, a
 * name re-pointed after the check began cannot slip through, and resolution failures are dns_error).
 * Connections also judge the address their socket reached, so a path that forgot to connect to the
 * literal address is refused rather than trusted.
 */
import { lookup } from "node:dns/promises";
import { isIP, type Socket } from "node:net";
import { ProbeFailure } from "../domain/check-failure.ts";
import { privateAddressReason } from "../domain/ip-ranges.ts";
import { raceDeadline, type Deadline } from "./deadline.ts";

export interface ResolvedHost {
  /** host name as written in the target, without IPv6 brackets */
  host: string;
  ip: string;
  family: 4 | 6;
}

export function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** Throws target_blocked when `blockPrivate` is on and `ip` (what `host` names) is not public. */
export function judgeAddress(host: string, ip: string, blockPrivate: boolean): void {
  if (!blockPrivate) return;
  const why = privateAddressReason(ip);
  if (why === null) return;
  const what = host === ip ? `${ip} is ${why}` : `${host} resolves to ${ip}, ${why}`;
  throw new ProbeFailure("target_blocked", `${what}; private targets are blocked for this account`, { resolved_ip: ip });
}

export async function resolveHost(rawHost: string, deadline: Deadline, blockPrivate = false, family: 0 | 4 | 6 = 0): Promise<ResolvedHost> {
  const host = stripBrackets(rawHost);
  let ip = host;
  let fam = isIP(host) as 0 | 4 | 6;
  if (fam === 0) {
    try {
      // getaddrinfo honours /etc/hosts and the system's resolver order, as a browser would.
      const res = await raceDeadline(lookup(host, { family, verbatim: false }), deadline, `resolving ${host}`);
      ip = res.address;
      fam = res.family as 4 | 6;
    } catch (err) {
      if (err instanceof ProbeFailure) throw err;
      const code = (err as { code?: string }).code ?? "error";
      throw new ProbeFailure("dns_error", `could not resolve ${host} (${code})`);
    }
  }
  judgeAddress(host, ip, blockPrivate);
  return { host, ip, family: fam === 6 ? 6 : 4 };
}

/**
 * Destroys `socket` with target_blocked if the address it connected to is not allowed. Sockets are
 * opened to an address resolveHost judged, so this only fires if a path connected elsewhere.
 */
export function guardSocket(socket: Socket, host: string, blockPrivate: boolean): void {
  if (!blockPrivate) return;
  socket.once("connect", () => {
    try {
      judgeAddress(host, socket.remoteAddress ?? "", true);
    } catch (err) {
      socket.destroy(err as Error);
    }
  });
}

/** Splits "host:port", "[v6]:port" or a bare host; `port` is used when the target has none. */
export function splitHostPort(target: string, fallbackPort: number | null): { host: string; port: number | null } {
  const t = target.trim();
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (v6) return { host: v6[1], port: v6[2] ? Number(v6[2]) : fallbackPort };
  // a bare IPv6 literal has several colons and no port
  if ((t.match(/:/g) ?? []).length > 1) return { host: t, port: fallbackPort };
  const m = /^(.*):(\d+)$/.exec(t);
  if (m) return { host: m[1], port: Number(m[2]) };
  return { host: t, port: fallbackPort };
}
