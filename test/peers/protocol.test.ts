import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { revokePeer } from "../../src/store/peers.ts";
import { createMonitor, httpAttrs, VALID_BY_TYPE } from "../api/fixtures.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { batch, makePeer, peerCall, resultItem } from "./helpers.ts";

/**
 * The leader's /peer/v1 protocol against a real in-process leader, with the test acting as a probe:
 * authentication, hello, the definitions feed (snapshot, cursor, long-poll, removals, secrets),
 * result batches (per-result outcomes, dedupe, clock sanity, limits) and the peers list.
 */
let s: TestServer;
let eu: { id: number; token: string };
const SECRET = "bearer-secret-for-peer-feed-7f3a";

beforeAll(async () => {
  s = await startTestServer();
  eu = await makePeer(s.ctx, "eu");
});
afterAll(() => s.stop());

describe("authentication", () => {
  test("only peer tokens: none is 401 unauthorized, an API token or a revoked peer token 401 invalid_token", async () => {
    const none = await peerCall(s.url, null, "GET", "/hello");
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe("unauthorized");
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect(typeof none.json.meta.request_id).toBe("string");

    const api = await peerCall(s.url, s.token, "GET", "/monitors");
    expect(api.status).toBe(401);
    expect(api.json.error.code).toBe("invalid_token");

    const revoked = await makePeer(s.ctx, "gone");
    expect((await peerCall(s.url, revoked.token, "GET", "/hello")).status).toBe(200);
    await revokePeer(s.ctx.db, revoked.id, Date.now());
    const after = await peerCall(s.url, revoked.token, "GET", "/hello");
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe("invalid_token");
  });

  test("a peer token is refused by the API", async () => {
    const res = await s.api("GET", "/api/v1/monitors", undefined, { token: eu.token });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("invalid_token");
  });

  test("a peer of the leader's own region is refused with 409 region_conflict", async () => {
    const local = await makePeer(s.ctx, "local");
    const res = await peerCall(s.url, local.token, "GET", "/hello");
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe("region_conflict");
    expect((await peerCall(s.url, local.token, "POST", "/results", batch([]))).status).toBe(409);
  });

  test("wrong method is 405 with Allow; unknown peer path is 404, both in the API's error body", async () => {
    const res = await peerCall(s.url, eu.token, "POST", "/hello", {});
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(res.json.error.code).toBe("method_not_allowed");
    const missing = await peerCall(s.url, eu.token, "GET", "/nothing-here");
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
  });
});

test("hello tells the probe its region, the leader's region and clock, and the skew it measured", async () => {
  const probeTime = Date.now() + 4000;
  const before = Date.now();
  const res = await peerCall(s.url, eu.token, "GET", `/hello?probe_time=${probeTime}`);
  const after = Date.now();
  expect(res.status).toBe(200);
  const h = res.json.data;
  expect(h.region).toBe("eu");
  expect(h.leader_region).toBe("local");
  expect(h.server_time).toBeGreaterThanOrEqual(before);
  expect(h.server_time).toBeLessThanOrEqual(after);
  expect(h.skew_ms).toBe(probeTime - h.server_time);
  const line = s.logs.find((l) => l.msg === "peer hello" && l.skew_ms === h.skew_ms);
  expect(line?.region).toBe("eu");
});

