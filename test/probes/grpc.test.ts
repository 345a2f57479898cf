/**
 * grpc probe against real gRPC health servers (@grpc/grpc-js with the gRPC project's health service,
 * test/helpers/grpc-health-server.ts) on loopback: plaintext and TLS with openssl-made certificates.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProbeMonitor } from "../../src/domain/monitor.ts";
import { grpcProbe } from "../../src/probes/grpc.ts";
import { certNotAfterOf, makeCerts, makeChains, type TestCerts } from "../helpers/certs.ts";
import { startGrpcHealthServer, type GrpcHealthServer } from "../helpers/grpc-health-server.ts";
import { closedPort, startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

let certs: TestCerts;
let plain: GrpcHealthServer, secure: GrpcHealthServer, selfSigned: GrpcHealthServer, noHealth: GrpcHealthServer, slow: GrpcHealthServer, hung: GrpcHealthServer;
let http1: HttpTarget;
const SLOW_MS = 400;

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-grpc-certs-")));
  plain = await startGrpcHealthServer({ statuses: { "": "SERVING", "shop.Cart": "SERVING" } });
  secure = await startGrpcHealthServer({ tls: { certPath: certs.certPath, keyPath: certs.keyPath } });
  selfSigned = await startGrpcHealthServer({ tls: { certPath: certs.selfSignedCertPath, keyPath: certs.selfSignedKeyPath } });
  noHealth = await startGrpcHealthServer({ health: false });
  slow = await startGrpcHealthServer({ delayMs: SLOW_MS });
  hung = await startGrpcHealthServer({ delayMs: 60_000 });
  http1 = await startHttpTarget({ "/": () => new Response("not grpc") });
});
afterAll(async () => {
  await Promise.all([plain, secure, selfSigned, noHealth, slow, hung].map((s) => s?.stop()));
  await http1?.close();
  rmSync(certs.dir, { recursive: true, force: true });
});

// monitor_type stays the fixture's default: the probe reads only its own fields
const check = (target: string, o: Partial<ProbeMonitor> = {}, ctx = context({ extraCa: certs.caPem })) => grpcProbe(monitor({ target, ...o }), ctx);

/** Established TCP connections whose local port is `port` (the server's side), read from the kernel. */
function establishedOn(port: number): number {
  let count = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 3 && Number.parseInt(f[1]!.split(":")[1]!, 16) === port && f[3] === "01") count++;
    }
  }
  return count;
}

async function settles<T>(read: () => T, want: T, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  let seen = read();
  while (seen !== want && Date.now() < until) {
    await Bun.sleep(20);
    seen = read();
  }
  return seen;
}

