/**
 * A domain's registration expiry through RDAP (RFC 9083), its server found in a bootstrap file
 * (RFC 9224; IANA's unless --rdap-bootstrap names another). README "Domain monitors".
 *
 * Answers are kept 12 hours per bootstrap file and domain, so a registry is asked about a domain
 * twice a day whatever the monitor's interval; a failed lookup is kept 5 minutes, so a failing
 * registry is not asked on every check yet a fix shows within minutes. A timeout or a cancelled
 * check is not kept: it says nothing about the registry.
 *
 * These requests go to the bootstrap file the operator chose and the registries it names, never to
 * an address a tenant gave (the domain name only fills the path), so the private-target rule does
 * not apply to them.
 */
import { ProbeFailure } from "../domain/check-failure.ts";
import { ExpiringMap } from "../lib/expiring-map.ts";
import { raceDeadline, type Deadline } from "../net/deadline.ts";
import { trustedCas } from "../net/tls-options.ts";

export const IANA_RDAP_BOOTSTRAP = "https://data.iana.org/rdap/dns.json";

const ANSWER_TTL_MS = 12 * 3_600_000;
const FAILURE_TTL_MS = 5 * 60_000;
/** domains remembered at once; the oldest answer goes first beyond this */
const MAX_DOMAINS = 10_000;
const MAX_BOOTSTRAPS = 8;
/** far above what a bootstrap file or a domain's answer holds: a bound against a server that never stops sending */
const BOOTSTRAP_BYTES = 4 * 1024 * 1024;
const ANSWER_BYTES = 1024 * 1024;
const USER_AGENT = "Vigil/0.1 (uptime monitor)";

/** what a lookup left behind: its value, or the rdap_error it ended with */
type Kept<T> = { value: T } | { failure: ProbeFailure };

/** bootstrap URL → (domain suffix → RDAP base URL ending in "/") */
const bootstraps = new ExpiringMap<Kept<Map<string, string>>>(MAX_BOOTSTRAPS);
/** "<bootstrap URL> <domain>" → expiry, epoch ms */
const answers = new ExpiringMap<Kept<number>>(MAX_DOMAINS);

export interface LookupContext {
  bootstrapUrl: string;
  now: () => number;
  extraCa?: string;
  deadline: Deadline;
}

export interface Expiry {
  expiresAt: number;
  /** false when the answer came from memory (no request was made) */
  fetched: boolean;
}

const rdapError = (message: string) => new ProbeFailure("rdap_error", message);

/** Runs `work`, keeping what it gives (or the rdap_error it throws) under `key` in `memory`. */
async function remembered<T>(memory: ExpiringMap<Kept<T>>, key: string, now: () => number, work: () => Promise<T>): Promise<{ value: T; fetched: boolean }> {
  const kept = memory.get(key, now());
  if (kept) {
    if ("failure" in kept) throw kept.failure;
    return { value: kept.value, fetched: false };
  }
  try {
    const value = await work();
    memory.set(key, { value }, now() + ANSWER_TTL_MS);
    return { value, fetched: true };
  } catch (err) {
    if (err instanceof ProbeFailure && err.code === "rdap_error") memory.set(key, { failure: err }, now() + FAILURE_TTL_MS);
    throw err;
  }
}