describe("definitions feed", () => {
  let all: number, euUs: number, usOnly: number, heartbeat: number, paused: number;
  let cursor: string;

  beforeAll(async () => {
    const active = { is_paused: false, interval_sec: 3600 };
    all = await createMonitor(s, httpAttrs({ ...active, name: "all", api_auth_type: "bearer", api_auth_bearer_token: SECRET, regions: ["eu", "us"] }));
    // regions null: every region
    await s.api("PATCH", `/api/v1/monitors/${all}`, { regions: null });
    euUs = await createMonitor(s, httpAttrs({ ...active, name: "eu-us", regions: ["eu", "us"] }));
    usOnly = await createMonitor(s, httpAttrs({ ...active, name: "us", regions: ["us"] }));
    heartbeat = await createMonitor(s, { name: "job", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 5000 });
    paused = await createMonitor(s, httpAttrs({ name: "paused", is_paused: true }));
  });

  test("without a cursor: a full snapshot of the active, pulled monitors of the peer's region, secrets decrypted", async () => {
    const res = await peerCall(s.url, eu.token, "GET", "/monitors");
    expect(res.status).toBe(200);
    const feed = res.json.data;
    expect(feed.full).toBe(true);
    const ids = feed.monitors.map((m: { id: number }) => m.id);
    expect(ids).toContain(all);
    expect(ids).toContain(euUs);
    expect(ids).not.toContain(usOnly);
    expect(ids).not.toContain(heartbeat);
    expect(ids).not.toContain(paused);
    const m = feed.monitors.find((x: { id: number }) => x.id === all);
    expect(m.interval_sec).toBe(3600);
    expect(m.definition_error).toBeNull();
    expect(m.monitor.api_auth_type).toBe("bearer");
    expect(m.monitor.api_auth_bearer_token).toBe(SECRET);
    expect(typeof feed.cursor).toBe("string");
    cursor = feed.cursor;
    // the plaintext secret goes only to the peer: never into the log, never to the API
    expect(s.logText()).not.toContain(SECRET);
    expect((await s.api("GET", `/api/v1/monitors/${all}`)).text).not.toContain(SECRET);
  });

  test("with the cursor and nothing changed: an empty answer at once (wait=0)", async () => {
    const res = await peerCall(s.url, eu.token, "GET", `/monitors?cursor=${cursor}`);
    expect(res.json.data).toEqual({ cursor, full: false, monitors: [], removed: [] });
  });

  test("a long-poll answers with the change as soon as a monitor enters the region", async () => {
    const poll = peerCall(s.url, eu.token, "GET", `/monitors?cursor=${cursor}&wait=25`);
    // the poll is held until the change (no change has happened yet when it arrives)
    await Bun.sleep(100);
    expect((await s.api("PATCH", `/api/v1/monitors/${usOnly}`, { regions: ["us", "eu"] })).status).toBe(200);
    const res = await poll;
    const feed = res.json.data;
    expect(feed.full).toBe(false);
    expect(feed.monitors.map((m: { id: number }) => m.id)).toEqual([usOnly]);
    expect(feed.removed).toEqual([]);
    expect(feed.cursor).not.toBe(cursor);
    cursor = feed.cursor;
  });

  test("pausing, moving out of the region and deleting are removals; resuming and edits are changes", async () => {
    await s.api("PATCH", `/api/v1/monitors/${all}`, { is_paused: true });
    await s.api("PATCH", `/api/v1/monitors/${usOnly}`, { regions: ["us"] });
    await s.api("DELETE", `/api/v1/monitors/${euUs}`);
    let feed = (await peerCall(s.url, eu.token, "GET", `/monitors?cursor=${cursor}`)).json.data;
    expect(feed.full).toBe(false);
    expect(feed.monitors).toEqual([]);
    expect(feed.removed).toEqual([all, euUs, usOnly].sort((a, b) => a - b));
    cursor = feed.cursor;

    await s.api("PATCH", `/api/v1/monitors/${all}`, { is_paused: false, timeout_ms: 4000 });
    feed = (await peerCall(s.url, eu.token, "GET", `/monitors?cursor=${cursor}`)).json.data;
    expect(feed.monitors.map((m: { id: number; monitor: { timeout_ms: number } }) => [m.id, m.monitor.timeout_ms])).toEqual([[all, 4000]]);
    expect(feed.removed).toEqual([]);
  });

  test("a cursor of another leader process (or garbage) earns a full snapshot", async () => {
    for (const bad of ["000000000000.1", "nonsense"]) {
      const feed = (await peerCall(s.url, eu.token, "GET", `/monitors?cursor=${bad}`)).json.data;
      expect(feed.full).toBe(true);
      expect(feed.monitors.map((m: { id: number }) => m.id)).toEqual([all]);
    }
  });

  test("wait must be 0-25 seconds", async () => {
    const res = await peerCall(s.url, eu.token, "GET", `/monitors?wait=26`);
    expect(res.status).toBe(422);
    expect(res.json.error.details.wait).toBeDefined();
  });
});

