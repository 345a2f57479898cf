/**
 * Resolves a target host once, up front, so every probe knows the IP it actually connects to
 * (`resolved_ip`), reports resolution failures as dns_error, and can refuse private targets.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isPrivateAddress } from "../domain/ip-ranges.ts";
import { raceDeadline, type Deadline } from "./deadline.ts";
import { ProbeFailure } from "./types.ts";

export interface ResolvedHost {
  /** host name as written in the target, without IPv6 brackets */
  host: string;
  ip: string;
  family: 4 | 6;
}

export function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
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
  if (blockPrivate && isPrivateAddress(ip)) {
    throw new ProbeFailure("target_blocked", `${host} resolves to ${ip}, a private address; private targets are blocked on this instance`, { resolved_ip: ip });
  }
  return { host, ip, family: fam === 6 ? 6 : 4 };
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
