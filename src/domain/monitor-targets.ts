/**
 * What a monitor's `target` must look like per type (docs/monitors.md "Targets": http an absolute
 * http(s) URL, tcp `host:port` (or host with `port`), dns a hostname, ssl `host[:port]` or an https
 * URL, ping a hostname or IP, and the database, container and domain forms of the later types).
 * Each function returns a message, or null when the target is fine.
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

/** The port each database URL scheme uses when the URL names none. */
export const DATABASE_DEFAULT_PORTS: Readonly<Record<string, number>> = { postgres: 5432, mysql: 3306, redis: 6379, rediss: 6379 };

/** A password in a URL's user part (`scheme://user:password@host`), whether or not the rest parses. */
const URL_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:[^/?#@]+@/i;
const PASSWORD_IN_URL = "must not hold a password: send it in db_password, which is write-only and stored encrypted";

/** `scheme://` at the start: a URL where host[:port] is asked for. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const unbracket = (h: string) => h.replace(/^\[(.*)\]$/, "$1");

/** A URL with the given schemes and a host name or IP; null when `t` is not one. */
function parseUrl(t: string, schemes: readonly string[]): URL | null {
  try {
    const u = new URL(t);
    return schemes.includes(u.protocol.slice(0, -1)) && isHostOrIp(unbracket(u.hostname)) ? u : null;
  } catch {
    return null;
  }
}

/** `postgres://user@host[:port][/db]` or `mysql://…`: the user is needed, a password never. */
function databaseUrlProblem(t: string, scheme: "postgres" | "mysql"): string | null {
  if (URL_PASSWORD.test(t)) return PASSWORD_IN_URL;
  const example = `${scheme}://monitor@db.example.com:${DATABASE_DEFAULT_PORTS[scheme]}/app`;
  const u = parseUrl(t, [scheme]);
  if (!u) return `must be a ${scheme}://user@host:port/database URL, e.g. ${example}`;
  if (u.username === "") return `needs the user to log in as, e.g. ${example}`;
  if (u.port !== "" && !validPort(Number(u.port))) return "has a port that is not a number from 1 to 65535";
  if (u.search || u.hash) return "must not have a query or a fragment (TLS is chosen with db_tls)";
  if (!/^(\/[^/]*)?$/.test(u.pathname)) return `names the database as a single path segment, e.g. ${example}`;
  return null;
}

/** `redis://host[:port][/db]` or `rediss://…`: user and password have attributes of their own. */
function redisUrlProblem(t: string): string | null {
  if (URL_PASSWORD.test(t)) return PASSWORD_IN_URL;
  const u = parseUrl(t, ["redis", "rediss"]);
  if (!u) return "must be a redis://host:port or rediss://host:port URL, with an optional database number, e.g. redis://cache.example.com:6379/0";
  if (u.username !== "" || u.password !== "") return "must not hold a user name: send it in redis_username";
  if (u.port !== "" && !validPort(Number(u.port))) return "has a port that is not a number from 1 to 65535";
  if (u.search || u.hash) return "must not have a query or a fragment";
  if (!/^(\/(\d{1,5})?)?$/.test(u.pathname)) return "may end with a database number only, e.g. redis://cache.example.com:6379/2";
  return null;
}

/** Docker's own rule for container names (a letter or digit, then letters, digits, _ . -); ids fit it too. */
const CONTAINER = /^[A-Za-z0-9][A-Za-z0-9_.-]{1,254}$/;

const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/i;
const DOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** A registrable domain name: no scheme, port or path; two labels at least, a top-level domain of letters. */
function domainProblem(t: string): string | null {
  if (/[/:@?#]/.test(t)) return "must be a domain name alone, without scheme, port or path, e.g. example.com";
  const name = t.replace(/\.$/, "");
  if (isIP(name) !== 0) return "must be a domain name, not an IP address, e.g. example.com";
  if (/[^\x21-\x7e]/.test(name)) return "must be written in ASCII: an internationalised name in its xn-- form, e.g. xn--mnchen-3ya.de";
  const labels = name.split(".");
  if (name.length > 253 || !labels.every((l) => DOMAIN_LABEL.test(l))) return "must be a domain name of letters, digits and hyphens, e.g. example.com";
  if (labels.length < 2 || !TLD.test(labels[labels.length - 1]!)) return "must be a registered domain name such as example.com or example.co.uk (a top-level domain alone is not)";
  return null;
}

/** `docker_host`: where the Docker Engine API answers (docs/monitors.md "Docker and domain attributes"). */
export function dockerHostProblem(value: string): string | null {
  const t = value.trim();
  const message = "must be unix:///path/to/docker.sock, tcp://host:port or http://host:port";
  if (t.startsWith("unix://")) return /^unix:\/\/\/[^\s]+$/.test(t) && !t.endsWith("/") ? null : `${message}: a unix socket needs an absolute path, e.g. unix:///var/run/docker.sock`;
  const u = parseUrl(t, ["tcp", "http"]);
  // URL drops a port equal to the scheme's default (http://host:80 has port ""), so the text is asked too
  const port = u?.port || /^[a-z]+:\/\/[^/]*:(\d+)\/?$/i.exec(t)?.[1] || "";
  if (!u || port === "" || u.username !== "" || u.password !== "" || u.search || u.hash || (u.pathname !== "" && u.pathname !== "/")) return `${message}, e.g. tcp://192.0.2.10:2375`;
  return validPort(Number(port)) ? null : "has a port that is not a number from 1 to 65535";
}

/** Where a docker monitor asks when its `docker_host` is null: the local daemon's socket. */
export const DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock";

/** The socket path of a `docker_host` that is a unix socket (null means the default one); null for tcp:// and http://. */
export function dockerSocketPath(dockerHost: string | null): string | null {
  if (dockerHost === null) return DEFAULT_DOCKER_HOST.slice("unix://".length);
  return dockerHost.startsWith("unix://") ? dockerHost.slice("unix://".length) : null;
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
    case "websocket": {
      const u = parseUrl(t, ["ws", "wss"]);
      if (!u) return "must be a ws:// or wss:// URL, e.g. wss://example.com/socket";
      return u.hash ? "must not have a #fragment" : null;
    }
    case "grpc": {
      const { host, port: own } = splitTarget(t);
      if (SCHEME.test(t) || !isHostOrIp(host) || own === null) return "must be host:port, e.g. grpc.example.com:50051";
      return validPort(own) ? null : "has a port that is not a number from 1 to 65535";
    }
    case "smtp": {
      const { host, port: own } = splitTarget(t);
      if (SCHEME.test(t) || !isHostOrIp(host)) return "must be host or host:port (25 by default), e.g. mail.example.com:587";
      return own === null || validPort(own) ? null : "has a port that is not a number from 1 to 65535";
    }
    case "postgres":
    case "mysql":
      return databaseUrlProblem(t, type);
    case "redis":
      return redisUrlProblem(t);
    case "docker":
      return CONTAINER.test(t) ? null : "must be a container name or id: a letter or digit, then letters, digits, _ . or -, e.g. nextcloud or 3f4e8a2b9c1d";
    case "domain":
      return domainProblem(t);
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