describe("results", () => {
  let euMon: number, usMon: number;
  beforeAll(async () => {
    // regions without the leader's own, so the leader's scheduler adds no checks of its own
    euMon = await createMonitor(s, httpAttrs({ name: "eu", is_paused: false, interval_sec: 3600, regions: ["eu"] }));
    usMon = await createMonitor(s, httpAttrs({ name: "us", is_paused: false, interval_sec: 3600, regions: ["us"] }));
  });

  test("one outcome per result: stored, duplicate, dropped, rejected; the check records the peer's region", async () => {
    const now = Date.now();
    const good = resultItem(euMon, "down", now - 5000, { latency_ms: 37, error_message: "boom", timings: { dns_ms: null, connect_ms: 3, tls_ms: null, ttfb_ms: 30 } });
    const items = [
      good,
      { ...good }, // the same result_uid again in the same batch
      resultItem(usMon, "up", now - 4000), // not run in eu
      resultItem(999_999, "up", now - 4000), // no such monitor
      resultItem(euMon, "up", now + 61_000), // more than 60 s ahead of the leader's clock
      { ...resultItem(euMon, "up", now), status: "sideways" },
      { ...resultItem(euMon, "up", now), extra_field: 1 },
      resultItem(euMon, "up", now, { timings: { connect_ms: -1 } }),
    ];
    const res = await peerCall(s.url, eu.token, "POST", "/results", batch(items, { queue_length: 42, sent_at: Date.now() + 3000 }));
    expect(res.status).toBe(200);
    const acks = res.json.data.results;
    expect(acks.map((a: { outcome: string }) => a.outcome)).toEqual(["stored", "duplicate", "dropped", "dropped", "rejected", "rejected", "rejected", "rejected"]);
    expect(acks.map((a: { result_uid: string }) => a.result_uid)).toEqual(items.map((i) => i.result_uid));
    expect(acks[2].reason).toBe("region_excluded");
    expect(acks[3].reason).toBe("deleted");
    expect(acks[4].reason).toStartWith("clock_skew");
    expect(acks[5].reason).toContain("status");
    expect(typeof res.json.data.server_time).toBe("number");

    const checks = await s.api("GET", `/api/v1/monitors/${euMon}/checks`);
    expect(checks.json.pagination.total).toBe(1);
    const c = checks.json.data[0].attributes;
    expect(c).toMatchObject({ region: "eu", status: "down", latency_ms: 37, http_code: 503, error_code: "http_error", error_message: "boom", checked_at: new Date(good.checked_at).toISOString() });
    // a probe's connection timings arrive with its result; one without them (an older probe) has none
    expect(c.timings).toEqual({ dns_ms: null, connect_ms: 3, tls_ms: null, ttfb_ms: 30 });

    // the whole batch again (an answer lost on the way): nothing is stored twice
    const again = await peerCall(s.url, eu.token, "POST", "/results", batch(items));
    expect(again.json.data.results[0].outcome).toBe("duplicate");
    expect((await s.api("GET", `/api/v1/monitors/${euMon}/checks`)).json.pagination.total).toBe(1);
    expect(s.logs.some((l) => l.msg === "peer results rejected" && l.region === "eu")).toBe(true);
  });

  test("a probe's result carries the certificate's issuer to the monitor; one without it (an older probe) is stored too", async () => {
    const now = Date.now();
    const notAfter = Date.UTC(2027, 0, 1);
    const withIssuer = resultItem(euMon, "up", now - 3000, { ssl_not_after: notAfter, ssl_issuer: "Let's Encrypt" });
    const tooLong = resultItem(euMon, "up", now - 2500, { ssl_not_after: notAfter, ssl_issuer: "x".repeat(201) });
    const acks = (await peerCall(s.url, eu.token, "POST", "/results", batch([withIssuer, tooLong]))).json.data.results;
    expect(acks.map((a: { outcome: string }) => a.outcome)).toEqual(["stored", "rejected"]);
    const m = (await s.api("GET", `/api/v1/monitors/${euMon}`)).json.data.attributes;
    expect(m).toMatchObject({ ssl_expiry_last_not_after: new Date(notAfter).toISOString(), ssl_last_issuer: "Let's Encrypt" });

    const older = resultItem(euMon, "up", now - 2000, { ssl_not_after: notAfter });
    expect((await peerCall(s.url, eu.token, "POST", "/results", batch([older]))).json.data.results[0].outcome).toBe("stored");
    expect((await s.api("GET", `/api/v1/monitors/${euMon}`)).json.data.attributes.ssl_last_issuer).toBeNull();
  });

  test("the checks list filters by region", async () => {
    const now = Date.now();
    const us = await makePeer(s.ctx, "us");
    await s.api("PATCH", `/api/v1/monitors/${usMon}`, { regions: ["us", "eu"] });
    await peerCall(s.url, eu.token, "POST", "/results", batch([resultItem(usMon, "up", now - 3000), resultItem(usMon, "up", now - 2000)]));
    await peerCall(s.url, us.token, "POST", "/results", batch([resultItem(usMon, "up", now - 1000)]));
    const byRegion = async (r: string) => (await s.api("GET", `/api/v1/monitors/${usMon}/checks?region=${r}`)).json;
    expect((await byRegion("eu")).pagination.total).toBe(2);
    const usChecks = await byRegion("us");
    expect(usChecks.pagination.total).toBe(1);
    expect(usChecks.data[0].attributes.region).toBe("us");
    expect((await byRegion("ap")).pagination.total).toBe(0);
  });

  test("numbers past a safe integer are refused, never a 500: a batch's are a 422 naming them, a result's make it rejected", async () => {
    for (const over of [{ sent_at: 1e308 }, { queue_length: 2 ** 63 }, { sent_at: 2 ** 53 }]) {
      const res = await peerCall(s.url, eu.token, "POST", "/results", batch([], over));
      expect({ over, status: res.status, details: Object.keys(res.json.error?.details ?? {}) }).toEqual({ over, status: 422, details: Object.keys(over) });
    }
    const now = Date.now();
    const items = [
      resultItem(2 ** 63, "up", now),
      resultItem(euMon, "up", now, { ssl_not_after: 1e300 }),
      resultItem(euMon, "up", now, { latency_ms: 1e300 }),
      resultItem(euMon, "up", now, { latency_ms: 2 ** 53 }),
    ];
    const res = await peerCall(s.url, eu.token, "POST", "/results", batch(items));
    expect(res.status).toBe(200);
    expect(res.json.data.results.map((a: { outcome: string }) => a.outcome)).toEqual(["rejected", "rejected", "rejected", "rejected"]);
  });

  test("batch shape: 422 with details; not JSON 400; wrong media type 415; over 1.5 MiB 413", async () => {
    const bad = await peerCall(s.url, eu.token, "POST", "/results", { sent_at: "now", results: "x" });
    expect(bad.status).toBe(422);
    expect(bad.json.error.code).toBe("validation_error");
    expect(Object.keys(bad.json.error.details)).toEqual(expect.arrayContaining(["sent_at", "queue_length", "results"]));
    const tooMany = await peerCall(s.url, eu.token, "POST", "/results", batch(Array.from({ length: 501 }, () => ({}))));
    expect(tooMany.status).toBe(422);
    expect((await peerCall(s.url, eu.token, "POST", "/results", "{not json")).status).toBe(400);
    expect((await peerCall(s.url, eu.token, "POST", "/results", "{}", { "content-type": "text/plain" })).status).toBe(415);
    const big = await peerCall(s.url, eu.token, "POST", "/results", batch([resultItem(euMon, "up", Date.now(), { error_message: "x".repeat(1700 * 1024) })]));
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe("payload_too_large");
  });
});

