/**
 * Where a monitor's write-only secrets may go (README, Security: secrets are bound to where they
 * were given). An http monitor's secrets are sent only to the origins the monitor named when the
 * secret was written: its target's origin (with `port` applied) and, in synthetic mode, the origins
 * of steps whose URL names a literal host. A database or redis monitor's `db_password` goes only to
 * the host and port its target named. Moving the monitor elsewhere needs the secrets sent again, so
 * a token that may write monitors cannot redirect a stored credential to a server of its own.
 */
import { DATABASE_DEFAULT_PORTS } from "./monitor-targets.ts";

export interface OriginInputs {
  target?: unknown;
  port?: unknown;
  synthetic_enabled?: unknown;
  synthetic_steps_json?: unknown;
}

/** `scheme://host[:port]` of an http(s) URL, with `port` replacing the URL's own; null when not one. */
export function originOf(url: string, port: number | null = null, base?: string): string | null {
  try {
    const u = new URL(url, base);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    if (port !== null) u.port = String(port);
    return u.origin;
  } catch {
    return null;
  }
}

/** The origin a step URL names, or null when a {{variable}} decides it (known only at check time). */
function stepOrigin(url: string, target: string | null): string | null {
  const prefix = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url)?.[0];
  if (prefix === undefined) return target === null ? null : originOf(url.replace(/\{\{[^}]*\}\}/g, "x"), null, target);
  return prefix.includes("{{") ? null : originOf(prefix);
}

/** The origins this monitor's secrets are bound to. */
export function secretOrigins(m: OriginInputs): Set<string> {
  const out = new Set<string>();
  const target = typeof m.target === "string" ? m.target : null;
  const targetOrigin = target === null ? null : originOf(target, typeof m.port === "number" ? m.port : null);
  if (targetOrigin) out.add(targetOrigin);
  const steps = (m.synthetic_steps_json as { steps?: { url?: unknown }[] } | null | undefined)?.steps;
  if (m.synthetic_enabled === true && Array.isArray(steps)) {
    // relative step URLs are taken against the target with its port applied, as the probe does
    const base = targetOrigin ?? target;
    for (const s of steps) {
      if (typeof s?.url !== "string") continue;
      const o = stepOrigin(s.url, base);
      if (o) out.add(o);
    }
  }
  return out;
}

/** Origins of `after` that `before` did not name: where stored secrets would newly be sent. */
export function newOrigins(before: OriginInputs, after: OriginInputs): string[] {
  const had = secretOrigins(before);
  return [...secretOrigins(after)].filter((o) => !had.has(o));
}

/**
 * `host:port` of a database or redis target URL, the scheme's default port applied; null when the
 * target is not one. The scheme is left out: redis:// and rediss:// reach the same server.
 */
export function databaseOrigin(target: unknown): string | null {
  if (typeof target !== "string") return null;
  try {
    const u = new URL(target.trim());
    const port = u.port || DATABASE_DEFAULT_PORTS[u.protocol.slice(0, -1)];
    return u.hostname && port ? `${u.hostname.toLowerCase()}:${port}` : null;
  } catch {
    return null;
  }
}
