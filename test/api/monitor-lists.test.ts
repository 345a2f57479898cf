import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, expectListEnvelope, httpAttrs, VALID_BY_TYPE } from "./fixtures.ts";

// Lists (docs/api-rules.md "Paging and sorting"): page/per_page rules, id ascending, and the monitor filters.
let s: TestServer;
let acct: { accountId: number; token: string };
const ids: number[] = [];
const get = (path: string) => s.api("GET", path, undefined, { token: acct.token });

beforeAll(async () => {
  s = await startTestServer();
  acct = await makeAccount(s.ctx, "lister", "enterprise");
  const seeds = [
    httpAttrs({ name: "Shop Front", target: "http://127.0.0.1:9/shop" }),
    httpAttrs({ name: "Billing API", target: "http://127.0.0.1:9/billing" }),
    { ...VALID_BY_TYPE.tcp, name: "Postgres", target: "127.0.0.1:5432" },
    { ...VALID_BY_TYPE.tcp, name: "Redis 50%", target: "127.0.0.1:6379" },
    { ...VALID_BY_TYPE.dns, name: "Resolver" },
    { ...VALID_BY_TYPE.heartbeat, name: "Nightly backup" },
    { ...VALID_BY_TYPE.ping, name: "Gateway" },
  ];
  for (const body of seeds) ids.push(await createMonitor(s, body, acct.token));
  // states are set directly: these paused monitors are never checked, so they stay as seeded
  const setStatus = (i: number, status: string) => s.ctx.db.updateTable("monitors").set({ last_status: status }).where("id", "=", ids[i]!).execute();
  await setStatus(0, "up");
  await setStatus(1, "down");
  await setStatus(2, "down");
  await setStatus(3, "degraded");
  // another account's monitor never shows up
  await createMonitor(s, httpAttrs({ name: "Shop of someone else" }));
});
afterAll(() => s.stop());

describe("pagination", () => {
  test("defaults: page 1, per_page 25, sorted by id ascending", async () => {
    const res = await get("/api/v1/monitors");
    expect(res.status).toBe(200);
    expectListEnvelope(res.json, { page: 1, per_page: 25, total: 7, total_pages: 1 });
    expect(res.json.data.map((d: { id: string }) => Number(d.id))).toEqual(ids);
    expect(res.json.data.every((d: { type: string }) => d.type === "monitor")).toBe(true);
  });

  test("per_page above 100 is clamped to 100 and the pagination object shows 100", async () => {
    const res = await get("/api/v1/monitors?per_page=500");
    expect(res.status).toBe(200);
    expect(res.json.pagination).toEqual({ page: 1, per_page: 100, total: 7, total_pages: 1 });
  });

  test("pages split the list; total_pages = ceil(total / per_page)", async () => {
    const seen: number[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await get(`/api/v1/monitors?per_page=2&page=${page}`);
      expect(res.json.pagination).toEqual({ page, per_page: 2, total: 7, total_pages: 4 });
      seen.push(...res.json.data.map((d: { id: string }) => Number(d.id)));
    }
    expect(seen).toEqual(ids);
  });

  test("a page past the end returns empty data with correct totals", async () => {
    const res = await get("/api/v1/monitors?per_page=2&page=9");
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual([]);
    expect(res.json.pagination).toEqual({ page: 9, per_page: 2, total: 7, total_pages: 4 });
  });

  test("an empty list has total_pages 0", async () => {
    const res = await get("/api/v1/monitors?q=no-such-monitor");
    expect(res.json.pagination).toEqual({ page: 1, per_page: 25, total: 0, total_pages: 0 });
  });

  scenarios(() => s, ([
    ["per_page=0", "per_page"],
    ["per_page=-1", "per_page"],
    ["per_page=1.5", "per_page"],
    ["page=abc", "page"],
    ["page=0", "page"],
    ["status=sleeping", "status"],
    ["type=ftp", "type"],
  ] as const).map(([qs, key]): Scenario => ({ name: `?${qs} is a 422 on that parameter`, method: "GET", path: `/api/v1/monitors?${qs}`, token: () => acct.token, status: 422, code: "validation_error", details: [key] })));
});

