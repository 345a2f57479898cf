/**
 * The domain probe against a real RDAP server on loopback (test/helpers/rdap-server.ts) found
 * through its own bootstrap file. Answers are remembered per bootstrap file and domain for the life
 * of the process, so every test asks about its own domain names.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { domainProbe } from "../../src/probes/domain.ts";
import type { ProbeContext } from "../../src/probes/types.ts";
import { startRdapServer, type RdapServer } from "../helpers/rdap-server.ts";
import { closedPort } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
let rdap: RdapServer;
const inDays = (days: number, from = Date.now()) => new Date(from + days * DAY + HOUR).toISOString();

beforeAll(async () => {
  rdap = await startRdapServer({ tlds: ["test", "co.example"], domains: {} });
});
afterAll(async () => {
  await rdap.stop();
});

const check = (target: string, o: Parameters<typeof monitor>[0] = {}, ctx: Partial<ProbeContext> = {}) =>
  domainProbe(monitor({ target, ...o }), context({ rdapBootstrapUrl: rdap.bootstrapUrl, ...ctx }));

describe("expiry", () => {
  test("an expiration beyond the warning window is up, the date in ssl_not_after, asked as application/rdap+json", async () => {
    const expires = inDays(400);
    rdap.domains["far.test"] = { expires };
    const r = await check("far.test");
    expect(r).toMatchObject({ status: "up", error_code: null, error_message: null, degraded_reason: null, ssl_not_after: Date.parse(expires) });
    expect(r.latency_ms).toBeGreaterThan(0);
    const asked = rdap.requests.filter((q) => q.path === "/rdap/domain/far.test");
    expect(asked).toHaveLength(1);
    expect(asked[0].accept).toContain("application/rdap+json");
  });

  test("within domain_expiry_warn_days (default 30) it is degraded, saying the date and the days left", async () => {
    const expires = inDays(10);
    rdap.domains["soon.test"] = { expires };
    const r = await check("soon.test");
    expect(r).toMatchObject({ status: "degraded", error_code: null, ssl_not_after: Date.parse(expires) });
    expect(r.degraded_reason).toBe(`the registration of soon.test expires in 10 days (${expires}), within the 30-day warning window`);
    expect((await check("soon.test", { domain_expiry_warn_days: 7 })).status).toBe("up");
    expect((await check("soon.test", { domain_expiry_warn_days: 11 })).status).toBe("degraded");
  });

  test("a passed expiration is domain_expired, the date kept", async () => {
    const expires = new Date(Date.now() - 2 * DAY).toISOString();
    rdap.domains["gone.test"] = { expires };
    const r = await check("gone.test");
    expect(r).toMatchObject({ status: "down", error_code: "domain_expired", ssl_not_after: Date.parse(expires) });
    expect(r.error_message).toBe(`the registration of gone.test expired at ${expires}`);
  });

  test("names are asked in lower-case ASCII (IDNs in punycode); the longest suffix of the bootstrap file wins", async () => {
    rdap.domains["xn--bcher-kva.test"] = { expires: inDays(100) };
    expect((await check("Bücher.TEST.")).status).toBe("up");
    expect(rdap.count("/rdap/domain/xn--bcher-kva.test")).toBe(1);
    rdap.domains["shop.co.example"] = { expires: inDays(100) };
    expect((await check("shop.co.example")).status).toBe("up");
  });
});

describe("rdap_error, saying which step failed", () => {
  test("a TLD the bootstrap file does not list", async () => {
    const r = await check("example.nope");
    expect(r).toMatchObject({ status: "down", error_code: "rdap_error", ssl_not_after: null });
    expect(r.error_message).toContain("no RDAP server is known for .nope");
  });

  test("a domain the registry does not know (404)", async () => {
    const r = await check("missing.test");
    expect(r).toMatchObject({ status: "down", error_code: "rdap_error" });
    expect(r.error_message).toBe(`the RDAP server 127.0.0.1:${rdap.port} has no record of missing.test (404): is it registered?`);
  });

  test("an answer without an expiration event", async () => {
    rdap.domains["noexp.test"] = {};
    const r = await check("noexp.test");
    expect(r).toMatchObject({ status: "down", error_code: "rdap_error" });
    expect(r.error_message).toContain("has no expiration event");
  });

  test("an answer that is not JSON, and another status", async () => {
    rdap.domains["garbled.test"] = { rawBody: "<html>busy</html>" };
    expect((await check("garbled.test")).error_message).toContain("is not JSON");
    rdap.domains["limited.test"] = { status: 429 };
    expect(await check("limited.test")).toMatchObject({ error_code: "rdap_error", error_message: `the RDAP server 127.0.0.1:${rdap.port} answered 429 for limited.test` });
  });

  test("an unreachable bootstrap file", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/dns.json`;
    const r = await check("far.test", {}, { rdapBootstrapUrl: url });
    expect(r).toMatchObject({ status: "down", error_code: "rdap_error" });
    expect(r.error_message).toContain(`could not reach the RDAP bootstrap file at ${url}`);
  });

  test("a target that is not a domain name asks nothing", async () => {
    const before = rdap.requests.length;
    for (const target of ["https://far.test/", "far", "a b.test", "../x.test"]) {
      expect(await check(target)).toMatchObject({ status: "down", error_code: "rdap_error" });
    }
    expect(rdap.requests.length).toBe(before);
  });
});

describe("memory", () => {
  test("an answer is kept 12 hours: the second check asks nothing; the bootstrap file is read once for every domain", async () => {
    const own = await startRdapServer({ tlds: ["test"], domains: { "kept.test": { expires: inDays(200) }, "other.test": { expires: inDays(300) } } });
    try {
      let now = Date.now();
      const run = (target: string) => domainProbe(monitor({ target }), context({ rdapBootstrapUrl: own.bootstrapUrl, now: () => now }));
      const first = await run("kept.test");
      expect(first.status).toBe("up");
      own.domains["kept.test"] = { expires: inDays(5) };
      const second = await run("kept.test");
      expect(second).toMatchObject({ status: "up", ssl_not_after: first.ssl_not_after, latency_ms: null });
      expect(own.count("/rdap/domain/kept.test")).toBe(1);
      expect((await run("other.test")).status).toBe("up");
      expect(own.count("/dns.json")).toBe(1);

      now += 12 * HOUR - 1000;
      expect((await run("kept.test")).status).toBe("up");
      now += 2000;
      const later = await run("kept.test");
      expect(later.status).toBe("degraded");
      expect(own.count("/rdap/domain/kept.test")).toBe(2);
    } finally {
      await own.stop();
    }
  });

  test("a failed lookup is kept 5 minutes, not 12 hours", async () => {
    let now = Date.now();
    const ctx = { now: () => now };
    expect((await check("later.test", {}, ctx)).error_code).toBe("rdap_error");
    rdap.domains["later.test"] = { expires: inDays(100) };
    expect((await check("later.test", {}, ctx)).error_code).toBe("rdap_error");
    expect(rdap.count("/rdap/domain/later.test")).toBe(1);
    now += 5 * 60_000 + 1000;
    expect((await check("later.test", {}, ctx)).status).toBe("up");
    expect(rdap.count("/rdap/domain/later.test")).toBe(2);
  });

  test("a timeout is not kept: the next check asks again", async () => {
    rdap.domains["slow.test"] = { hangs: true, expires: inDays(100) };
    const r = await check("slow.test", { timeout_ms: 300 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout" });
    expect(r.error_message).toContain("timed out after 300 ms");
    rdap.domains["slow.test"] = { expires: inDays(100) };
    expect((await check("slow.test")).status).toBe("up");
    expect(rdap.count("/rdap/domain/slow.test")).toBe(2);
  });
});

test("the private-target rule does not apply: the RDAP server is the operator's choice, not the tenant's", async () => {
  rdap.domains["private.test"] = { expires: inDays(100) };
  const r = await check("private.test", { block_private_targets: true }, { blockPrivateTargets: true });
  expect(r).toMatchObject({ status: "up", error_code: null });
});
