/**
 * The smtp probe against real SMTP servers on loopback (test/helpers/smtp-server.ts): plaintext,
 * STARTTLS and implicit TLS, certificates from a private CA made by openssl at test time, and the
 * server's own self-signed one that expires in 3 days.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SmtpSecurity } from "../../src/domain/monitor.ts";
import { smtpProbe } from "../../src/probes/smtp.ts";
import { certNotAfterOf, makeCerts, makeChains, type TestCerts } from "../helpers/certs.ts";
import { startSmtpServer, type SmtpServer, type SmtpServerOptions } from "../helpers/smtp-server.ts";
import { closedPort } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => { s.destroy(); resolve(true); });
    s.once("error", () => resolve(false));
  });
}

const port25Listens = await listens(25);
let certs: TestCerts;
const started: SmtpServer[] = [];

beforeAll(() => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-smtp-certs-")));
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  rmSync(certs.dir, { recursive: true, force: true });
});

async function server(o: SmtpServerOptions = {}): Promise<SmtpServer> {
  const s = await startSmtpServer(o);
  started.push(s);
  return s;
}
const validCert = () => ({ certPath: certs.certPath, keyPath: certs.keyPath });
const withCa = () => context({ extraCa: certs.caPem });
const check = (target: string, security: SmtpSecurity, o: Parameters<typeof monitor>[0] = {}, ctx = withCa()) =>
  smtpProbe(monitor({ target, smtp_security: security, ...o }), ctx);

describe("up", () => {
  test("none: banner 220 and EHLO 250, then QUIT; no certificate", async () => {
    const s = await server();
    const r = await check(`127.0.0.1:${s.port}`, "none");
    expect(r).toMatchObject({ status: "up", error_code: null, error_message: null, resolved_ip: "127.0.0.1", ssl_not_after: null });
    expect(r.latency_ms).toBeGreaterThan(0);
    expect(r.timings).toMatchObject({ dns_ms: null, tls_ms: null });
    expect(r.timings!.ttfb_ms).not.toBeNull();
    expect(s.commands.map((c) => c.split(" ")[0])).toEqual(["EHLO", "QUIT"]);
  });

  test("starttls: EHLO, STARTTLS, the handshake, EHLO again; the certificate's notAfter is recorded", async () => {
    const s = await server({ cert: validCert() });
    const r = await check(`127.0.0.1:${s.port}`, "starttls");
    expect(r.error_message).toBeNull();
    expect(r.status).toBe("up");
    expect(r.ssl_not_after).toBe(certNotAfterOf(certs.certPath));
    expect(r.ssl_issuer).toBe("Vigil Test Authority");
    expect(r.timings!.tls_ms).not.toBeNull();
    expect(s.commands.map((c) => c.split(" ")[0])).toEqual(["EHLO", "STARTTLS", "EHLO", "QUIT"]);
  });

  test("tls: TLS from the first byte, with SNI and the name check on the target's host name", async () => {
    const s = await server({ cert: validCert(), implicitTls: true });
    const r = await check(`localhost:${s.port}`, "tls");
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", ssl_not_after: certNotAfterOf(certs.certPath) });
    expect(s.commands.map((c) => c.split(" ")[0])).toEqual(["EHLO", "QUIT"]);
  });

  // told by the refusal's message, which names the port tried; a machine running a mail server skips it
  test.skipIf(port25Listens)("the port is 25 unless the target gives one", async () => {
    const r = await check("127.0.0.1", "none");
    expect(r).toMatchObject({ status: "down", error_code: "connection_refused" });
    expect(r.error_message).toContain("127.0.0.1:25");
  });

  test("api_max_latency_ms degrades a slow success", async () => {
    const s = await server();
    const r = await check(`127.0.0.1:${s.port}`, "none", { api_max_latency_ms: 0 });
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 0 ms`);
  });
});

describe("certificates", () => {
  test("a certificate within ssl_expiry_warn_days (default 14) degrades, with ssl_not_after set", async () => {
    const s = await server(); // its own self-signed certificate, 3 days left
    for (const [security, o] of [["starttls", {}], ["tls", { implicitTls: true }]] as const) {
      const target = security === "tls" ? await server(o) : s;
      const r = await check(`127.0.0.1:${target.port}`, security, { tls_verify: false });
      expect(r.error_message).toBeNull();
      expect(r.status).toBe("degraded");
      expect(r.ssl_not_after).toBe(certNotAfterOf(target.certPath));
      expect(r.degraded_reason).toContain("certificate expires in 2 days");
      expect(r.degraded_reason).toContain("14-day");
    }
    // a shorter warning window lets the same certificate pass
    expect((await check(`127.0.0.1:${s.port}`, "starttls", { tls_verify: false, ssl_expiry_warn_days: 1 })).status).toBe("up");
  });

  test("an intermediate the server sends that expires within the window degrades, named, with its date as ssl_not_after", async () => {
    const chains = makeChains(certs);
    const s = await server({ cert: { certPath: chains.expiringIntermediateChainPath, keyPath: certs.keyPath } });
    const notAfter = certNotAfterOf(chains.expiringIntermediatePath);
    const r = await check(`localhost:${s.port}`, "starttls");
    expect(r).toMatchObject({ status: "degraded", error_code: null, ssl_not_after: notAfter });
    expect(r.degraded_reason).toBe(`intermediate certificate "${chains.subjectOf(chains.expiringIntermediatePath)}" expires in ${certs.nearExpiryDays - 1} days (${new Date(notAfter).toISOString()}), within the 14-day warning window`);
  });

  test("an expired certificate is certificate_expired, with tls_verify on or off", async () => {
    const s = await server({ cert: { certPath: certs.expiredCertPath, keyPath: certs.keyPath } });
    for (const tls_verify of [true, false]) {
      const r = await check(`127.0.0.1:${s.port}`, "starttls", { tls_verify });
      expect(r).toMatchObject({ status: "down", error_code: "certificate_expired", ssl_not_after: certNotAfterOf(certs.expiredCertPath) });
      expect(r.error_message).toContain("certificate expired");
    }
  });

  test("tls_verify true refuses the self-signed certificate; false accepts it", async () => {
    const s = await server({ implicitTls: true, days: 90 });
    const refused = await check(`127.0.0.1:${s.port}`, "tls");
    expect(refused).toMatchObject({ status: "down", error_code: "certificate_self_signed", ssl_not_after: certNotAfterOf(s.certPath) });
    expect(refused.error_message).toContain("self-signed");
    expect((await check(`127.0.0.1:${s.port}`, "tls", { tls_verify: false })).status).toBe("up");
    // and after STARTTLS: the session ends at the handshake, nothing more is said over it
    const plain = await server({ days: 90 });
    expect(await check(`127.0.0.1:${plain.port}`, "starttls")).toMatchObject({ status: "down", error_code: "certificate_self_signed" });
    expect(plain.commands.map((c) => c.split(" ")[0])).toEqual(["EHLO", "STARTTLS"]);
  });

  test("a certificate for another name is certificate_hostname_mismatch", async () => {
    const s = await server({ cert: { certPath: certs.wrongHostCertPath, keyPath: certs.keyPath }, implicitTls: true });
    expect(await check(`localhost:${s.port}`, "tls")).toMatchObject({ status: "down", error_code: "certificate_hostname_mismatch" });
  });

  test("tls against a plaintext server is tls_error", async () => {
    const s = await server();
    const r = await check(`127.0.0.1:${s.port}`, "tls");
    expect(r).toMatchObject({ status: "down", error_code: "tls_error" });
    expect(r.error_message).toContain(`127.0.0.1:${s.port}`);
  });
});

describe("down", () => {
  test("a banner other than 220 is smtp_error quoting the server", async () => {
    const s = await server({ mode: "bad-banner" });
    const r = await check(`127.0.0.1:${s.port}`, "none");
    expect(r).toMatchObject({ status: "down", error_code: "smtp_error" });
    expect(r.error_message).toContain(`127.0.0.1:${s.port} answered the connection with "554 5.3.2 localhost has no service for you" instead of 220`);
  });

  test("EHLO refused is smtp_error quoting the server", async () => {
    const s = await server({ mode: "bad-ehlo" });
    const r = await check(`127.0.0.1:${s.port}`, "none");
    expect(r).toMatchObject({ status: "down", error_code: "smtp_error" });
    expect(r.error_message).toContain('answered EHLO with "550 5.7.1 EHLO refused by policy" instead of 250');
  });

  test("STARTTLS not offered is smtp_error, and nothing is asked of a server that did not offer it", async () => {
    const s = await server({ mode: "no-starttls" });
    const r = await check(`127.0.0.1:${s.port}`, "starttls");
    expect(r).toMatchObject({ status: "down", error_code: "smtp_error" });
    expect(r.error_message).toContain("does not offer STARTTLS");
    expect(s.commands.map((c) => c.split(" ")[0])).toEqual(["EHLO"]);
    // the same server is fine for a monitor that asks for no TLS
    expect((await check(`127.0.0.1:${s.port}`, "none")).status).toBe("up");
  });

  test("STARTTLS answered with something other than 220 is smtp_error quoting the server", async () => {
    const s = await server({ mode: "starttls-refused" });
    const r = await check(`127.0.0.1:${s.port}`, "starttls");
    expect(r).toMatchObject({ status: "down", error_code: "smtp_error", ssl_not_after: null });
    expect(r.error_message).toContain('answered STARTTLS with "454 4.7.0 TLS not available due to temporary reason" instead of 220');
  });

  test("a refused port is connection_refused", async () => {
    const port = await closedPort();
    const r = await check(`127.0.0.1:${port}`, "none");
    expect(r).toMatchObject({ status: "down", error_code: "connection_refused" });
    expect(r.error_message).toContain(`127.0.0.1:${port}`);
  });

  test("a server that never sends its banner is connection_timeout at timeout_ms", async () => {
    const s = await server({ mode: "silent" });
    const r = await check(`127.0.0.1:${s.port}`, "none", { timeout_ms: 300 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout" });
    expect(r.error_message).toBe(`timed out after 300 ms waiting for the banner from 127.0.0.1:${s.port}`);
  });

  test("a check cancelled by the scheduler ends at once", async () => {
    const s = await server({ mode: "silent" });
    const controller = new AbortController();
    const pending = check(`127.0.0.1:${s.port}`, "none", { timeout_ms: 30_000 }, context({ signal: controller.signal }));
    // the connection is accepted before the abort, so the wait for the banner is what is cut
    for (let i = 0; i < 500 && s.connections() === 0; i++) await Bun.sleep(10);
    controller.abort();
    expect(await pending).toMatchObject({ status: "down", error_code: "internal_error" });
  });

  test("the private-target rule refuses loopback before connecting", async () => {
    const s = await server();
    const r = await check(`127.0.0.1:${s.port}`, "none", {}, context({ blockPrivateTargets: true }));
    expect(r).toMatchObject({ status: "down", error_code: "target_blocked" });
    expect(s.connections()).toBe(0);
  });
});
