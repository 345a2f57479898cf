import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { batch, makePeer, peerCall, resultItem } from "./helpers.ts";

/**
 * What a peer may do, against a real in-process leader with the test acting as the probe: a peer
 * token serves the accounts it was created for.
 */
let s: TestServer;
let a: { accountId: number; token: string };
let b: { accountId: number; token: string };
let peerA: { id: number; token: string };
let peerAll: { id: number; token: string };

beforeAll(async () => {
  s = await startTestServer();
  a = await makeAccount(s.ctx, "alpha");
  b = await makeAccount(s.ctx, "bravo");
  peerA = await makePeer(s.ctx, "eu", [a.accountId]);
  peerAll = await makePeer(s.ctx, "eu", "all");
});
afterAll(() => s.stop());

const ids = (feed: { monitors: { id: number }[] }) => feed.monitors.map((m) => m.id);
// regions ["eu"]: the leader (region "local") checks none of these itself
const euMonitor = (name: string, token: string, over: Record<string, unknown> = {}) =>
  createMonitor(s, httpAttrs({ name, is_paused: false, interval_sec: 3600, regions: ["eu"], ...over }), token);
const checksOf = async (id: number, token: string) => (await s.api("GET", `/api/v1/monitors/${id}/checks`, undefined, { token })).json;

describe("a peer serves the accounts it was created for", () => {
  let mA: number, mB: number;
  let cursor: string;

  beforeAll(async () => {
    mA = await euMonitor("alpha web", a.token);
    mB = await euMonitor("bravo web", b.token, { api_auth_type: "bearer", api_auth_bearer_token: "bravo-secret-0b1c" });
  });

  test("the feed sends a peer only its accounts' monitors (an all-accounts peer gets both)", async () => {
    const feed = (await peerCall(s.url, peerA.token, "GET", "/monitors")).json.data;
    expect(ids(feed)).toContain(mA);
    expect(ids(feed)).not.toContain(mB);
    expect(JSON.stringify(feed)).not.toContain("bravo-secret-0b1c");
    cursor = feed.cursor;
    const all = (await peerCall(s.url, peerAll.token, "GET", "/monitors")).json.data;
    expect(ids(all)).toEqual(expect.arrayContaining([mA, mB]));
  });

  test("changes to another account's monitors are not mentioned, not even as removals", async () => {
    await s.api("PATCH", `/api/v1/monitors/${mB}`, { timeout_ms: 4000 }, { token: b.token });
    const other = await euMonitor("bravo api", b.token);
    await s.api("DELETE", `/api/v1/monitors/${other}`, undefined, { token: b.token });
    await s.api("PATCH", `/api/v1/monitors/${mA}`, { timeout_ms: 4000 }, { token: a.token });
    const feed = (await peerCall(s.url, peerA.token, "GET", `/monitors?cursor=${cursor}`)).json.data;
    expect(feed.full).toBe(false);
    expect(ids(feed)).toEqual([mA]);
    expect(feed.removed).toEqual([]);
  });

  test("a result for another account's monitor is answered as for a monitor that does not exist, and changes nothing", async () => {
    const now = Date.now();
    const items = [resultItem(mB, "down", now - 3000), resultItem(mB, "down", now - 2000), resultItem(999_999, "down", now - 2000), resultItem(mA, "up", now - 1000)];
    const res = await peerCall(s.url, peerA.token, "POST", "/results", batch(items));
    expect(res.status).toBe(200);
    const acks = res.json.data.results.map((r: { outcome: string; reason?: string }) => [r.outcome, r.reason]);
    expect(acks).toEqual([["dropped", "deleted"], ["dropped", "deleted"], ["dropped", "deleted"], ["stored", undefined]]);
    expect((await checksOf(mB, b.token)).pagination.total).toBe(0);
    expect((await s.api("GET", `/api/v1/monitors/${mB}`, undefined, { token: b.token })).json.data.attributes.last_status).toBe("unknown");
    expect((await checksOf(mA, a.token)).pagination.total).toBe(1);
  });

  test("the all-accounts peer reports for both", async () => {
    const res = await peerCall(s.url, peerAll.token, "POST", "/results", batch([resultItem(mB, "up", Date.now() - 500)]));
    expect(res.json.data.results[0].outcome).toBe("stored");
  });
});
