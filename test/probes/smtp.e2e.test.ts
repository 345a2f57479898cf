/**
 * smtp monitors end to end: created through the API of a real server, checked by its scheduler
 * against SMTP servers on loopback (test/helpers/smtp-server.ts), the checks, the monitor's state,
 * its certificate expiry and its incidents read back through the API. One failed check turns a
 * monitor down here (--confirmations 1 in CHECKED_MONITOR_ARGS); the test CA is trusted with --extra-ca.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { certNotAfterOf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { CHECKED_MONITOR_ARGS, createMonitor, incidentsOf, monitorOf, NEXT_RUN_MS, waitForCheck, waitForState } from "../helpers/checked-monitor.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startSmtpServer, type SmtpServer, type SmtpServerOptions } from "../helpers/smtp-server.ts";
import { closedPort } from "../helpers/targets.ts";

let s: TestServer;
let certs: TestCerts;
const targets: SmtpServer[] = [];

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-smtp-e2e-")));
  s = await startTestServer([...CHECKED_MONITOR_ARGS, "--extra-ca", certs.caPath]);
});
afterAll(async () => {
  await s?.stop();
  await Promise.all(targets.map((t) => t.stop()));
  rmSync(certs.dir, { recursive: true, force: true });
});

async function target(o: SmtpServerOptions = {}): Promise<SmtpServer> {
  const t = await startSmtpServer(o);
  targets.push(t);
  return t;
}
const validCert = () => ({ certPath: certs.certPath, keyPath: certs.keyPath });

describe("smtp monitor through the server", () => {
  test("STARTTLS with a trusted certificate: up, its expiry on the check and the monitor; the server stops: down, an incident", async () => {
    const smtp = await target({ cert: validCert() });
    const id = await createMonitor(s, { name: "Mail relay", monitor_type: "smtp", target: `localhost:${smtp.port}`, smtp_security: "starttls" });
    const up = await waitForCheck(s, id);
    expect(up).toMatchObject({ status: "up", error_code: null, resolved_ip: "127.0.0.1" });
    expect(up.latency_ms).toBeNumber();
    const notAfter = certNotAfterOf(certs.certPath);
    expect(Date.parse(up.ssl_not_after!)).toBe(notAfter);
    expect(smtp.commands.map((c) => c.split(" ")[0])).toEqual(["EHLO", "STARTTLS", "EHLO", "QUIT"]);
    const m = await waitForState(s, id, "up");
    expect(Date.parse(m.ssl_expiry_last_not_after)).toBe(notAfter);

    await smtp.stop();
    const down = await waitForCheck(s, id, (c) => c.status === "down", NEXT_RUN_MS);
    expect(down.error_code).toBe("connection_refused");
    await waitForState(s, id, "down");
    expect((await incidentsOf(s, id))[0]).toMatchObject({ status: "open", last_error_code: "connection_refused" });
    // a failed connection saw no certificate: the monitor keeps the expiry it last saw
    expect(Date.parse((await monitorOf(s, id)).ssl_expiry_last_not_after)).toBe(notAfter);
  }, 90_000);

  test("degraded: a certificate that expires in 3 days, under the 14-day default warning", async () => {
    const smtp = await target({ days: 3 });
    const id = await createMonitor(s, { name: "Expiring relay", monitor_type: "smtp", target: `127.0.0.1:${smtp.port}`, smtp_security: "starttls", tls_verify: false });
    const c = await waitForCheck(s, id);
    expect(c.status).toBe("degraded");
    expect(c.degraded_reason).toMatch(/^certificate expires in 2 days \(.+\), within the 14-day warning window$/);
    const notAfter = certNotAfterOf(smtp.certPath);
    expect(Date.parse(c.ssl_not_after!)).toBe(notAfter);
    const m = await waitForState(s, id, "degraded");
    expect(Date.parse(m.ssl_expiry_last_not_after)).toBe(notAfter);
  }, 60_000);

  test("implicit TLS, and plain without a certificate", async () => {
    const smtps = await target({ cert: validCert(), implicitTls: true });
    const plain = await target();
    const tlsId = await createMonitor(s, { name: "SMTPS", monitor_type: "smtp", target: `localhost:${smtps.port}`, smtp_security: "tls", ssl_expiry_warn_days: 30 });
    const plainId = await createMonitor(s, { name: "Plain", monitor_type: "smtp", target: `127.0.0.1:${plain.port}` });
    const t = await waitForCheck(s, tlsId);
    expect(t).toMatchObject({ status: "up", error_code: null });
    expect(Date.parse(t.ssl_not_after!)).toBe(certNotAfterOf(certs.certPath));
    const p = await waitForCheck(s, plainId);
    expect(p).toMatchObject({ status: "up", ssl_not_after: null });
    expect((await monitorOf(s, plainId)).ssl_expiry_last_not_after).toBeNull();
  }, 60_000);

  test("each failure has its code, on the check and on the incident it opens", async () => {
    const badBanner = await target({ mode: "bad-banner" });
    const badEhlo = await target({ mode: "bad-ehlo" });
    const noStarttls = await target({ mode: "no-starttls" });
    const selfSigned = await target({ days: 30 });
    const cases: [string, Record<string, unknown>, string, string?][] = [
      ["bad banner", { target: `127.0.0.1:${badBanner.port}` }, "smtp_error", "554"],
      ["EHLO refused", { target: `127.0.0.1:${badEhlo.port}` }, "smtp_error", "550"],
      ["no STARTTLS", { target: `127.0.0.1:${noStarttls.port}`, smtp_security: "starttls" }, "smtp_error", "does not offer STARTTLS"],
      ["self-signed", { target: `localhost:${selfSigned.port}`, smtp_security: "starttls" }, "certificate_self_signed"],
      ["TLS to a plain server", { target: `127.0.0.1:${badBanner.port}`, smtp_security: "tls" }, "tls_error"],
      ["nothing listening", { target: `127.0.0.1:${await closedPort()}` }, "connection_refused"],
    ];
    const ids = await Promise.all(cases.map(([name, attrs]) => createMonitor(s, { name, monitor_type: "smtp", ...attrs })));
    for (const [i, [name, , code, words]] of cases.entries()) {
      const c = await waitForCheck(s, ids[i]!);
      expect([name, c.status, c.error_code]).toEqual([name, "down", code]);
      if (words) expect(c.error_message).toContain(words);
      await waitForState(s, ids[i]!, "down");
      expect((await incidentsOf(s, ids[i]!))[0]).toMatchObject({ status: "open", last_error_code: code });
    }
  }, 90_000);
});
