/** DNS probe against a dns-packet responder on loopback (UDP, with TCP on the same port). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROBES } from "../../src/probes/index.ts";
import { parseResolver, systemResolver } from "../../src/probes/dns-transport.ts";
import type { DnsRecordType } from "../../src/domain/monitor.ts";
import { startDnsTarget, type DnsTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

let dns: DnsTarget;
const long = Array.from({ length: 40 }, (_, i) => ({ type: "A", name: "big.test", ttl: 60, data: `10.1.0.${i + 1}` }));

beforeAll(async () => {
  dns = await startDnsTarget({
    "a.test": { answers: [{ type: "A", name: "a.test", ttl: 60, data: "192.0.2.10" }, { type: "A", name: "a.test", ttl: 60, data: "192.0.2.11" }] },
    "v6.test": { answers: [{ type: "AAAA", name: "v6.test", ttl: 60, data: "2001:db8::5" }] },
    "www.test": { answers: [{ type: "CNAME", name: "www.test", ttl: 60, data: "Origin.Example.NET" }, { type: "A", name: "origin.example.net", ttl: 60, data: "192.0.2.20" }] },
    "mail.test": { answers: [{ type: "MX", name: "mail.test", ttl: 60, data: { preference: 10, exchange: "mx1.mail.test" } }, { type: "MX", name: "mail.test", ttl: 60, data: { preference: 20, exchange: "mx2.mail.test" } }] },
    "txt.test": { answers: [{ type: "TXT", name: "txt.test", ttl: 60, data: ["v=spf1 ", "-all"] }] },
    "ns.test": { answers: [{ type: "NS", name: "ns.test", ttl: 60, data: "ns1.provider.test" }] },
    "empty.test": { answers: [] },
    "broken.test": { rcode: "SERVFAIL" },
    "refused.test": { rcode: "REFUSED" },
    "silent.test": { silent: true },
    "big.test": { truncate: true, answers: long },
    "slow.test": { delayMs: 300, answers: [{ type: "A", name: "slow.test", ttl: 60, data: "192.0.2.30" }] },
  });
});
afterAll(() => dns.close());

const run = (target: string, type: DnsRecordType, o: Parameters<typeof monitor>[0] = {}) =>
  PROBES.dns(monitor({ monitor_type: "dns", target, dns_record_type: type, dns_resolver: dns.resolver, ...o }), context());

describe("record types", () => {
  test.each([
    ["a.test", "A", ["192.0.2.10", "192.0.2.11"]],
    ["v6.test", "AAAA", ["2001:db8::5"]],
    ["www.test", "CNAME", ["Origin.Example.NET"]],
    ["mail.test", "MX", ["10 mx1.mail.test", "20 mx2.mail.test"]],
    ["txt.test", "TXT", ["v=spf1 -all"]],
    ["ns.test", "NS", ["ns1.provider.test"]],
  ] as [string, DnsRecordType, string[]][])("%s %s answers %p", async (name, type, answers) => {
    const r = await run(name, type);
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", dns_answer: answers, resolved_ip: "127.0.0.1" });
    expect(r.latency_ms).toBeGreaterThanOrEqual(1);
    expect(dns.queries.at(-1)).toEqual({ transport: "udp", name, type });
  });

  test("an A query through a CNAME keeps only the A records", async () => {
    expect((await run("www.test", "A")).dns_answer).toEqual(["192.0.2.20"]);
  });
});

describe("expected answer", () => {
  test.each([
    ["a.test", "A", "192.0.2.11"],
    ["www.test", "CNAME", "origin.example.net."],
    ["mail.test", "MX", "20 MX2.mail.test."],
    ["txt.test", "TXT", "v=spf1 -all"],
    ["ns.test", "NS", "NS1.PROVIDER.TEST"],
  ] as [string, DnsRecordType, string][])("%s %s matches %p", async (name, type, expected) => {
    expect((await run(name, type, { dns_expected_answer: expected })).status).toBe("up");
  });

  test("no answer equal to the expected one is dns_answer_mismatch", async () => {
    const r = await run("a.test", "A", { dns_expected_answer: "192.0.2.99" });
    expect(r).toMatchObject({ status: "down", error_code: "dns_answer_mismatch", dns_answer: ["192.0.2.10", "192.0.2.11"] });
    expect(r.error_message).toBe('expected A "192.0.2.99", got "192.0.2.10", "192.0.2.11"');
    expect((await run("txt.test", "TXT", { dns_expected_answer: "V=SPF1 -ALL" })).error_code).toBe("dns_answer_mismatch");
  });
});

describe("failures", () => {
  test("NXDOMAIN, SERVFAIL, other rcodes and empty answers have distinct codes", async () => {
    expect(await run("nowhere.test", "A")).toMatchObject({ status: "down", error_code: "dns_nxdomain" });
    expect(await run("broken.test", "A")).toMatchObject({ status: "down", error_code: "dns_servfail" });
    const refused = await run("refused.test", "A");
    expect(refused).toMatchObject({ status: "down", error_code: "dns_error" });
    expect(refused.error_message).toContain("REFUSED");
    expect(await run("empty.test", "A")).toMatchObject({ status: "down", error_code: "dns_no_answer", dns_answer: [] });
    expect(await run("a.test", "MX")).toMatchObject({ status: "down", error_code: "dns_no_answer" });
  });

  test("a silent server is dns_timeout within timeout_ms", async () => {
    const r = await run("silent.test", "A", { timeout_ms: 300 });
    expect(r).toMatchObject({ status: "down", error_code: "dns_timeout" });
    expect(r.error_message).toContain("300 ms");
  });
});

test("a truncated UDP answer is asked again over TCP", async () => {
  const before = dns.queries.length;
  const r = await run("big.test", "A");
  expect(r.status).toBe("up");
  expect(r.dns_answer).toHaveLength(40);
  expect(dns.queries.slice(before).map((q) => q.transport)).toEqual(["udp", "tcp"]);
});

test("a slow answer is degraded by api_max_latency_ms", async () => {
  const r = await run("slow.test", "A", { api_max_latency_ms: 1 });
  expect(r.status).toBe("degraded");
  expect(r.latency_ms).toBeGreaterThanOrEqual(300);
  expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 1 ms`);
});

describe("resolver selection", () => {
  test("parses ip, ip:port and [v6]:port", () => {
    expect(parseResolver("10.0.0.1")).toEqual({ host: "10.0.0.1", port: 53 });
    expect(parseResolver("10.0.0.1:5353")).toEqual({ host: "10.0.0.1", port: 5353 });
    expect(parseResolver("[::1]:5353")).toEqual({ host: "::1", port: 5353 });
    expect(parseResolver("::1")).toEqual({ host: "::1", port: 53 });
  });

  test("defaults to the first nameserver of resolv.conf, else 127.0.0.1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-resolv-"));
    try {
      writeFileSync(join(dir, "resolv.conf"), "# comment\nsearch example\nnameserver 10.9.8.7\nnameserver 10.9.8.6\n");
      expect(await systemResolver(join(dir, "resolv.conf"))).toEqual({ host: "10.9.8.7", port: 53 });
      expect(await systemResolver(join(dir, "absent.conf"))).toEqual({ host: "127.0.0.1", port: 53 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
