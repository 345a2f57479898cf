/** ICMP echo through bun:ffi. These run as root here, so the raw-socket path is exercised for real. */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { PROBES, createPingProbe } from "../../src/probes/index.ts";
import { echoRequest, internetChecksum, isOurReply } from "../../src/probes/icmp-packet.ts";
import { context, monitor } from "./fixtures.ts";

const run = (target: string, o: Parameters<typeof monitor>[0] = {}, probe = PROBES.ping) => probe(monitor({ monitor_type: "ping", target, ...o }), context());

test("127.0.0.1 answers: up with round-trip time", async () => {
  const r = await run("127.0.0.1");
  expect(r.error_message).toBeNull();
  expect(r).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
  expect(r.latency_ms).toBeGreaterThanOrEqual(1);
  expect(r.latency_ms).toBeLessThan(1000);
});

test("the raw socket path on its own, a host name, and IPv6", async () => {
  expect((await run("127.0.0.1", {}, createPingProbe({ modes: ["raw"] }))).status).toBe("up");
  expect(await run("localhost")).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
  expect(await run("::1")).toMatchObject({ status: "up", resolved_ip: "::1" });
});

test("a round trip above api_max_latency_ms is degraded", async () => {
  // a received reply is never reported as 0 ms, so a 0 ms budget is always exceeded
  const r = await run("127.0.0.1", { api_max_latency_ms: 0 });
  expect(r.status).toBe("degraded");
  expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 0 ms`);
});

test("no reply is ping_timeout", async () => {
  // the kernel drops echo requests with a bad checksum, so loopback stays silent
  const r = await run("127.0.0.1", { timeout_ms: 300 }, createPingProbe({ modes: ["raw"], corruptChecksum: true }));
  expect(r).toMatchObject({ status: "down", error_code: "ping_timeout" });
  expect(r.error_message).toBe("timed out after 300 ms waiting for an echo reply from 127.0.0.1");
});

test("no usable socket kind is ping_not_permitted", async () => {
  const r = await run("127.0.0.1", {}, createPingProbe({ modes: [] }));
  expect(r).toMatchObject({ status: "down", error_code: "ping_not_permitted" });
  expect(r.error_message).toContain("CAP_NET_RAW");
});

test("the datagram socket follows net.ipv4.ping_group_range", async () => {
  const [lo, hi] = readFileSync("/proc/sys/net/ipv4/ping_group_range", "utf8").trim().split(/\s+/).map(Number);
  const allowed = process.getgid!() >= lo && process.getgid!() <= hi;
  const r = await run("127.0.0.1", {}, createPingProbe({ modes: ["dgram"] }));
  if (allowed) expect(r.status).toBe("up");
  else expect(r).toMatchObject({ status: "down", error_code: "ping_not_permitted", error_message: expect.stringContaining("ICMP datagram socket: EACCES") });
});

test("an unresolvable name is dns_error", async () => {
  expect(await run("no-such-host.invalid")).toMatchObject({ status: "down", error_code: "dns_error" });
});

test("echo packets: checksum verifies and replies are matched on id, sequence and token", () => {
  const token = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  const req = echoRequest(false, 0x1234, 7, token);
  expect(internetChecksum(req)).toBe(0);
  const reply = new Uint8Array(req);
  reply[0] = 0;
  const match = { v6: false, hasIpHeader: false, id: 0x1234, seq: 7, token };
  expect(isOurReply(reply, match)).toBe(true);
  expect(isOurReply(req, match)).toBe(false);
  expect(isOurReply(reply, { ...match, seq: 8 })).toBe(false);
  expect(isOurReply(reply, { ...match, id: 0x4321 })).toBe(false);
  expect(isOurReply(reply, { ...match, token: new Uint8Array(8) })).toBe(false);
});
