/**
 * What a monitor's `target` must look like per type (docs/monitors.md "Targets": http an absolute
 * http(s) URL, tcp `host:port` (or host with `port`), dns a hostname, ssl `host[:port]` or an https
 * URL, ping a hostname or IP). Each function returns a message, or null when the target is fine.
 */
import { isIP } from "node:net";
import type { MonitorType } from "./monitor.ts";

const LABEL = "[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?";
const HOSTNAME = new RegExp(`^(?=.{1,253}\\.?$)${LABEL}(?:\\.${LABEL})*\\.?$`);

export function isHostname(s: string): boolean {
  return HOSTNAME.test(s);
}

export function isHostOrIp(s: string): boolean {
  return isIP(s) !== 0 || isHostname(s);
}

/** "[::1]:443", "host:443", "host", "::1" → host and optional port (NaN when not numeric). */
export function splitTarget(t: string): { host: string; port: number | null } {
  const v6 = /^\[([^\]]+)\](?::(\d*))?$/.exec(t);
  if (v6) return { host: v6[1]!, port: v6[2] === undefined ? null : v6[2] === "" ? NaN : Number(v6[2]) };
  if ((t.match(/:/g) ?? []).length > 1) return { host: t, port: null };
  const i = t.lastIndexOf(":");
  if (i < 0) return { host: t, port: null };
  const p = t.slice(i + 1);
  return { host: t.slice(0, i), port: /^\d{1,5}$/.test(p) ? Number(p) : NaN };
}

const validPort = (p: number) => Number.isInteger(p) && p >= 1 && p <= 65535;

/** "invalid" when `t` is not an absolute URL of the allowed scheme(s) with a host; null when fine. */
function httpUrlProblem(t: string, httpsOnly: boolean): string | null {
  let url: URL;
  try {
    url = new URL(t);
  } catch {
    return "invalid";
  }
  if (httpsOnly ? url.protocol !== "https:" : url.protocol !== "http:" && url.protocol !== "https:") return "invalid";
  if (!url.hostname) return "invalid";
  return null;
}

/** Checks the target of a monitor of `type`; `port` is the monitor's port attribute (tcp). */
export function targetProblem(type: MonitorType, target: string | null, port: number | null): string | null {
  const t = (target ?? "").trim();
  if (type === "heartbeat") return null; // informational only: a heartbeat is pushed, it has no target
  if (t === "") return `is required for ${type} monitors`;
  if (/\s/.test(t)) return "must not contain spaces";
  switch (type) {
    case "http":
      return httpUrlProblem(t, false) ? "must be an absolute http:// or https:// URL, e.g. https://example.com/health" : null;
    case "tcp": {
      const { host, port: own } = splitTarget(t);
      if (!isHostOrIp(host)) return "must be host:port with a hostname or IP address, e.g. db.example.com:5432";
      if (own !== null && !validPort(own)) return "has a port that is not a number from 1 to 65535";
      if (own === null && port === null) return "needs a port: write host:port, or set the port attribute";
      return null;
    }
    case "dns":
      return isHostname(t) && isIP(t) === 0 ? null : "must be a hostname to query, e.g. example.com";
    case "ssl": {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) return httpUrlProblem(t, true) ? "must be host[:port] or an https:// URL, e.g. example.com:443" : null;
      const { host, port: own } = splitTarget(t);
      if (!isHostOrIp(host) || (own !== null && !validPort(own))) return "must be host[:port] or an https:// URL, e.g. example.com:443";
      return null;
    }
    case "ping": {
      const host = t.replace(/^\[(.*)\]$/, "$1");
      return isHostOrIp(host) ? null : "must be a hostname or an IP address, e.g. example.com or 192.0.2.10";
    }
  }
}

/** `dns_resolver`: `ip[:port]` (IPv6 with a port as [ip]:port). */
export function resolverProblem(value: string): string | null {
  const t = value.trim();
  if (isIP(t) !== 0) return null;
  const { host, port } = splitTarget(t);
  if (isIP(host) !== 0 && (port === null || validPort(port))) return null;
  return "must be an IP address with an optional port, e.g. 1.1.1.1 or 1.1.1.1:53 or [2606:4700::1111]:53";
}
