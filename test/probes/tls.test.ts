/**
 * HTTPS (http probe) and certificate (ssl probe) checks against loopback servers using a private
 * CA made by openssl at test time, with chains of intermediates the servers send.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROBES } from "../../src/probes/index.ts";
import { certNotAfterOf, makeCerts, makeChains, TEST_CA_ORGANISATION, type TestCerts, type TestChains } from "../helpers/certs.ts";
import { closedPort, startHttpTarget, startHttpsTarget, startTcpTarget, type HttpTarget, type TcpTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

let certs: TestCerts;
let chains: TestChains;
let valid: HttpTarget, near: HttpTarget, expired: HttpTarget, wrongHost: HttpTarget, selfSigned: HttpTarget, future: HttpTarget, plain: HttpTarget;
let expiringIntermediate: HttpTarget, expiredIntermediate: HttpTarget, shortRoot: HttpTarget, cnOnly: HttpTarget;
let silentTcp: TcpTarget;
const routes = { "/": () => new Response("secure hello") };

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-certs-")));
  valid = await startHttpsTarget(certs.certPath, certs.keyPath, routes);
  near = await startHttpsTarget(certs.nearExpiryCertPath, certs.keyPath, routes);
  expired = await startHttpsTarget(certs.expiredCertPath, certs.keyPath, routes);
  wrongHost = await startHttpsTarget(certs.wrongHostCertPath, certs.keyPath, routes);
  selfSigned = await startHttpsTarget(certs.selfSignedCertPath, certs.selfSignedKeyPath, routes);
  future = await startHttpsTarget(certs.notYetValidCertPath, certs.keyPath, routes);
  plain = await startHttpTarget(routes);
  silentTcp = await startTcpTarget();
  chains = makeChains(certs);
  expiringIntermediate = await startHttpsTarget(chains.expiringIntermediateChainPath, certs.keyPath, routes);
  expiredIntermediate = await startHttpsTarget(chains.expiredIntermediateChainPath, certs.keyPath, routes);
  shortRoot = await startHttpsTarget(chains.shortRootChainPath, certs.keyPath, routes);
  cnOnly = await startHttpsTarget(chains.cnOnlyCertPath, certs.keyPath, routes);
});
afterAll(async () => {
  await Promise.all([valid, near, expired, wrongHost, selfSigned, future, plain, expiringIntermediate, expiredIntermediate, shortRoot, cnOnly].map((t) => t.close()));
  await silentTcp.close();
  rmSync(certs.dir, { recursive: true, force: true });
});

const withCa = () => context({ extraCa: certs.caPem });
const https = (url: string, o: Parameters<typeof monitor>[0] = {}, ctx = withCa()) => PROBES.http(monitor({ monitor_type: "http", target: url, ...o }), ctx);
const ssl = (target: string, o: Parameters<typeof monitor>[0] = {}, ctx = withCa()) => PROBES.ssl(monitor({ monitor_type: "ssl", target, ...o }), ctx);

describe("http probe over TLS", () => {
  test("a cert from the extra CA is trusted; notAfter is recorded", async () => {
    const r = await https(`${valid.url}/`, { keyword: "secure" });
    expect(r.error_message).toBeNull();
    expect(r.status).toBe("up");
    expect(r.ssl_not_after).toBe(certNotAfterOf(certs.certPath));
    // the issuer's organisation names who to renew with
    expect(r.ssl_issuer).toBe(TEST_CA_ORGANISATION);
    expect(r.resolved_ip).toBe("127.0.0.1");
  });

  test("SNI and hostname checks use the URL's name (localhost)", async () => {
    const r = await https(`https://localhost:${valid.port}/`);
    expect(r.status).toBe("up");
  });

  test("without the extra CA the private chain is certificate_untrusted, said as an unknown issuer", async () => {
    const r = await https(`${valid.url}/`, {}, context());
    expect(r).toMatchObject({ status: "down", error_code: "certificate_untrusted" });
    expect(r.error_message).toContain("issuer");
    expect(r.error_message).not.toContain("not issued for");
  });

  test("tls_verify false accepts a self-signed certificate", async () => {
    const refused = await https(`${selfSigned.url}/`);
    expect(refused.error_code).toBe("certificate_self_signed");
    expect(refused.error_message).toContain("self-signed");
    expect(refused.error_message).not.toContain("not issued for");
    const r = await https(`${selfSigned.url}/`, { tls_verify: false });
    expect(r.status).toBe("up");
    expect(r.ssl_not_after).toBe(certNotAfterOf(certs.selfSignedCertPath));
    // an issuer without an organisation is named by its common name
    expect(r.ssl_issuer).toBe("localhost");
  });

  test("a certificate close to expiry degrades the check", async () => {
    const r = await https(`${near.url}/`);
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toContain("certificate expires in 4 days");
    expect(r.degraded_reason).toContain("14-day");
    expect((await https(`${near.url}/`, { ssl_expiry_warn_days: 3 })).status).toBe("up");
  });

  test("an expired certificate is certificate_expired, or degraded with tls_verify off", async () => {
    expect(await https(`${expired.url}/`)).toMatchObject({ status: "down", error_code: "certificate_expired" });
    const r = await https(`${expired.url}/`, { tls_verify: false });
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toContain("certificate expired");
  });

  test("a name not in the certificate is certificate_hostname_mismatch, naming the host", async () => {
    const r = await https(`${wrongHost.url}/`);
    expect(r).toMatchObject({ status: "down", error_code: "certificate_hostname_mismatch" });
    expect(r.error_message).toContain("is not issued for 127.0.0.1");
  });

  test("a certificate valid only from a future date is certificate_not_yet_valid", async () => {
    const r = await https(`${future.url}/`);
    expect(r).toMatchObject({ status: "down", error_code: "certificate_not_yet_valid" });
    expect(r.error_message).toContain("not valid yet");
  });

  test("https to a plain HTTP port is tls_error", async () => {
    const r = await https(`https://127.0.0.1:${plain.port}/`);
    expect(r).toMatchObject({ status: "down", error_code: "tls_error" });
    const reset = await https(`https://127.0.0.1:${silentTcp.port}/`);
    expect(reset).toMatchObject({ status: "down", error_code: "tls_error" });
  });
});

describe("ssl probe", () => {
  test("valid chain is up with notAfter and handshake latency", async () => {
    const r = await ssl(`127.0.0.1:${valid.port}`);
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", resolved_ip: "127.0.0.1", ssl_not_after: certNotAfterOf(certs.certPath), ssl_issuer: TEST_CA_ORGANISATION });
    expect(r.latency_ms).toBeGreaterThanOrEqual(1);
  });

  test("host name targets, the port field and https URLs are accepted", async () => {
    expect((await ssl("localhost", { port: valid.port })).status).toBe("up");
    expect((await ssl(`https://localhost:${valid.port}/some/path`)).status).toBe("up");
  });

  test("near expiry is degraded with a reason", async () => {
    const r = await ssl(`localhost:${near.port}`);
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toMatch(/^certificate expires in 4 days \(.+\), within the 14-day warning window$/);
    expect(r.ssl_not_after).toBe(certNotAfterOf(certs.nearExpiryCertPath));
  });

  test("warn days is honoured: 3 days of notice leaves a 5-day cert up", async () => {
    expect((await ssl(`localhost:${near.port}`, { ssl_expiry_warn_days: 3 })).status).toBe("up");
  });

  test("expired is down certificate_expired, with or without tls_verify, and notAfter is kept", async () => {
    for (const tls_verify of [true, false]) {
      const r = await ssl(`localhost:${expired.port}`, { tls_verify });
      expect(r).toMatchObject({ status: "down", error_code: "certificate_expired", ssl_not_after: certNotAfterOf(certs.expiredCertPath), ssl_issuer: TEST_CA_ORGANISATION });
    }
  });

  test("untrusted chain, self-signed, wrong host and not yet valid each have their own code unless tls_verify is off", async () => {
    expect(await ssl(`localhost:${valid.port}`, {}, context())).toMatchObject({ status: "down", error_code: "certificate_untrusted" });
    expect(await ssl(`localhost:${selfSigned.port}`)).toMatchObject({ status: "down", error_code: "certificate_self_signed" });
    expect(await ssl(`localhost:${future.port}`)).toMatchObject({ status: "down", error_code: "certificate_not_yet_valid" });
    const wrong = await ssl(`localhost:${wrongHost.port}`);
    expect(wrong).toMatchObject({ status: "down", error_code: "certificate_hostname_mismatch" });
    expect(wrong.error_message).toContain("is not issued for localhost");
    const relaxed = await ssl(`localhost:${selfSigned.port}`, { tls_verify: false });
    expect(relaxed.status).toBe("up");
    expect(relaxed.ssl_not_after).toBe(certNotAfterOf(certs.selfSignedCertPath));
    expect(relaxed.ssl_issuer).toBe("localhost");
  });

  test("a server that does not speak TLS is tls_error", async () => {
    expect(await ssl(`127.0.0.1:${plain.port}`)).toMatchObject({ status: "down", error_code: "tls_error" });
    expect(await ssl(`127.0.0.1:${silentTcp.port}`)).toMatchObject({ status: "down", error_code: "tls_error" });
  });

  test("closed port, unknown host", async () => {
    expect(await ssl(`127.0.0.1:${await closedPort()}`)).toMatchObject({ status: "down", error_code: "connection_refused" });
    expect(await ssl("no-such-host.invalid")).toMatchObject({ status: "down", error_code: "dns_error" });
  });
});

describe("certificate chains and names, alike for http and ssl", () => {
  const both = (port: number, o: Parameters<typeof monitor>[0] = {}, ctx = withCa()) => Promise.all([https(`https://localhost:${port}/`, o, ctx), ssl(`localhost:${port}`, o, ctx)]);
  const intermediateName = (path: string) => `intermediate certificate "${chains.subjectOf(path)}"`;

  test("an intermediate that expires within the warning window degrades the check, named, though the leaf has months left", async () => {
    const notAfter = certNotAfterOf(chains.expiringIntermediatePath);
    expect(notAfter).toBeLessThan(certNotAfterOf(chains.expiringIntermediateChainPath));
    for (const r of await both(expiringIntermediate.port)) {
      expect(r).toMatchObject({ status: "degraded", error_code: null, ssl_not_after: notAfter, ssl_issuer: TEST_CA_ORGANISATION });
      expect(r.degraded_reason).toBe(`${intermediateName(chains.expiringIntermediatePath)} expires in ${certs.nearExpiryDays - 1} days (${new Date(notAfter).toISOString()}), within the 14-day warning window`);
    }
    for (const r of await both(expiringIntermediate.port, { ssl_expiry_warn_days: 3 })) expect(r.status).toBe("up");
  });

  test("an expired intermediate is certificate_expired naming it, not the leaf, and its date is ssl_not_after", async () => {
    const notAfter = certNotAfterOf(chains.expiredIntermediatePath);
    const said = `${intermediateName(chains.expiredIntermediatePath)} expired at ${new Date(notAfter).toISOString()} (localhost:${expiredIntermediate.port})`;
    const [http, handshake] = await both(expiredIntermediate.port);
    expect(http).toMatchObject({ status: "down", error_code: "certificate_expired", error_message: said });
    expect(handshake).toMatchObject({ status: "down", error_code: "certificate_expired", error_message: said, ssl_not_after: notAfter });
    // nothing was asked of a server whose certificate was refused
    expect(expiredIntermediate.requests).toEqual([]);
    // with tls_verify off an ssl monitor is still down (expiry is what it watches); http only degrades
    const [lenient, sslLenient] = await both(expiredIntermediate.port, { tls_verify: false });
    expect(lenient).toMatchObject({ status: "degraded", ssl_not_after: notAfter });
    expect(lenient.degraded_reason).toBe(`${intermediateName(chains.expiredIntermediatePath)} expired at ${new Date(notAfter).toISOString()}`);
    expect(sslLenient).toMatchObject({ status: "down", error_code: "certificate_expired", error_message: said });
  });

  test("a root from the trust store that the server does not send is not watched: its own expiry does not degrade the chain under it", async () => {
    const ctx = context({ extraCa: chains.shortRootPem });
    for (const r of await both(shortRoot.port, {}, ctx)) {
      expect(r).toMatchObject({ status: "up", error_code: null, ssl_not_after: certNotAfterOf(chains.shortRootChainPath) });
    }
  });

  test("a host name found only in the subject CN, with no subjectAltName, is certificate_hostname_mismatch", async () => {
    for (const host of ["localhost", "127.0.0.1"]) {
      const r = await https(`https://${host}:${cnOnly.port}/`);
      expect(r).toMatchObject({ status: "down", error_code: "certificate_hostname_mismatch" });
      expect(r.error_message).toContain(`is not issued for ${host}`);
      expect(r.error_message).toContain("no subjectAltName");
      const handshake = await ssl(`${host}:${cnOnly.port}`);
      expect(handshake).toMatchObject({ status: "down", error_code: "certificate_hostname_mismatch", ssl_not_after: certNotAfterOf(chains.cnOnlyCertPath) });
    }
    expect(cnOnly.requests).toEqual([]);
    for (const r of await both(cnOnly.port, { tls_verify: false })) expect(r.status).toBe("up");
  });
});

describe("connection timings", () => {
  test("an https check by name records when the name resolved, TCP connected, TLS was up and the first byte came, in that order", async () => {
    const r = await https(`https://localhost:${valid.port}/`);
    expect(r.status).toBe("up");
    const t = r.timings!;
    for (const v of [t.dns_ms, t.connect_ms, t.tls_ms, t.ttfb_ms]) expect(Number.isInteger(v)).toBe(true);
    expect(t.dns_ms!).toBeLessThanOrEqual(t.connect_ms!);
    expect(t.connect_ms!).toBeLessThanOrEqual(t.tls_ms!);
    expect(t.tls_ms!).toBeLessThanOrEqual(t.ttfb_ms!);
    expect(t.ttfb_ms!).toBeLessThanOrEqual(r.latency_ms!);
  });

  test("an IP target has no DNS step; plain http has no TLS step; ssl and tcp checks record theirs", async () => {
    const byIp = await https(`${valid.url}/`);
    expect(byIp.timings).toMatchObject({ dns_ms: null, tls_ms: expect.any(Number) });
    const plainHttp = await PROBES.http(monitor({ monitor_type: "http", target: `${plain.url}/` }), context());
    expect(plainHttp.timings).toMatchObject({ dns_ms: null, connect_ms: expect.any(Number), tls_ms: null, ttfb_ms: expect.any(Number) });
    const handshake = await ssl(`localhost:${valid.port}`);
    expect(handshake.timings).toMatchObject({ dns_ms: expect.any(Number), connect_ms: expect.any(Number), tls_ms: expect.any(Number), ttfb_ms: null });
    const tcp = await PROBES.tcp(monitor({ monitor_type: "tcp", target: `localhost:${silentTcp.port}` }), context());
    expect(tcp.timings).toMatchObject({ dns_ms: expect.any(Number), connect_ms: expect.any(Number), tls_ms: null, ttfb_ms: null });
  });
});
