/**
 * TCP probe against a loopback listener, one that resets every connection it accepts, a closed port
 * and a port that never completes a handshake.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PROBES } from "../../src/probes/index.ts";
import { closedPort, startBlackholeTcp, startTcpTarget, type BlackholeTarget, type TcpTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

let v4: TcpTarget, v6: TcpTarget, hole: BlackholeTarget;
let resetter: { proc: ReturnType<typeof Bun.spawn>; port: number };

/**
 * A listener in a process of its own that resets each connection as soon as it accepts it. In
 * another process the reset often reaches the client before its connect is reported, which this
 * process' own listener never does (its accept waits for our turn of the event loop).
 */
async function startResetter(): Promise<{ proc: ReturnType<typeof Bun.spawn>; port: number }> {
  const code = `const net = require("node:net");
    const server = net.createServer((s) => { s.on("error", () => {}); s.resetAndDestroy(); });
    server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;
  const proc = Bun.spawn([process.execPath, "-e", code], { stdout: "pipe", stderr: "inherit" });
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the resetting listener exited before it listened");
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { proc, port: Number(out.trim()) };
}

beforeAll(async () => {
  v4 = await startTcpTarget("127.0.0.1");
  v6 = await startTcpTarget("::1");
  hole = await startBlackholeTcp();
  resetter = await startResetter();
});
afterAll(async () => {
  await v4.close();
  await v6.close();
  hole.close();
  resetter?.proc.kill();
  await resetter?.proc.exited;
});

const run = (target: string, o: Parameters<typeof monitor>[0] = {}, ctx = context()) => PROBES.tcp(monitor({ monitor_type: "tcp", target, ...o }), ctx);

test("an open port is up with latency and the connected IP", async () => {
  const before = v4.connections();
  const r = await run(`127.0.0.1:${v4.port}`);
  expect(r).toMatchObject({ status: "up", resolved_ip: "127.0.0.1", error_code: null });
  expect(r.latency_ms).toBeGreaterThanOrEqual(1);
  await Bun.sleep(20);
  expect(v4.connections()).toBe(before + 1);
});

test("host with the port field, host names and IPv6 literals", async () => {
  expect((await run("127.0.0.1", { port: v4.port })).status).toBe("up");
  expect((await run(`localhost:${v4.port}`)).status).toBe("up");
  const r = await run(`[::1]:${v6.port}`);
  expect(r).toMatchObject({ status: "up", resolved_ip: "::1" });
  expect((await run("::1", { port: v6.port })).status).toBe("up");
});

test("latency above api_max_latency_ms is degraded", async () => {
  // a completed connect is never reported as 0 ms, so a 0 ms budget is always exceeded
  const r = await run(`127.0.0.1:${v4.port}`, { api_max_latency_ms: 0 });
  expect(r.status).toBe("degraded");
  expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 0 ms`);
});

test("a port that accepts and resets at once is up: it accepted the connection", async () => {
  const results = [];
  // the reset races the report of the connect: enough tries that some see the reset first
  for (let i = 0; i < 20; i++) results.push(await run(`127.0.0.1:${resetter.port}`));
  expect(results.map((r) => [r.status, r.error_code, r.error_message])).toEqual(Array(20).fill(["up", null, null]));
  for (const r of results) expect(r.latency_ms).toBeGreaterThanOrEqual(1);
});

test("a closed port is connection_refused", async () => {
  const port = await closedPort();
  const r = await run(`127.0.0.1:${port}`);
  expect(r).toMatchObject({ status: "down", error_code: "connection_refused" });
  // the address once, not again in Node's own words
  expect(r.error_message).toBe(`connection refused by 127.0.0.1:${port} (ECONNREFUSED)`);
});

test("a handshake that never completes is connection_timeout", async () => {
  const r = await run(`127.0.0.1:${hole.port}`, { timeout_ms: 300 });
  expect(r).toMatchObject({ status: "down", error_code: "connection_timeout" });
  expect(r.error_message).toBe(`timed out after 300 ms connecting to 127.0.0.1:${hole.port}`);
});

test("an unresolvable host is dns_error; a missing port is reported", async () => {
  expect(await run("no-such-host.invalid:80")).toMatchObject({ status: "down", error_code: "dns_error" });
  const r = await run("127.0.0.1");
  expect(r.status).toBe("down");
  expect(r.error_message).toContain("port");
});

test("blockPrivateTargets refuses loopback", async () => {
  expect(await run(`127.0.0.1:${v4.port}`, {}, context({ blockPrivateTargets: true }))).toMatchObject({ status: "down", error_code: "target_blocked" });
});
