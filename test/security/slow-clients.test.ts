/**
 * Slow clients (slowloris) against a real child-process server started with --idle-timeout 2:
 * request bodies trickled a byte at a time, headers trickled or left unfinished, and 500 connections
 * that send nothing. The server closes every one of them by itself, while ordinary requests keep
 * being answered; a request whose body trickled in creates nothing. A peer's long-poll is the one
 * request allowed to outlast the idle timeout.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lastLine, runVigil, spawnServer, type ChildServer } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const IDLE_SEC = 2;
let server: ChildServer;
let token: string;
const dataDir = tempDir("vigil-slow-");

beforeAll(async () => {
  server = await spawnServer(["--data", dataDir, "--idle-timeout", String(IDLE_SEC), "--log-level", "warn", "--rate-limit", "enterprise=100000"]);
  token = readFileSync(join(dataDir, "bootstrap-token"), "utf8").trim();
});
afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface SlowSocket {
  /** resolves when the connection is closed, with who closed it and when */
  closed: Promise<{ byServer: boolean; afterMs: number; received: string }>;
  destroy(): void;
}

/** Opens a raw connection, writes `head`, then one character of `drip` every `everyMs` (if any). */
function slowSocket(head: string, drip: string | null, everyMs = 300): SlowSocket {
  const started = Date.now();
  const sock = net.connect(server.port, "127.0.0.1");
  let byClient = false;
  let received = "";
  let timer: ReturnType<typeof setInterval> | null = null;
  sock.on("connect", () => {
    if (head) sock.write(head);
    if (drip !== null) timer = setInterval(() => !sock.destroyed && sock.write(drip), everyMs);
  });
  sock.on("data", (d) => (received += d.toString("latin1")));
  sock.on("error", () => {});
  const closed = new Promise<{ byServer: boolean; afterMs: number; received: string }>((resolve) =>
    sock.on("close", () => {
      if (timer) clearInterval(timer);
      resolve({ byServer: !byClient, afterMs: Date.now() - started, received });
    }),
  );
  return {
    closed,
    destroy() {
      byClient = true;
      sock.destroy();
    },
  };
}

/** Waits for every socket to close, up to `ms`; the ones still open are destroyed by the client. */
async function allClosed(socks: SlowSocket[], ms: number) {
  const timer = setTimeout(() => socks.forEach((s) => s.destroy()), ms);
  const results = await Promise.all(socks.map((s) => s.closed));
  clearTimeout(timer);
  return results;
}

test("trickled bodies, trickled or unfinished headers and 500 silent connections are all closed by the server, and others are still served", async () => {
  const body = (n: number) =>
    slowSocket(`POST /api/v1/monitors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"slow-${n}",`, " ");
  const slowBodies = Array.from({ length: 30 }, (_, i) => body(i));
  const slowPings = Array.from({ length: 10 }, () => slowSocket(`POST /h/abcdefghijklmnop HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n`, "x"));
  const tricklingHeaders = Array.from({ length: 30 }, () => slowSocket("GET /api/v1/monitors HTTP/1.1\r\nHost: x\r\n", "X"));
  const unfinishedHeaders = Array.from({ length: 30 }, () => slowSocket("GET /api/v1/monitors HTTP/1.1\r\nHost: x\r\nX-Slow: ", null));
  const silent: SlowSocket[] = [];
  for (let i = 0; i < 500; i++) silent.push(slowSocket("", null));

  // ordinary clients are answered meanwhile, each within its own 5 s limit
  for (let i = 0; i < 30; i++) {
    const r = await fetch(`${server.url}/api/v1/monitors`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
    expect(r.status).toBe(200);
    expect((await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
  }
  const created = await fetch(`${server.url}/api/v1/monitors`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "normal", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000 }),
    signal: AbortSignal.timeout(5000),
  });
  expect(created.status).toBe(201);

  const [bodies, pings, trickled, unfinished, idle] = await Promise.all([
    allClosed(slowBodies, 30_000),
    allClosed(slowPings, 30_000),
    allClosed(tricklingHeaders, 30_000),
    allClosed(unfinishedHeaders, 30_000),
    allClosed(silent, 30_000),
  ]);
  for (const [what, results] of Object.entries({ bodies, pings, trickled, unfinished, idle })) {
    expect({ what, closedByServer: results.filter((r) => r.byServer).length }).toEqual({ what, closedByServer: results.length });
  }
  // a body still arriving is cut once the idle timeout has passed, not before
  for (const r of [...bodies, ...pings]) expect(r.afterMs).toBeGreaterThanOrEqual(IDLE_SEC * 1000);
  console.log(
    `slow clients: bodies cut after ${Math.min(...bodies.map((r) => r.afterMs))}-${Math.max(...bodies.map((r) => r.afterMs))} ms, ` +
      `trickled headers after ${Math.max(...trickled.map((r) => r.afterMs))} ms, unfinished headers after ${Math.max(...unfinished.map((r) => r.afterMs))} ms, ` +
      `500 silent connections after ${Math.max(...idle.map((r) => r.afterMs))} ms`,
  );

  // none of the trickled creates went through; the normal one did, and the server is still up
  const list = await (await fetch(`${server.url}/api/v1/monitors?per_page=100`, { headers: { authorization: `Bearer ${token}` } })).json() as { data: { attributes: { name: string } }[] };
  expect(list.data.map((m) => m.attributes.name)).toEqual(["normal"]);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
}, 60_000);

test("a peer's long-poll may outlast --idle-timeout", async () => {
  const made = await runVigil(["peer", "create", "--data", dataDir, "--region", "eu", "--all-accounts"]);
  expect(made.code).toBe(0);
  const peerToken = lastLine(made.stdout);
  const headers = { authorization: `Bearer ${peerToken}` };
  const first = await fetch(`${server.url}/peer/v1/monitors`, { headers });
  expect(first.status).toBe(200);
  const { cursor } = ((await first.json()) as { data: { cursor: string } }).data;
  const started = Date.now();
  const polled = await fetch(`${server.url}/peer/v1/monitors?cursor=${encodeURIComponent(cursor)}&wait=${IDLE_SEC * 3}`, { headers, signal: AbortSignal.timeout(20_000) });
  expect(polled.status).toBe(200);
  expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_SEC * 3 * 1000 - 100);
  expect(((await polled.json()) as { data: { monitors: unknown[] } }).data.monitors).toEqual([]);
}, 30_000);