describe("plaintext", () => {
  test("a SERVING server is up, with the IP connected to and the answer's timings; the connection is closed after", async () => {
    const r = await check(plain.target);
    expect(r).toMatchObject({ status: "up", error_code: null, error_message: null, resolved_ip: "127.0.0.1", ssl_not_after: null });
    expect(r.latency_ms).toBeGreaterThanOrEqual(1);
    expect(r.timings).toMatchObject({ dns_ms: null, tls_ms: null });
    expect(r.timings!.ttfb_ms).not.toBeNull();
    expect(await settles(() => establishedOn(plain.port), 0)).toBe(0);
  });

  test("a host name is resolved and judged, the call still names it", async () => {
    const r = await check(`localhost:${plain.port}`);
    expect(r).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
    expect(r.timings!.dns_ms).not.toBeNull();
    expect((await check("127.0.0.1", { port: plain.port })).status).toBe("up");
  });

  test("grpc_service asks about one service; its status follows the server's", async () => {
    expect((await check(plain.target, { grpc_service: "shop.Cart" })).status).toBe("up");
    plain.setStatus("shop.Cart", "NOT_SERVING");
    const r = await check(plain.target, { grpc_service: "shop.Cart" });
    expect(r).toMatchObject({ status: "down", error_code: "grpc_not_serving" });
    expect(r.error_message).toBe(`${plain.target} reports service "shop.Cart" as NOT_SERVING`);
    expect(r.latency_ms).toBeGreaterThanOrEqual(1);
    // the server as a whole is another entry
    expect((await check(plain.target)).status).toBe("up");
    plain.setStatus("shop.Cart", "SERVING");
    expect((await check(plain.target, { grpc_service: "shop.Cart" })).status).toBe("up");
  });

  test("UNKNOWN and SERVICE_UNKNOWN are not serving either, and the message says which", async () => {
    for (const status of ["UNKNOWN", "SERVICE_UNKNOWN"] as const) {
      plain.setStatus("shop.Stock", status);
      const r = await check(plain.target, { grpc_service: "shop.Stock" });
      expect(r).toMatchObject({ status: "down", error_code: "grpc_not_serving" });
      expect(r.error_message).toEndWith(` as ${status}`);
    }
    plain.setStatus("", "NOT_SERVING");
    const whole = await check(plain.target);
    plain.setStatus("", "SERVING");
    expect(whole.error_message).toBe(`${plain.target} reports the server as NOT_SERVING`);
  });

  test("a long service name reaches the server intact", async () => {
    const name = `svc.${"x".repeat(300)}`;
    plain.setStatus(name, "SERVING");
    expect((await check(plain.target, { grpc_service: name })).status).toBe("up");
  });

  test("a service the server does not know is grpc_error with the gRPC status", async () => {
    const r = await check(plain.target, { grpc_service: "no.Such" });
    expect(r).toMatchObject({ status: "down", error_code: "grpc_error" });
    expect(r.error_message).toBe(`${plain.target} answered NOT_FOUND: Health status unknown for service no.Such`);
  });

  test("a server without the health service is grpc_error UNIMPLEMENTED", async () => {
    const r = await check(noHealth.target);
    expect(r).toMatchObject({ status: "down", error_code: "grpc_error" });
    expect(r.error_message).toStartWith(`${noHealth.target} answered UNIMPLEMENTED`);
  });

  test("a server that is not gRPC (HTTP/1.1) is grpc_error", async () => {
    const r = await check(`127.0.0.1:${http1.port}`);
    expect(r).toMatchObject({ status: "down", error_code: "grpc_error" });
    expect(r.error_message).toContain("gRPC server");
  });
});