/** GET `url` as JSON, within the deadline and `maxBytes`; every failure says `what` was fetched. */
async function getJson(url: string, what: string, maxBytes: number, c: LookupContext): Promise<{ status: number; json: unknown }> {
  let res: Response;
  try {
    res = await raceDeadline(
      fetch(url, {
        signal: c.deadline.signal,
        redirect: "follow",
        headers: { accept: "application/rdap+json, application/json", "user-agent": USER_AGENT },
        ...(c.extraCa ? { tls: { ca: trustedCas(c.extraCa) } } : {}),
      }),
      c.deadline,
      `fetching ${what}`,
    );
  } catch (err) {
    if (err instanceof ProbeFailure) throw err;
    if (c.deadline.signal.aborted) throw c.deadline.failure(`fetching ${what}`);
    const e = err as { code?: string; message?: string };
    throw rdapError(`could not reach ${what} at ${url} (${e.code ?? e.message ?? "error"})`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { status: res.status, json: null };
  }
  const text = await raceDeadline(readCapped(res, maxBytes, what), c.deadline, `reading ${what}`);
  try {
    return { status: res.status, json: JSON.parse(text) };
  } catch {
    throw rdapError(`${what} at ${url} is not JSON`);
  }
}

async function readCapped(res: Response, maxBytes: number, what: string): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw rdapError(`${what} is larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The bootstrap file's services as suffix → base URL, https preferred (RFC 9224 section 4). */
function parseBootstrap(json: unknown, url: string): Map<string, string> {
  const services = (json as { services?: unknown })?.services;
  if (!Array.isArray(services)) throw rdapError(`the RDAP bootstrap file at ${url} has no "services" list`);
  const map = new Map<string, string>();
  for (const service of services) {
    if (!Array.isArray(service) || !Array.isArray(service[0]) || !Array.isArray(service[1])) continue;
    const urls = (service[1] as unknown[]).filter((u): u is string => typeof u === "string" && /^https?:\/\//i.test(u));
    const base = urls.find((u) => /^https:/i.test(u)) ?? urls[0];
    if (!base) continue;
    for (const suffix of service[0] as unknown[]) {
      if (typeof suffix === "string") map.set(suffix.toLowerCase().replace(/\.$/, ""), base.endsWith("/") ? base : `${base}/`);
    }
  }
  return map;
}

async function bootstrapFor(c: LookupContext): Promise<Map<string, string>> {
  const { value } = await remembered(bootstraps, c.bootstrapUrl, c.now, async () => {
    const { status, json } = await getJson(c.bootstrapUrl, "the RDAP bootstrap file", BOOTSTRAP_BYTES, c);
    if (status !== 200) throw rdapError(`the RDAP bootstrap file at ${c.bootstrapUrl} answered ${status}`);
    return parseBootstrap(json, c.bootstrapUrl);
  });
  return value;
}

/** The base URL serving `domain`: its longest suffix the bootstrap file lists. */
function serverFor(domain: string, services: Map<string, string>, bootstrapUrl: string): string {
  const labels = domain.split(".");
  for (let i = 0; i < labels.length; i++) {
    const base = services.get(labels.slice(i).join("."));
    if (base) return base;
  }
  throw rdapError(`no RDAP server is known for .${labels.at(-1)} (not in the bootstrap file ${bootstrapUrl}); its registry may offer no RDAP`);
}

/** The first `expiration` event's date (RFC 9083 section 4.5), epoch ms. */
function expirationOf(json: unknown, domain: string, server: string): number {
  const events = (json as { events?: unknown })?.events;
  const expiration = Array.isArray(events)
    ? (events as { eventAction?: unknown; eventDate?: unknown }[]).find((e) => typeof e?.eventAction === "string" && e.eventAction.toLowerCase() === "expiration")
    : undefined;
  if (!expiration) throw rdapError(`the RDAP answer of ${server} for ${domain} has no expiration event (some registries publish none)`);
  const at = typeof expiration.eventDate === "string" ? Date.parse(expiration.eventDate) : NaN;
  if (!Number.isFinite(at)) throw rdapError(`the RDAP answer of ${server} for ${domain} has an expiration date that is not a date: ${JSON.stringify(String(expiration.eventDate).slice(0, 60))}`);
  return at;
}

/**
 * When `domain` (lower case, ASCII) stops being registered, from memory or from its registry.
 * Throws rdap_error saying which step failed, or the deadline's failure.
 */
export async function registrationExpiry(domain: string, c: LookupContext): Promise<Expiry> {
  const { value, fetched } = await remembered(answers, `${c.bootstrapUrl} ${domain}`, c.now, async () => {
    const base = serverFor(domain, await bootstrapFor(c), c.bootstrapUrl);
    const server = new URL(base).host;
    const { status, json } = await getJson(`${base}domain/${domain}`, `the RDAP server ${server}`, ANSWER_BYTES, c);
    if (status === 404) throw rdapError(`the RDAP server ${server} has no record of ${domain} (404): is it registered?`);
    if (status !== 200) throw rdapError(`the RDAP server ${server} answered ${status} for ${domain}`);
    return expirationOf(json, domain, server);
  });
  return { expiresAt: value, fetched };
}
