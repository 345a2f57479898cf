/** The heartbeat's pure parts as tables: source address, payload policy, and the deadline heap. */
import { describe, expect, test } from "bun:test";
import { DeadlineTimers } from "../../src/heartbeat/deadline-timers.ts";
import { evaluatePingPayload } from "../../src/domain/payload-policy.ts";
import { clientAddress, normalizeIp, trustedSet } from "../../src/http/client-address.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { waitFor } from "../helpers/server.ts";

describe("trusted proxies as CIDR ranges", () => {
  const proxies = trustedSet(["10.0.0.0/8", "fd00::/8", "192.168.1.5"]);
  test.each([
    ["10.1.2.3", true],
    ["::ffff:10.1.2.3", true], // IPv4-mapped: its IPv4 range
    ["11.0.0.1", false],
    ["fd12::1", true],
    ["fe80::1", false],
    ["192.168.1.5", true],
    ["192.168.1.6", false],
  ] as const)("%s trusted: %p", (ip, trusted) => {
    expect(proxies.has(normalizeIp(ip)!)).toBe(trusted);
  });
  test("X-Forwarded-For skips every hop inside a range", () => {
    expect(clientAddress("10.0.0.9", "203.0.113.7, 10.2.2.2", proxies)).toBe("203.0.113.7");
  });
});

describe("clientAddress", () => {
  const proxies = trustedSet(["127.0.0.1", "10.0.0.2", "::1"]);
  test.each([
    ["untrusted peer: header ignored", "203.0.113.9", "1.2.3.4", "203.0.113.9"],
    ["trusted peer, no header", "127.0.0.1", null, "127.0.0.1"],
    ["trusted peer: right-most untrusted hop", "127.0.0.1", "1.1.1.1, 203.0.113.7", "203.0.113.7"],
    ["trusted hops are skipped", "127.0.0.1", "1.1.1.1, 203.0.113.7, 10.0.0.2", "203.0.113.7"],
    ["every hop trusted: the left-most", "127.0.0.1", "10.0.0.2, 127.0.0.1", "10.0.0.2"],
    ["garbage hops are skipped", "127.0.0.1", "203.0.113.7, not-an-ip", "203.0.113.7"],
    ["v4-mapped v6 peer counts as v4", "::ffff:127.0.0.1", "198.51.100.4", "198.51.100.4"],
    ["v6 peer", "::1", "2001:db8::1", "2001:db8::1"],
    ["hops with ports", "127.0.0.1", "198.51.100.4:5555", "198.51.100.4"],
  ])("%s", (_name, peer, header, expected) => {
    expect(clientAddress(peer, header, proxies)).toBe(expected);
  });

  test.each([
    ["::FFFF:10.1.2.3", "10.1.2.3"],
    ["[2001:DB8::1]:443", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    ["nonsense", null],
    ["", null],
  ])("normalizeIp(%p)", (raw, out) => {
    expect(normalizeIp(raw)).toBe(out);
  });
});

describe("evaluatePingPayload", () => {
  test.each([
    ["none accepts anything", "none", null, "garbage", true],
    ["none accepts no body", "none", null, null, true],
    ["status_ok, default key", "status_ok", null, '{"status":"ok"}', true],
    ["status_ok, blank key means status", "status_ok", "  ", '{"status":"ok"}', true],
    ["status_ok, nested key", "status_ok", "a.b", '{"a":{"b":"ok"}}', true],
    ["status_ok, case matters", "status_ok", null, '{"status":"OK"}', false],
    ["status_ok, whitespace body", "status_ok", null, "  \n", false],
    ["status_ok, JSON array", "status_ok", null, '["ok"]', false],
    ["status_ok, null value", "status_ok", null, '{"status":null}', false],
  ])("%s", (_name, policy, key, body, valid) => {
    expect(evaluatePingPayload(policy, key, body).valid).toBe(valid);
  });
});

describe("DeadlineTimers", () => {
  test("fires each live deadline once, in order; moved and cleared ones do not fire at their old time", async () => {
    const fired: number[] = [];
    const timers = new DeadlineTimers(systemClock, (ids) => fired.push(...ids));
    const t0 = Date.now();
    timers.set(1, t0 + 60);
    timers.set(2, t0 + 20);
    timers.set(3, t0 + 40);
    timers.set(4, t0 + 30);
    timers.set(4, t0 + 80); // moved later
    timers.set(3, null); // cleared
    timers.set(5, t0 - 1000); // already due: fires at once
    expect(timers.size).toBe(4);
    expect(await waitFor(() => fired.length >= 4, { timeoutMs: 3000 })).toBe(true);
    expect(fired).toEqual([5, 2, 1, 4]);
    expect(timers.size).toBe(0);
    timers.stop();
  });

  test("a deadline moved later many times, then earlier, then later again, fires once at its live time", async () => {
    const fired: { id: number; at: number }[] = [];
    const timers = new DeadlineTimers(systemClock, (ids) => fired.push(...ids.map((id) => ({ id, at: Date.now() }))));
    const t0 = Date.now();
    for (let i = 1; i <= 100; i++) timers.set(1, t0 + 30 + i); // later and later: no new heap entries
    expect((timers as unknown as { heap: { size: number } }).heap.size).toBe(1);
    timers.set(1, t0 + 40); // earlier than the live time
    timers.set(1, t0 + 150); // and later again
    timers.set(2, t0 + 100);
    expect(timers.get(1)).toBe(t0 + 150);
    expect(await waitFor(() => fired.length >= 2, { timeoutMs: 3000 })).toBe(true);
    expect(fired.map((f) => f.id)).toEqual([2, 1]);
    // nothing left that could fire again: stale and duplicate entries were dropped
    expect((timers as unknown as { heap: { size: number } }).heap.size).toBe(0);
    // fired no earlier than its live deadline, although its first entries were due long before
    expect(fired[1]!.at).toBeGreaterThanOrEqual(t0 + 150);
    expect(timers.size).toBe(0);
    timers.stop();
  });

  test("many moves keep the heap bounded", async () => {
    const fired: number[] = [];
    const timers = new DeadlineTimers(systemClock, (ids) => fired.push(...ids));
    const far = Date.now() + 3_600_000;
    for (let i = 0; i < 50_000; i++) timers.set(i % 10, far + i);
    expect(timers.size).toBe(10);
    // one entry per monitor, however often its deadline moved
    expect((timers as unknown as { heap: { size: number } }).heap.size).toBe(10);
    timers.set(7, Date.now());
    expect(await waitFor(() => fired.length === 1)).toBe(true);
    expect(fired).toEqual([7]);
    timers.stop();
  });
});
