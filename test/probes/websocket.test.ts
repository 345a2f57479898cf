/**
 * The websocket probe against real WebSocket servers on loopback (test/helpers/websocket-server.ts):
 * plain and TLS, greeting, echo, refusing, closing, stalling, and a raw server with a broken 101.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProbeMonitor } from "../../src/domain/monitor.ts";
import { websocketProbe } from "../../src/probes/websocket.ts";
import { certNotAfterOf, makeCerts, makeChains, type TestCerts } from "../helpers/certs.ts";
import { closedPort } from "../helpers/targets.ts";
import { startRawAnswerServer, startWebsocketServer, type WebsocketServer, type WebsocketServerOptions } from "../helpers/websocket-server.ts";
import { context, monitor } from "./fixtures.ts";

let certs: TestCerts;
const servers: WebsocketServer[] = [];

beforeAll(() => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-ws-certs-")));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(certs.dir, { recursive: true, force: true });
});

async function server(o: WebsocketServerOptions = {}): Promise<WebsocketServer> {
  const s = await startWebsocketServer(o);
  servers.push(s);
  return s;
}

const run = (o: Partial<ProbeMonitor>, ctx = context()) => websocketProbe(monitor({ timeout_ms: 5000, ...o }), ctx);

/** Polls `read` until it gives something truthy: what the server records arrives after the probe returns. */
async function eventually<T>(read: () => T, what: string, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = read();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

describe("websocket probe: up", () => {
  test("a successful upgrade is up, with latency, 101 and the connection's timings", async () => {
    const s = await server();
    const r = await run({ target: `${s.url}/socket?x=1` });
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", http_code: 101, resolved_ip: "127.0.0.1", ssl_not_after: null });
    expect(r.latency_ms).toBeGreaterThan(0);
    expect(r.timings?.connect_ms).not.toBeNull();
    expect(r.timings?.ttfb_ms).not.toBeNull();
    expect(s.upgrades[0].path).toBe("/socket?x=1");
  });

  test("the monitor's headers go with the upgrade; the Host header names the target", async () => {
    const s = await server({ requireHeader: { name: "x-token", value: "t0ken" } });
    const refused = await run({ target: s.url });
    expect(refused).toMatchObject({ status: "down", error_code: "websocket_handshake_failed", http_code: 401 });
    const r = await run({ target: `ws://localhost:${s.port}/`, api_headers_json: { "X-Token": "t0ken", Origin: "https://app.example" } });
    expect(r.status).toBe("up");
    const seen = s.upgrades.at(-1)!.headers;
    expect(seen["x-token"]).toBe("t0ken");
    expect(seen.origin).toBe("https://app.example");
    expect(seen.host).toBe(`localhost:${s.port}`);
    expect(seen["user-agent"]).toContain("Vigil");
  });

  test("a Sec-WebSocket-Protocol header offers subprotocols, and the server's choice is accepted", async () => {
    const s = await server();
    const r = await run({ target: s.url, api_headers_json: { "Sec-WebSocket-Protocol": "graphql-ws, v2" } });
    expect(r.error_message).toBeNull();
    expect(s.upgrades.at(-1)!.headers["sec-websocket-protocol"]).toBe("graphql-ws,v2");
  });

  test("ws_send is sent after the upgrade, and the connection is closed with 1000", async () => {
    const s = await server();
    const r = await run({ target: s.url, ws_send: "ping from vigil" });
    expect(r.status).toBe("up");
    await eventually(() => s.messages.includes("ping from vigil"), "the sent message");
    expect(await eventually(() => s.closeCodes[0], "the close")).toBe(1000);
  });

  test("ws_expect found in the first text message is up; binary messages before it are skipped", async () => {
    const s = await server({ greeting: '{"type":"welcome","version":3}', binaryFirst: 2 });
    const r = await run({ target: s.url, ws_expect: '"welcome"' });
    expect(r.error_message).toBeNull();
    expect(r.status).toBe("up");
  });

  test("ws_send and ws_expect together: the answer to what was sent", async () => {
    const s = await server({ echo: true });
    const r = await run({ target: s.url, ws_send: "status?", ws_expect: "echo: status?" });
    expect(r.error_message).toBeNull();
    expect(r.status).toBe("up");
  });

  test("slower than api_max_latency_ms is degraded with a reason; a generous limit is up", async () => {
    const s = await server({ upgradeDelayMs: 50 });
    const r = await run({ target: s.url, api_max_latency_ms: 1 });
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toContain("above 1 ms");
    expect((await run({ target: s.url, api_max_latency_ms: 60_000 })).status).toBe("up");
  });
});

describe("websocket probe: down", () => {
  test("a refused upgrade is websocket_handshake_failed, saying the status", async () => {
    const s = await server({ refuseStatus: 403 });
    const r = await run({ target: s.url });
    expect(r).toMatchObject({ status: "down", error_code: "websocket_handshake_failed", http_code: 403 });
    expect(r.latency_ms).toBeGreaterThan(0);
    expect(r.error_message).toContain("403");
    expect(r.error_message).toContain("instead of 101");
  });

  test("a plain HTTP server that ignores the upgrade is websocket_handshake_failed", async () => {
    const raw = await startRawAnswerServer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    try {
      const r = await run({ target: `ws://127.0.0.1:${raw.port}/` });
      expect(r).toMatchObject({ status: "down", error_code: "websocket_handshake_failed", http_code: 200 });
    } finally {
      await raw.stop();
    }
  });

  test("a 101 with a wrong Sec-WebSocket-Accept is websocket_handshake_failed", async () => {
    const raw = await startRawAnswerServer("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: bm90IHRoZSByaWdodCBrZXk=\r\n\r\n");
    try {
      const r = await run({ target: `ws://127.0.0.1:${raw.port}/` });
      expect(r).toMatchObject({ status: "down", error_code: "websocket_handshake_failed" });
      expect(r.error_message).toContain("101");
    } finally {
      await raw.stop();
    }
  });

  test("a first text message without ws_expect is websocket_expect_missing, quoting what arrived", async () => {
    const s = await server({ greeting: `maintenance mode ${"x".repeat(500)}` });
    const r = await run({ target: s.url, ws_expect: "ready" });
    expect(r).toMatchObject({ status: "down", error_code: "websocket_expect_missing", http_code: 101 });
    expect(r.error_message).toContain('"maintenance mode');
    expect(r.error_message).toContain("(517 characters)");
    expect(r.latency_ms).toBeGreaterThan(0);
    expect(r.error_message!.length).toBeLessThan(400);
  });

  test("no text message within the timeout is websocket_expect_missing, naming the binary ones", async () => {
    const s = await server({ binaryFirst: 1 });
    // long enough for the upgrade itself on a loaded machine: the wait that runs out is the message's
    const r = await run({ target: s.url, ws_expect: "ready", timeout_ms: 1500 });
    expect(r).toMatchObject({ status: "down", error_code: "websocket_expect_missing" });
    expect(r.error_message).toContain("within the 1500 ms timeout");
    expect(r.error_message).toContain("1 binary message");
  });

  test("a first message over the 4 MiB cap is websocket_expect_missing, not read to the end", async () => {
    const s = await server({ greeting: "x".repeat(5 * 1024 * 1024) });
    const r = await run({ target: s.url, ws_expect: "ready" });
    expect(r).toMatchObject({ status: "down", error_code: "websocket_expect_missing" });
    expect(r.error_message).toContain("larger than 4 MiB");
  });

  test("a server that closes before any text message is websocket_expect_missing with the close code", async () => {
    const s = await server({ closeOnOpen: { code: 1008, reason: "policy" } });
    const r = await run({ target: s.url, ws_expect: "ready" });
    expect(r).toMatchObject({ status: "down", error_code: "websocket_expect_missing" });
    expect(r.error_message).toContain("code 1008");
    expect(r.error_message).toContain("policy");
  });

  test("a closed port is connection_refused", async () => {
    const r = await run({ target: `ws://127.0.0.1:${await closedPort()}/` });
    expect(r).toMatchObject({ status: "down", error_code: "connection_refused", resolved_ip: "127.0.0.1" });
  });

  test("a server that never answers the upgrade is connection_timeout", async () => {
    const s = await server({ stall: true });
    const r = await run({ target: s.url, timeout_ms: 300 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout" });
    expect(r.error_message).toContain("300 ms");
  });

  test("a name that does not resolve is dns_error", async () => {
    const r = await run({ target: "ws://no-such-host.invalid/" });
    expect(r).toMatchObject({ status: "down", error_code: "dns_error" });
  });

  test("a target that is not ws:// or wss:// is refused without a connection", async () => {
    const r = await run({ target: "http://127.0.0.1/" });
    expect(r).toMatchObject({ status: "down", error_code: "connection_error" });
    expect(r.error_message).toContain("ws://");
  });

  test("the private-target rule refuses a loopback target, from the account or the instance", async () => {
    const s = await server();
    const byAccount = await run({ target: s.url, block_private_targets: true });
    expect(byAccount).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
    const byInstance = await run({ target: `ws://localhost:${s.port}/` }, context({ blockPrivateTargets: true }));
    expect(byInstance.error_code).toBe("target_blocked");
    expect(s.upgrades).toHaveLength(0);
  });

  test("a cancelled check ends at once as internal_error", async () => {
    const s = await server({ stall: true });
    const controller = new AbortController();
    const pending = run({ target: s.url, timeout_ms: 30_000 }, context({ signal: controller.signal }));
    await eventually(() => s.upgrades.length > 0, "the upgrade request");
    controller.abort();
    expect(await pending).toMatchObject({ status: "down", error_code: "internal_error" });
  });
});

describe("websocket probe over TLS (wss)", () => {
  test("a certificate from the extra CA is trusted; its notAfter is recorded", async () => {
    const s = await server({ tls: { certPath: certs.certPath, keyPath: certs.keyPath }, greeting: "hi" });
    const r = await run({ target: `wss://localhost:${s.port}/`, ws_expect: "hi" }, context({ extraCa: certs.caPem }));
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", ssl_not_after: certNotAfterOf(certs.certPath) });
    expect(r.timings?.tls_ms).not.toBeNull();
  });

  test("a self-signed certificate fails with tls_verify on and passes with it off", async () => {
    const s = await server({ tls: { certPath: certs.selfSignedCertPath, keyPath: certs.selfSignedKeyPath } });
    const refused = await run({ target: s.url });
    expect(refused).toMatchObject({ status: "down", error_code: "certificate_self_signed" });
    expect(refused.error_message).toContain("tls_verify");
    const r = await run({ target: s.url, tls_verify: false });
    expect(r.error_message).toBeNull();
    expect(r).toMatchObject({ status: "up", ssl_not_after: certNotAfterOf(certs.selfSignedCertPath) });
  });

  test("an expired certificate is certificate_expired", async () => {
    const s = await server({ tls: { certPath: certs.expiredCertPath, keyPath: certs.keyPath } });
    const r = await run({ target: s.url }, context({ extraCa: certs.caPem }));
    expect(r).toMatchObject({ status: "down", error_code: "certificate_expired" });
  });

  test("a certificate close to expiry degrades the check, as for https", async () => {
    const s = await server({ tls: { certPath: certs.nearExpiryCertPath, keyPath: certs.keyPath } });
    const r = await run({ target: s.url }, context({ extraCa: certs.caPem }));
    expect(r.status).toBe("degraded");
    expect(r.degraded_reason).toContain("certificate expires in");
  });

  test("an expired intermediate is certificate_expired naming it, and no upgrade request is sent", async () => {
    const chains = makeChains(certs);
    const s = await server({ tls: { certPath: chains.expiredIntermediateChainPath, keyPath: certs.keyPath } });
    const notAfter = certNotAfterOf(chains.expiredIntermediatePath);
    const r = await run({ target: `wss://localhost:${s.port}/`, api_headers_json: { authorization: "Bearer not-for-this-server" } }, context({ extraCa: certs.caPem }));
    expect(r).toMatchObject({ status: "down", error_code: "certificate_expired", ssl_not_after: notAfter });
    expect(r.error_message).toBe(`intermediate certificate "${chains.subjectOf(chains.expiredIntermediatePath)}" expired at ${new Date(notAfter).toISOString()} (localhost:${s.port})`);
    expect(s.upgrades).toEqual([]);
  });

  test("wss to a server that does not speak TLS is tls_error", async () => {
    const s = await server();
    const r = await run({ target: `wss://127.0.0.1:${s.port}/` });
    expect(r).toMatchObject({ status: "down", error_code: "tls_error" });
  });

  test("a refused upgrade over TLS still records the certificate", async () => {
    const s = await server({ tls: { certPath: certs.certPath, keyPath: certs.keyPath }, refuseStatus: 503 });
    const r = await run({ target: s.url }, context({ extraCa: certs.caPem }));
    expect(r).toMatchObject({ status: "down", error_code: "websocket_handshake_failed", http_code: 503, ssl_not_after: certNotAfterOf(certs.certPath) });
  });
});