describe("filters", () => {
  const names = async (qs: string) => (await get(`/api/v1/monitors?${qs}`)).json.data.map((d: { attributes: { name: string } }) => d.attributes.name);

  test("status", async () => {
    expect(await names("status=down")).toEqual(["Billing API", "Postgres"]);
    expect(await names("status=up")).toEqual(["Shop Front"]);
    expect(await names("status=degraded")).toEqual(["Redis 50%"]);
    expect(await names("status=unknown")).toEqual(["Resolver", "Nightly backup", "Gateway"]);
  });

  test("status=paused: the paused monitors, whatever state they last had", async () => {
    const other = await makeAccount(s.ctx, "pauser", "enterprise");
    // a heartbeat is never checked by Vigil: running, it keeps its unknown state for the test's length
    await createMonitor(s, { ...VALID_BY_TYPE.heartbeat, name: "Running job", is_paused: false }, other.token);
    await createMonitor(s, { ...VALID_BY_TYPE.tcp, name: "Paused db" }, other.token);
    const theirs = async (qs: string) => (await s.api("GET", `/api/v1/monitors?${qs}`, undefined, { token: other.token })).json.data.map((d: { attributes: { name: string } }) => d.attributes.name);
    expect(await theirs("status=paused")).toEqual(["Paused db"]);
    expect(await theirs("status=unknown")).toEqual(["Running job", "Paused db"]);
    expect(await names("status=paused&type=tcp")).toEqual(["Postgres", "Redis 50%"]);
    expect((await get("/api/v1/monitors?status=paused")).json.pagination.total).toBe(7);
  });

  test("type", async () => {
    expect(await names("type=tcp")).toEqual(["Postgres", "Redis 50%"]);
    expect(await names("type=heartbeat")).toEqual(["Nightly backup"]);
    expect(await names("type=ssl")).toEqual([]);
  });

  test("q searches name and target, case-insensitively, with % taken literally", async () => {
    expect(await names("q=shop")).toEqual(["Shop Front"]);
    expect(await names("q=BILLING")).toEqual(["Billing API"]);
    expect(await names("q=" + encodeURIComponent(":5432"))).toEqual(["Postgres"]);
    expect(await names("q=" + encodeURIComponent("50%"))).toEqual(["Redis 50%"]);
    expect(await names("q=" + encodeURIComponent("%"))).toEqual(["Redis 50%"]);
    expect(await names("q=_")).toEqual([]);
  });

  test("q is literal text whatever it holds: NUL, quotes and FTS or LIKE syntax are searched for, never a 500", async () => {
    const raw = ["abc%00", "Sho%00", "%00", "%00%00%00", "%22", "%22shop%22", "NEAR(shop)", "shop*", "*", "shop%20AND%20front", "-shop", "name:shop", "%3A5432",
      "%E2%80%AE", "shop%E2%80%AE", "%5C", "%27", "(", "%F0%9F%92%A5%F0%9F%92%A5%F0%9F%92%A5"];
    for (const q of raw) {
      const res = await get(`/api/v1/monitors?q=${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 200 });
    }
    expect(await names("q=Shop%00")).toEqual([]);
    expect(await names("q=" + encodeURIComponent(":5432"))).toEqual(["Postgres"]);
    expect(await names("q=" + encodeURIComponent('"'))).toEqual([]);
    for (const path of ["/api/v1/monitors", "/api/v1/status-pages"]) {
      expect((await get(`${path}?q=${"x".repeat(200)}`)).status).toBe(200);
      const long = await get(`${path}?q=${"x".repeat(201)}`);
      expect({ path, status: long.status, details: long.json.error.details }).toEqual({ path, status: 422, details: { q: ["must be at most 200 characters"] } });
      expect((await get(`${path}?q=${"%00".repeat(200)}`)).status).toBe(200);
    }
  });

  test("status pages' q is literal too; a q holding a NUL finds nothing, as no stored text holds one", async () => {
    expect((await s.api("POST", "/api/v1/status-pages", { name: "Acme ab" }, { token: acct.token })).status).toBe(201);
    const refused = await s.api("POST", "/api/v1/status-pages", { name: "Acme ab\u0000cd" }, { token: acct.token });
    expect({ status: refused.status, details: refused.json.error.details }).toEqual({ status: 422, details: { name: ["must not contain the NUL character (U+0000)"] } });
    const pages = async (q: string) => (await get(`/api/v1/status-pages?q=${q}`)).json.data.map((d: { attributes: { name: string } }) => d.attributes.name);
    expect(await pages("ab%00")).toEqual([]);
    expect(await pages("%25")).toEqual([]);
    expect(await pages("ab_")).toEqual([]);
    expect(await pages("ACME%20AB")).toEqual(["Acme ab"]);
  });

  test("filters combine, and the pagination counts the filtered set", async () => {
    const res = await get("/api/v1/monitors?type=tcp&status=down&per_page=1");
    expect(res.json.data.map((d: { attributes: { name: string } }) => d.attributes.name)).toEqual(["Postgres"]);
    expect(res.json.pagination).toEqual({ page: 1, per_page: 1, total: 1, total_pages: 1 });
  });
});