describe("peers list", () => {
  test("shows each peer with region, last contact, lag, skew and queue; read with an API token holding monitors:read", async () => {
    const now = Date.now();
    await peerCall(s.url, eu.token, "POST", "/results", batch([resultItem(999_998, "up", now - 1500)], { queue_length: 7, sent_at: now + 2500 }));
    const res = await peerCall(s.url, s.token, "GET", "/peers");
    expect(res.status).toBe(200);
    const p = res.json.data.find((x: { id: string }) => x.id === String(eu.id));
    expect(p.type).toBe("peer");
    expect(p.attributes.region).toBe("eu");
    expect(p.attributes.queue_length).toBe(7);
    expect(p.attributes.connected).toBe(true);
    expect(Date.parse(p.attributes.last_seen_at)).toBeGreaterThanOrEqual(now);
    // sent 2.5 s ahead of the leader's clock
    expect(p.attributes.last_skew_ms).toBeGreaterThan(0);
    expect(p.attributes.last_skew_ms).toBeLessThanOrEqual(2500);
    const gone = res.json.data.find((x: { attributes: { region: string } }) => x.attributes.region === "gone");
    expect(gone.attributes.revoked_at).not.toBeNull();
    expect(gone.attributes.connected).toBe(false);
    expect(res.json.pagination).toMatchObject({ page: 1, total: res.json.data.length });

    // the list is the API's: a peer token is refused there as on /api/v1
    const byPeer = await peerCall(s.url, eu.token, "GET", "/peers");
    expect(byPeer.status).toBe(401);
    expect(byPeer.json.error.code).toBe("invalid_token");
    const reader = await makeAccount(s.ctx, "checks-only", "pro", ["checks:read"]);
    const noScope = await peerCall(s.url, reader.token, "GET", "/peers");
    expect(noScope.status).toBe(403);
    expect(noScope.json.error.code).toBe("insufficient_scope");
    const free = await makeAccount(s.ctx, "free-one", "free", ["monitors:read"]);
    expect((await peerCall(s.url, free.token, "GET", "/peers")).json.error.code).toBe("plan_feature_disabled");
  });

  test("an account's token sees the peers serving it: its own and those for every account, never another account's", async () => {
    const one = await makeAccount(s.ctx, "peers-one", "pro", ["monitors:read"]);
    const two = await makeAccount(s.ctx, "peers-two", "pro", ["monitors:read"]);
    const oneProbe = await makePeer(s.ctx, "one-region", [one.accountId]);
    const twoProbe = await makePeer(s.ctx, "two-region", [two.accountId]);
    const both = await makePeer(s.ctx, "both-region", [one.accountId, two.accountId]);
    const listed = async (token: string) => {
      const res = await peerCall(s.url, token, "GET", "/peers?per_page=100");
      expect(res.status).toBe(200);
      return res.json.data.map((x: { id: string }) => Number(x.id)).sort((x: number, y: number) => x - y);
    };
    // every peer made so far in this file other than these serves every account
    const everyAccount = (await s.ctx.db.selectFrom("peers").select("id").where("all_accounts", "=", 1).orderBy("id").execute()).map((r) => r.id);
    expect(everyAccount).toContain(eu.id);
    expect(await listed(one.token)).toEqual([...everyAccount, oneProbe.id, both.id]);
    expect(await listed(two.token)).toEqual([...everyAccount, twoProbe.id, both.id]);
    const text = (await peerCall(s.url, one.token, "GET", "/peers?per_page=100")).text;
    expect(text).not.toContain("two-region");
  });
});

