/**
 * websocket monitors end to end: created through the API of a real server, checked by its scheduler
 * against WebSocket servers on loopback (test/helpers/websocket-server.ts), the checks, the
 * monitor's state and its incidents read back through the API. One failed check turns a monitor
 * down here (--confirmations 1 in CHECKED_MONITOR_ARGS); the test CA is trusted with --extra-ca.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { certNotAfterOf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { CHECKED_MONITOR_ARGS, createMonitor, incidentsOf, monitorOf, NEXT_RUN_MS, waitForCheck, waitForState } from "../helpers/checked-monitor.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { closedPort } from "../helpers/targets.ts";
import { startWebsocketServer, type WebsocketServer, type WebsocketServerOptions } from "../helpers/websocket-server.ts";

let s: TestServer;
let certs: TestCerts;
const targets: WebsocketServer[] = [];

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-ws-e2e-")));
  s = await startTestServer([...CHECKED_MONITOR_ARGS, "--extra-ca", certs.caPath]);
});
afterAll(async () => {
  await s?.stop();
  await Promise.all(targets.map((t) => t.stop()));
  rmSync(certs.dir, { recursive: true, force: true });
});

async function target(o: WebsocketServerOptions = {}): Promise<WebsocketServer> {
  const t = await startWebsocketServer(o);
  targets.push(t);
  return t;
}

describe("websocket monitor through the server", () => {
  test("up with the message sent and the answer found; the server stops: connection_refused, down, an incident", async () => {
    const ws = await target({ echo: true });
    const id = await createMonitor(s, {
      name: "Live updates",
      monitor_type: "websocket",
      target: `${ws.url}/socket`,
      api_headers_json: { "X-Client": "vigil-e2e" },
      ws_send: "ping",
      ws_expect: "echo: ping",
    });
    const up = await waitForCheck(s, id);
    expect(up).toMatchObject({ status: "up", http_code: 101, error_code: null, resolved_ip: "127.0.0.1", ssl_not_after: null, region: "local" });
    expect(up.latency_ms).toBeNumber();
    expect(ws.upgrades[0]).toMatchObject({ path: "/socket", headers: { "x-client": "vigil-e2e" } });
    expect(ws.messages[0]).toBe("ping");
    expect((await waitForState(s, id, "up")).last_status).toBe("up");

    await ws.stop();
    const down = await waitForCheck(s, id, (c) => c.status === "down", NEXT_RUN_MS);
    expect(down.error_code).toBe("connection_refused");
    expect(down.error_message).toContain(`127.0.0.1:${ws.port}`);
    await waitForState(s, id, "down");
    const [incident] = await incidentsOf(s, id);
    expect(incident).toMatchObject({ status: "open", last_error_code: "connection_refused" });
  }, 90_000);

  test("wss with a certificate from the trusted CA: up, its expiry on the check", async () => {
    const wss = await target({ tls: { certPath: certs.certPath, keyPath: certs.keyPath } });
    const id = await createMonitor(s, { name: "Secure socket", monitor_type: "websocket", target: wss.url.replace("127.0.0.1", "localhost") });
    const c = await waitForCheck(s, id);
    expect(c).toMatchObject({ status: "up", http_code: 101, error_code: null });
    expect(Date.parse(c.ssl_not_after!)).toBe(certNotAfterOf(certs.certPath));
    expect(c.timings?.tls_ms).toBeNumber();
  }, 60_000);

  test("degraded: a certificate close to expiry, and an upgrade slower than api_max_latency_ms", async () => {
    const nearExpiry = await target({ tls: { certPath: certs.nearExpiryCertPath, keyPath: certs.keyPath } });
    // far over the limit: latency within this server's own start lateness is not judged (README, saturation)
    const slow = await target({ upgradeDelayMs: 1500 });
    const expiring = await createMonitor(s, { name: "Expiring socket", monitor_type: "websocket", target: nearExpiry.url });
    const sluggish = await createMonitor(s, { name: "Slow socket", monitor_type: "websocket", target: slow.url, api_max_latency_ms: 50 });

    const e = await waitForCheck(s, expiring);
    expect(e.status).toBe("degraded");
    expect(e.degraded_reason).toContain(`certificate expires in ${certs.nearExpiryDays - 1} days`);
    expect(Date.parse(e.ssl_not_after!)).toBe(certNotAfterOf(certs.nearExpiryCertPath));
    const l = await waitForCheck(s, sluggish);
    expect(l.status).toBe("degraded");
    expect(l.latency_ms).toBeGreaterThanOrEqual(1500);
    expect(l.degraded_reason).toContain("above 50 ms");
    for (const id of [expiring, sluggish]) expect((await waitForState(s, id, "degraded")).last_status).toBe("degraded");
  }, 60_000);

  test("each failure has its code, on the check and on the incident it opens", async () => {
    const refusing = await target({ refuseStatus: 403 });
    const greeter = await target({ greeting: "hello there" });
    const selfSigned = await target({ tls: { certPath: certs.selfSignedCertPath, keyPath: certs.selfSignedKeyPath } });
    const cases: [string, Record<string, unknown>, string, Partial<{ http_code: number; message: string }>][] = [
      ["refused upgrade", { target: refusing.url }, "websocket_handshake_failed", { http_code: 403, message: "403" }],
      ["wrong greeting", { target: greeter.url, ws_expect: "welcome" }, "websocket_expect_missing", { http_code: 101, message: '"hello there"' }],
      ["self-signed", { target: selfSigned.url }, "certificate_self_signed", {}],
      ["nothing listening", { target: `ws://127.0.0.1:${await closedPort()}/` }, "connection_refused", {}],
    ];
    const ids = await Promise.all(cases.map(([name, attrs]) => createMonitor(s, { name, monitor_type: "websocket", ...attrs })));
    for (const [i, [name, , code, more]] of cases.entries()) {
      const c = await waitForCheck(s, ids[i]!);
      expect([name, c.status, c.error_code]).toEqual([name, "down", code]);
      if (more.http_code) expect(c.http_code).toBe(more.http_code);
      if (more.message) expect(c.error_message).toContain(more.message);
      await waitForState(s, ids[i]!, "down");
      expect((await incidentsOf(s, ids[i]!))[0]).toMatchObject({ status: "open", last_error_code: code });
    }
    // tls_verify off accepts the self-signed certificate
    const relaxed = await createMonitor(s, { name: "self-signed, unverified", monitor_type: "websocket", target: selfSigned.url, tls_verify: false });
    expect((await waitForCheck(s, relaxed)).status).toBe("up");
    expect((await monitorOf(s, relaxed)).tls_verify).toBe(false);
  }, 90_000);
});
