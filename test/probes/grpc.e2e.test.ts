/**
 * grpc monitors end to end: created through the API of a real server, checked by its scheduler
 * against real gRPC health servers on loopback (test/helpers/grpc-health-server.ts), the checks, the
 * monitor's state and its incidents read back through the API. One failed check turns a monitor
 * down here (--confirmations 1 in CHECKED_MONITOR_ARGS); the test CA is trusted with --extra-ca.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { certNotAfterOf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { CHECKED_MONITOR_ARGS, createMonitor, incidentsOf, NEXT_RUN_MS, waitForCheck, waitForState } from "../helpers/checked-monitor.ts";
import { startGrpcHealthServer, type GrpcHealthServer, type GrpcHealthServerOptions } from "../helpers/grpc-health-server.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { closedPort } from "../helpers/targets.ts";

let s: TestServer;
let certs: TestCerts;
const targets: GrpcHealthServer[] = [];

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-grpc-e2e-")));
  s = await startTestServer([...CHECKED_MONITOR_ARGS, "--extra-ca", certs.caPath]);
});
afterAll(async () => {
  await s?.stop();
  await Promise.all(targets.map((t) => t.stop()));
  rmSync(certs.dir, { recursive: true, force: true });
});

async function target(o: GrpcHealthServerOptions = {}): Promise<GrpcHealthServer> {
  const t = await startGrpcHealthServer(o);
  targets.push(t);
  return t;
}

describe("grpc monitor through the server", () => {
  test("SERVING is up; NOT_SERVING is grpc_not_serving, down with an incident; SERVING again resolves it", async () => {
    const grpc = await target({ statuses: { "": "SERVING", "shop.Cart": "SERVING" } });
    const id = await createMonitor(s, { name: "Cart service", monitor_type: "grpc", target: grpc.target, grpc_service: "shop.Cart" });
    const up = await waitForCheck(s, id);
    expect(up).toMatchObject({ status: "up", error_code: null, resolved_ip: "127.0.0.1", ssl_not_after: null });
    expect(up.latency_ms).toBeNumber();
    await waitForState(s, id, "up");

    grpc.setStatus("shop.Cart", "NOT_SERVING");
    const down = await waitForCheck(s, id, (c) => c.status === "down", NEXT_RUN_MS);
    expect(down.error_code).toBe("grpc_not_serving");
    expect(down.error_message).toContain("NOT_SERVING");
    await waitForState(s, id, "down");
    expect((await incidentsOf(s, id))[0]).toMatchObject({ status: "open", last_error_code: "grpc_not_serving" });

    grpc.setStatus("shop.Cart", "SERVING");
    await waitForState(s, id, "up", NEXT_RUN_MS);
    const [incident, ...others] = await incidentsOf(s, id);
    expect(others).toEqual([]);
    expect(incident).toMatchObject({ status: "resolved", last_error_code: "grpc_not_serving" });
  }, 120_000);

  test("TLS with a certificate from the trusted CA: up, its expiry on the check", async () => {
    const grpc = await target({ tls: { certPath: certs.certPath, keyPath: certs.keyPath } });
    const id = await createMonitor(s, { name: "TLS health", monitor_type: "grpc", target: `localhost:${grpc.port}`, grpc_tls: true });
    const c = await waitForCheck(s, id);
    expect(c).toMatchObject({ status: "up", error_code: null });
    expect(Date.parse(c.ssl_not_after!)).toBe(certNotAfterOf(certs.certPath));
    expect(c.timings?.tls_ms).toBeNumber();
  }, 60_000);

  test("degraded: SERVING, but slower than api_max_latency_ms, or over TLS with a certificate close to expiry", async () => {
    // far over the limit: latency within this server's own start lateness is not judged (README, saturation)
    const slow = await target({ delayMs: 1500 });
    const expiring = await target({ tls: { certPath: certs.nearExpiryCertPath, keyPath: certs.keyPath } });
    const slowId = await createMonitor(s, { name: "Slow health", monitor_type: "grpc", target: slow.target, api_max_latency_ms: 50 });
    const expiringId = await createMonitor(s, { name: "Expiring health", monitor_type: "grpc", target: expiring.target, grpc_tls: true });
    const c = await waitForCheck(s, slowId);
    expect(c.status).toBe("degraded");
    expect(c.latency_ms).toBeGreaterThanOrEqual(1500);
    expect(c.degraded_reason).toContain("above 50 ms");
    const e = await waitForCheck(s, expiringId);
    expect(e).toMatchObject({ status: "degraded", error_code: null });
    expect(e.degraded_reason).toContain(`certificate expires in ${certs.nearExpiryDays - 1} days`);
    expect(Date.parse(e.ssl_not_after!)).toBe(certNotAfterOf(certs.nearExpiryCertPath));
    for (const id of [slowId, expiringId]) await waitForState(s, id, "degraded");
  }, 60_000);

  test("each failure has its code, on the check and on the incident it opens", async () => {
    const plain = await target();
    const noHealth = await target({ health: false });
    const cases: [string, Record<string, unknown>, string, string?][] = [
      ["unknown service", { target: plain.target, grpc_service: "shop.Nope" }, "grpc_error", "NOT_FOUND"],
      ["no health service", { target: noHealth.target }, "grpc_error", "UNIMPLEMENTED"],
      ["TLS to a plaintext server", { target: plain.target, grpc_tls: true }, "tls_error"],
      ["nothing listening", { target: `127.0.0.1:${await closedPort()}` }, "connection_refused"],
    ];
    const ids = await Promise.all(cases.map(([name, attrs]) => createMonitor(s, { name, monitor_type: "grpc", ...attrs })));
    for (const [i, [name, , code, words]] of cases.entries()) {
      const c = await waitForCheck(s, ids[i]!);
      expect([name, c.status, c.error_code]).toEqual([name, "down", code]);
      if (words) expect(c.error_message).toContain(words);
      await waitForState(s, ids[i]!, "down");
      expect((await incidentsOf(s, ids[i]!))[0]).toMatchObject({ status: "open", last_error_code: code });
    }
  }, 90_000);
});