test("the feed carries each new type's own fields, db_password in plaintext to the peer alone", async () => {
  const DB_SECRET = "db-password-for-peer-feed-51c9";
  const active = { is_paused: false, interval_sec: 3600, regions: ["eu"] };
  const pg = await createMonitor(s, { ...VALID_BY_TYPE.postgres, ...active, db_password: DB_SECRET, db_query: "SELECT 42", db_tls: true });
  const ws = await createMonitor(s, { ...VALID_BY_TYPE.websocket, ...active, ws_send: "hello", ws_expect: "world", tls_verify: false });
  const docker = await createMonitor(s, { ...VALID_BY_TYPE.docker, ...active, docker_host: "tcp://127.0.0.1:2375" });
  const domain = await createMonitor(s, { ...VALID_BY_TYPE.domain, ...active, domain_expiry_warn_days: 45 });
  const feed = (await peerCall(s.url, eu.token, "GET", "/monitors")).json.data;
  const of = (id: number) => feed.monitors.find((x: { id: number }) => x.id === id).monitor;
  expect(of(pg)).toMatchObject({ monitor_type: "postgres", target: VALID_BY_TYPE.postgres!.target, db_password: DB_SECRET, db_query: "SELECT 42", db_tls: true, redis_username: null });
  expect(of(ws)).toMatchObject({ monitor_type: "websocket", ws_send: "hello", ws_expect: "world", tls_verify: false });
  expect(of(docker)).toMatchObject({ monitor_type: "docker", target: "nextcloud", docker_host: "tcp://127.0.0.1:2375" });
  expect(of(domain)).toMatchObject({ monitor_type: "domain", target: "example.com", domain_expiry_warn_days: 45 });
  expect(s.logText()).not.toContain(DB_SECRET);
  expect((await s.api("GET", `/api/v1/monitors/${pg}`)).text).not.toContain(DB_SECRET);
});
