import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/**
 * The host names that reach this instance itself: its base URL's and heartbeat URL's hosts, and the
 * machine's own names. A status page's custom_domain may not be one of them (it would take `/` of
 * the instance over; README "Status pages").
 */
export function ownHostNames(urls: readonly string[], machine: readonly string[] = machineHostNames()): string[] {
  const names = new Set<string>();
  for (const u of urls) names.add(normalHost(new URL(u).hostname));
  for (const m of machine) names.add(normalHost(m));
  names.delete("");
  return [...names];
}

/**
 * The machine's host name and, from /etc/hosts, the other names on that name's line, where a fully
 * qualified name usually is ("127.0.1.1 box.example.com box"); no DNS query, so a start never waits.
 */
export function machineHostNames(name = hostname(), hostsText = readHosts()): string[] {
  const out = [name];
  for (const raw of hostsText.split("\n")) {
    const names = raw.replace(/#.*/, "").trim().split(/\s+/).slice(1);
    if (names.some((n) => normalHost(n) === normalHost(name))) out.push(...names);
  }
  return out;
}

function readHosts(): string {
  try {
    return readFileSync("/etc/hosts", "utf8");
  } catch {
    return "";
  }
}

/** Lower case, no trailing dot, IPv6 brackets off: the form names are compared in. */
export function normalHost(h: string): string {
  return h.trim().toLowerCase().replace(/\.$/, "").replace(/^\[(.*)\]$/, "$1");
}
