/**
 * The target of a postgres, mysql or redis monitor: a URL naming the server, the user and the
 * database (README "PostgreSQL", "MySQL and MariaDB", "Redis"). The password is never in it: it
 * comes from db_password. A password found in the URL anyway is not used, and is masked like one.
 */
import { ProbeFailure } from "../domain/check-failure.ts";
import { stripBrackets } from "../net/resolve-host.ts";

export interface DbTarget {
  scheme: string;
  /** as written, without IPv6 brackets */
  host: string;
  port: number;
  /** "" when the URL names none */
  user: string;
  /** the path without its leading "/", decoded; "" when the URL names none */
  database: string;
  /** a password written into the URL, to be masked (validation refuses such a URL) */
  urlPassword: string | null;
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Parses `target`; throws db_error naming the expected shape (`example`) when it is not such a URL. */
export function parseDbTarget(target: string | null, schemes: readonly string[], defaultPort: number, example: string): DbTarget {
  const bad = () => new ProbeFailure("db_error", `target is not a URL like ${example}`);
  let url: URL;
  try {
    url = new URL((target ?? "").trim());
  } catch {
    throw bad();
  }
  const scheme = url.protocol.replace(/:$/, "").toLowerCase();
  if (!schemes.includes(scheme) || !url.hostname) throw bad();
  const port = url.port ? Number(url.port) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad();
  return {
    scheme,
    host: stripBrackets(url.hostname),
    port,
    user: decode(url.username),
    database: decode(url.pathname.replace(/^\//, "")),
    urlPassword: url.password ? decode(url.password) : null,
  };
}

/** "host:port", IPv6 in brackets: how messages name the server. */
export function endpointOf(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}