describe("network failures", () => {
  test("a closed port is connection_refused", async () => {
    const port = await closedPort();
    const r = await check(`127.0.0.1:${port}`);
    expect(r).toMatchObject({ status: "down", error_code: "connection_refused", resolved_ip: "127.0.0.1" });
    expect(r.error_message).toContain(`127.0.0.1:${port}`);
  });

  test("an answer later than timeout_ms is connection_timeout", async () => {
    const r = await check(hung.target, { timeout_ms: 100 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout" });
    expect(r.error_message).toBe(`timed out after 100 ms waiting for the answer of ${hung.target}`);
    expect(await settles(() => establishedOn(hung.port), 0)).toBe(0);
  });

  test("an unresolvable host is dns_error; a target without a port is refused before connecting", async () => {
    expect(await check("no-such-host.invalid:50051")).toMatchObject({ status: "down", error_code: "dns_error" });
    const r = await check("127.0.0.1");
    expect(r).toMatchObject({ status: "down", error_code: "connection_error" });
    expect(r.error_message).toContain("port");
  });

  test("a private target is target_blocked when the rule is on, from the context or the monitor", async () => {
    expect(await check(plain.target, {}, context({ blockPrivateTargets: true }))).toMatchObject({ status: "down", error_code: "target_blocked" });
    expect(await check(`localhost:${plain.port}`, { block_private_targets: true })).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
  });

  test("the scheduler's signal cancels a check in flight", async () => {
    const controller = new AbortController();
    const pending = check(hung.target, {}, context({ signal: controller.signal }));
    await Bun.sleep(50);
    controller.abort();
    const r = await pending;
    expect(r).toMatchObject({ status: "down", error_code: "internal_error" });
    expect(r.error_message).toContain("cancelled");
  });
});

describe("TLS", () => {
  test("a certificate from the extra CA is trusted; its notAfter is recorded", async () => {
    const r = await check(secure.target, { grpc_tls: true });
    expect(r).toMatchObject({ status: "up", error_message: null, ssl_not_after: certNotAfterOf(certs.certPath) });
    expect(r.timings!.tls_ms).not.toBeNull();
    expect((await check(`localhost:${secure.port}`, { grpc_tls: true })).status).toBe("up");
    expect(await settles(() => establishedOn(secure.port), 0)).toBe(0);
  });

  test("without the extra CA the chain is certificate_untrusted", async () => {
    const r = await check(secure.target, { grpc_tls: true }, context());
    expect(r).toMatchObject({ status: "down", error_code: "certificate_untrusted", ssl_not_after: certNotAfterOf(certs.certPath) });
  });

  test("a self-signed certificate fails with tls_verify and passes without; notAfter is recorded both ways", async () => {
    const notAfter = certNotAfterOf(certs.selfSignedCertPath);
    const refused = await check(selfSigned.target, { grpc_tls: true });
    expect(refused).toMatchObject({ status: "down", error_code: "certificate_self_signed", ssl_not_after: notAfter });
    const r = await check(selfSigned.target, { grpc_tls: true, tls_verify: false });
    expect(r).toMatchObject({ status: "up", ssl_not_after: notAfter });
  });

  test("a certificate within the 14-day warning is degraded; an expired one accepted with tls_verify off is degraded, saying so", async () => {
    const nearExpiry = await startGrpcHealthServer({ tls: { certPath: certs.nearExpiryCertPath, keyPath: certs.keyPath } });
    const expired = await startGrpcHealthServer({ tls: { certPath: certs.expiredCertPath, keyPath: certs.keyPath } });
    try {
      const notAfter = certNotAfterOf(certs.nearExpiryCertPath);
      const r = await check(nearExpiry.target, { grpc_tls: true });
      expect(r).toMatchObject({ status: "degraded", error_code: null, ssl_not_after: notAfter });
      expect(r.degraded_reason).toBe(`certificate expires in ${certs.nearExpiryDays - 1} days (${new Date(notAfter).toISOString()}), within the 14-day warning window`);
      const gone = await check(expired.target, { grpc_tls: true, tls_verify: false });
      expect(gone).toMatchObject({ status: "degraded", ssl_not_after: certNotAfterOf(certs.expiredCertPath) });
      expect(gone.degraded_reason).toStartWith("certificate expired at");
      expect(await check(expired.target, { grpc_tls: true })).toMatchObject({ status: "down", error_code: "certificate_expired" });
    } finally {
      await Promise.all([nearExpiry.stop(), expired.stop()]);
    }
  });

  test("a certificate naming the host only in its subject CN, without subjectAltName, is certificate_hostname_mismatch", async () => {
    const chains = makeChains(certs);
    const cnOnly = await startGrpcHealthServer({ tls: { certPath: chains.cnOnlyCertPath, keyPath: certs.keyPath } });
    try {
      const r = await check(`localhost:${cnOnly.port}`, { grpc_tls: true });
      expect(r).toMatchObject({ status: "down", error_code: "certificate_hostname_mismatch", ssl_not_after: certNotAfterOf(chains.cnOnlyCertPath) });
      expect(r.error_message).toContain("no subjectAltName");
      expect(await check(`localhost:${cnOnly.port}`, { grpc_tls: true, tls_verify: false })).toMatchObject({ status: "up" });
    } finally {
      await cnOnly.stop();
    }
  });

  test("TLS against a plaintext server is tls_error; plaintext against a TLS server is grpc_error", async () => {
    const r = await check(plain.target, { grpc_tls: true });
    expect(r).toMatchObject({ status: "down", error_code: "tls_error" });
    expect(r.error_message).toContain("grpc_tls");
    const p = await check(secure.target);
    expect(p).toMatchObject({ status: "down", error_code: "grpc_error" });
    expect(p.error_message).toContain("grpc_tls");
  });
});

test("an answer slower than api_max_latency_ms is degraded", async () => {
  const r = await check(slow.target, { api_max_latency_ms: 50 });
  expect(r.status).toBe("degraded");
  expect(r.latency_ms).toBeGreaterThanOrEqual(SLOW_MS);
  expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 50 ms`);
  expect((await check(plain.target, { api_max_latency_ms: 60_000 })).status).toBe("up");
});
