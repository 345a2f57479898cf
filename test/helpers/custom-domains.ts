/**
 * Custom domains verified for real (README "Custom domains"): a DNS server on loopback, given to
 * the server under test as --domain-resolver, where a test publishes the TXT record a page asks for.
 *
 * @example const dns = await startDomainDns(); s = await startTestServer(dns.flags); await verifyDomain(s, dns, pageId);
 */
import { expect } from "bun:test";
import type { DnsBehavior } from "./targets.ts";
import { startDnsTarget } from "./targets.ts";
import type { TestServer } from "./server.ts";

export interface DomainDns {
  /** `--domain-resolver 127.0.0.1:<port>` */
  flags: string[];
  /** publishes `value` as the TXT record at _vigil-challenge.<domain>; null takes it away */
  publish(domain: string, value: string | null): void;
  /** makes the lookup of _vigil-challenge.<domain> fail (SERVFAIL) */
  breakLookup(domain: string): void;
  /** the names asked for, in order */
  asked(): string[];
  close(): Promise<void>;
}

export async function startDomainDns(): Promise<DomainDns> {
  const zone: Record<string, DnsBehavior> = {};
  const target = await startDnsTarget(zone);
  return {
    flags: ["--domain-resolver", target.resolver],
    publish(domain, value) {
      const name = `_vigil-challenge.${domain}`;
      if (value === null) delete zone[name];
      else zone[name] = { answers: [{ type: "TXT", name, ttl: 60, data: [value] }] };
    },
    breakLookup(domain) {
      zone[`_vigil-challenge.${domain}`] = { rcode: "SERVFAIL" };
    },
    asked: () => target.queries.map((q) => q.name),
    close: () => target.close(),
  };
}

/** Publishes the page's record and verifies its custom domain through the API, as its owner would. */
export async function verifyDomain(s: TestServer, dns: DomainDns, pageId: number | string, token?: string): Promise<void> {
  const page = await s.api("GET", `/api/v1/status-pages/${pageId}`, undefined, token ? { token } : {});
  const a = page.json.data.attributes;
  dns.publish(a.custom_domain, a.custom_domain_verification.record_value);
  const res = await s.api("POST", `/api/v1/status-pages/${pageId}/custom-domain/verify`, undefined, token ? { token } : {});
  expect({ status: res.status, verified: typeof res.json.data?.attributes?.custom_domain_verified_at }).toEqual({ status: 200, verified: "string" });
}
