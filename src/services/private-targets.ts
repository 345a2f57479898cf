/**
 * The account's private-target rule at create and update time: a monitor whose target (or DNS
 * resolver, or a synthetic step's absolute URL), or a notification channel whose receiver, resolves
 * to a private, loopback or link-local address is a 422 on that attribute, as is a dns monitor
 * without a resolver of its own, so a user learns at once
 * rather than from failed checks. This is a courtesy, not the guard: names can be re-pointed after
 * the check (DNS rebinding), so every connection resolves again and refuses the address it would
 * connect to (net/resolve-host.ts, error target_blocked).
 *
 * Resolution is bounded by RESOLVE_TIMEOUT_MS; a name that does not resolve in time, or at all, is
 * let through (it may resolve later, and the check-time guard applies then).
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isPrivateAddress, privateAddressReason } from "../domain/ip-ranges.ts";
import type { MonitorType } from "../domain/monitor.ts";
import type { ChannelType } from "../domain/notification-channel-schema.ts";
import { splitTarget } from "../domain/monitor-targets.ts";

export const RESOLVE_TIMEOUT_MS = 2000;

const stripBrackets = (h: string) => (h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h);

/** The host of a URL of one of `schemes` (http and https unless told), or null. */
function urlHost(text: string, schemes: readonly string[] = ["http:", "https:"]): string | null {
  try {
    const u = new URL(text);
    return schemes.includes(u.protocol) ? stripBrackets(u.hostname) : null;
  } catch {
    return null;
  }
}

/** The hosts a monitor connects to, by the attribute that names each. */
export function connectedHosts(type: MonitorType, values: Record<string, unknown>): { attr: string; host: string }[] {
  const target = typeof values.target === "string" ? values.target.trim() : "";
  const out: { attr: string; host: string }[] = [];
  const add = (attr: string, host: string | null) => host && out.push({ attr, host });
  switch (type) {
    case "http": {
      add("target", urlHost(target));
      const steps = (values.synthetic_steps_json as { steps?: { url?: unknown }[] } | null)?.steps;
      if (values.synthetic_enabled === true && Array.isArray(steps)) {
        // only literal absolute URLs: a {{variable}} host is known at check time alone
        for (const s of steps) if (typeof s?.url === "string" && !s.url.includes("{{")) add("synthetic_steps_json", urlHost(s.url));
      }
      break;
    }
    case "ssl":
      add("target", /^https:\/\//i.test(target) ? urlHost(target) : stripBrackets(splitTarget(target).host));
      break;
    case "tcp":
    case "grpc":
    case "smtp":
      add("target", stripBrackets(splitTarget(target).host));
      break;
    case "websocket":
      add("target", urlHost(target, ["ws:", "wss:"]));
      break;
    case "postgres":
    case "mysql":
    case "redis":
      add("target", urlHost(target, ["postgres:", "mysql:", "redis:", "rediss:"]));
      break;
    case "docker":
      // the container is named, not connected to; a Docker host over TCP is (a unix socket is local)
      if (typeof values.docker_host === "string") add("docker_host", urlHost(values.docker_host.trim(), ["tcp:", "http:"]));
      break;
    case "domain":
      // the registry's RDAP server is asked about the name, never the name's own host
      break;
    case "ping":
      add("target", stripBrackets(target));
      break;
    case "dns":
      // the name queried is not connected to; the resolver asked is
      if (typeof values.dns_resolver === "string") add("dns_resolver", stripBrackets(splitTarget(values.dns_resolver.trim()).host));
      break;
    case "heartbeat":
      break;
  }
  return out.filter((h) => h.host !== "");
}

/** The first private address `host` is or resolves to, or null (public, unresolvable or too slow). */
export async function privateAddressOf(host: string, timeoutMs = RESOLVE_TIMEOUT_MS): Promise<string | null> {
  if (isIP(host)) return isPrivateAddress(host) ? host : null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const addresses = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    return addresses?.find((a) => isPrivateAddress(a.address))?.address ?? null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Validation messages for the attributes whose hosts are private. `values` are the monitor's
 * attributes after the write; only `changed` attributes are looked at, so editing another field of a
 * monitor created before the flag was turned on is not refused (its checks are).
 */
export async function privateTargetDetails(type: MonitorType, values: Record<string, unknown>, changed: ReadonlySet<string>): Promise<Record<string, string[]>> {
  const hosts = connectedHosts(type, values).filter((h) => changed.has(h.attr) || changed.has("monitor_type") || (h.attr === "synthetic_steps_json" && changed.has("synthetic_enabled")));
  const details = await privateDetails(hosts);
  if (type === "dns" && !values.dns_resolver && (changed.has("dns_resolver") || changed.has("monitor_type"))) (details.dns_resolver ??= []).push(HOST_RESOLVER_REFUSED);
  return details;
}

/**
 * This machine's own resolver may be inside the private network and answer for its names (split
 * horizon, a VPC's resolver, a LAN router): a dns monitor of an account that may not reach private
 * targets names a resolver of its own, judged like any other target (README "Security").
 */
const HOST_RESOLVER_REFUSED =
  "is required for this account: it may not reach private targets, and this machine's own resolver may answer for private names; give a public resolver such as 1.1.1.1 or 9.9.9.9";

async function privateDetails(hosts: { attr: string; host: string }[]): Promise<Record<string, string[]>> {
  const found = await Promise.all(hosts.map(async (h) => ({ ...h, ip: await privateAddressOf(h.host) })));
  const details: Record<string, string[]> = {};
  for (const f of found) {
    if (!f.ip) continue;
    const why = privateAddressReason(f.ip) ?? "a private address";
    const what = f.ip === f.host ? `${f.host} is ${why}` : `${f.host} resolves to ${f.ip}, ${why}`;
    (details[f.attr] ??= []).push(`${what}; this account may not reach private targets`);
  }
  return details;
}

/**
 * The same courtesy for a notification channel's receiver: `url` and `smtp_host` among `changes`;
 * and an apprise channel left without `url` would run the apprise command, whose connections no
 * guard sees (docs/notifications.md "Apprise").
 */
export async function channelPrivateTargetDetails(type: ChannelType, changes: Record<string, unknown>): Promise<Record<string, string[]>> {
  if (type === "apprise" && "url" in changes && changes.url === null) {
    return { url: ["is required for this account: it may not reach private targets, and the connections of the apprise command cannot be checked against that rule; give the URL of an Apprise API server"] };
  }
  const hosts: { attr: string; host: string }[] = [];
  if (typeof changes.url === "string") {
    const host = urlHost(changes.url);
    if (host) hosts.push({ attr: "url", host });
  }
  if (typeof changes.smtp_host === "string" && changes.smtp_host.trim() !== "") hosts.push({ attr: "smtp_host", host: stripBrackets(changes.smtp_host.trim()) });
  return privateDetails(hosts);
}
