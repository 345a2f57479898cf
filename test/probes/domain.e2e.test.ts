/**
 * domain monitors end to end: a real server started with --rdap-bootstrap pointing at a real RDAP
 * server on loopback (test/helpers/rdap-server.ts), monitors created through its API and checked by
 * its scheduler; the checks, the monitor's state, `domain_expires_at` and its incidents read back
 * through the API. One failed check turns a monitor down here (--confirmations 1 in
 * CHECKED_MONITOR_ARGS).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CHECKED_MONITOR_ARGS, createMonitor, incidentsOf, monitorOf, NEXT_RUN_MS, waitForCheck, waitForState } from "../helpers/checked-monitor.ts";
import { startRdapServer, type RdapServer } from "../helpers/rdap-server.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const DAY = 86_400_000;
let s: TestServer;
let rdap: RdapServer;

beforeAll(async () => {
  rdap = await startRdapServer({ tlds: ["test"] });
  s = await startTestServer([...CHECKED_MONITOR_ARGS, "--rdap-bootstrap", rdap.bootstrapUrl]);
});
afterAll(async () => {
  await s?.stop();
  await rdap?.stop();
});

describe("domain monitor through the server", () => {
  test("a registration far from expiry is up: the date on the check and as domain_expires_at", async () => {
    const expires = new Date(Date.now() + 400 * DAY).toISOString();
    rdap.domains["far.test"] = { expires };
    const id = await createMonitor(s, { name: "far.test registration", monitor_type: "domain", target: "far.test" });
    const c = await waitForCheck(s, id);
    expect(c).toMatchObject({ status: "up", error_code: null, degraded_reason: null, ssl_not_after: expires, timings: null });
    expect(c.latency_ms).toBeNumber();
    const m = await waitForState(s, id, "up");
    expect(m.domain_expires_at).toBe(expires);
    expect(rdap.requests.find((q) => q.path === "/rdap/domain/far.test")?.accept).toContain("application/rdap+json");
  }, 60_000);

  test("a registration that lapses: degraded within the warning days, then domain_expired, down with an incident; the registry asked once", async () => {
    // a few seconds ahead: the first check (at once) is within the warning window, a later one is past the date
    const expires = new Date(Date.now() + 8000).toISOString();
    rdap.domains["lapsing.test"] = { expires };
    const id = await createMonitor(s, { name: "lapsing.test registration", monitor_type: "domain", target: "lapsing.test", domain_expiry_warn_days: 1 });
    const first = await waitForCheck(s, id);
    expect(first.status).toBe("degraded");
    expect(first.degraded_reason).toBe(`the registration of lapsing.test expires in 0 days (${expires}), within the 1-day warning window`);
    expect((await waitForState(s, id, "degraded")).domain_expires_at).toBe(expires);

    const down = await waitForCheck(s, id, (c) => c.status === "down", NEXT_RUN_MS);
    expect(down).toMatchObject({ error_code: "domain_expired", error_message: `the registration of lapsing.test expired at ${expires}`, ssl_not_after: expires });
    // the answer came from memory (kept 12 hours): no lookup, so no latency
    expect(down.latency_ms).toBeNull();
    expect(rdap.count("/rdap/domain/lapsing.test")).toBe(1);
    const m = await waitForState(s, id, "down");
    expect(m.domain_expires_at).toBe(expires);
    expect((await incidentsOf(s, id))[0]).toMatchObject({ status: "open", last_error_code: "domain_expired" });
  }, 90_000);

  test("degraded within domain_expiry_warn_days (default 30)", async () => {
    const expires = new Date(Date.now() + 10 * DAY + 3_600_000).toISOString();
    rdap.domains["soon.test"] = { expires };
    const id = await createMonitor(s, { name: "soon.test registration", monitor_type: "domain", target: "soon.test" });
    const c = await waitForCheck(s, id);
    expect(c).toMatchObject({ status: "degraded", ssl_not_after: expires });
    expect(c.degraded_reason).toBe(`the registration of soon.test expires in 10 days (${expires}), within the 30-day warning window`);
    expect((await waitForState(s, id, "degraded")).domain_expires_at).toBe(expires);
    expect((await monitorOf(s, id)).domain_expiry_warn_days).toBe(30);
  }, 60_000);

  test("each failure has its code, on the check and on the incident it opens", async () => {
    rdap.domains["gone.test"] = { expires: new Date(Date.now() - 2 * DAY).toISOString() };
    rdap.domains["noexpiry.test"] = {};
    rdap.domains["broken.test"] = { status: 500 };
    const cases: [string, string, string][] = [
      ["gone.test", "domain_expired", "the registration of gone.test expired at"],
      ["unregistered.test", "rdap_error", "has no record of unregistered.test (404)"],
      ["noexpiry.test", "rdap_error", "has no expiration event"],
      ["broken.test", "rdap_error", "answered 500"],
      ["example.nowhere", "rdap_error", "no RDAP server is known for .nowhere"],
    ];
    const ids = await Promise.all(cases.map(([target]) => createMonitor(s, { name: target, monitor_type: "domain", target })));
    for (const [i, [target, code, words]] of cases.entries()) {
      const c = await waitForCheck(s, ids[i]!);
      expect([target, c.status, c.error_code]).toEqual([target, "down", code]);
      expect(c.error_message).toContain(words);
      await waitForState(s, ids[i]!, "down");
      expect((await incidentsOf(s, ids[i]!))[0]).toMatchObject({ status: "open", last_error_code: code });
    }
  }, 90_000);
});
