import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { emptyResult, failed, type CheckResult } from "../../src/domain/check-result.ts";
import { runMaintenance } from "../../src/engine/retention.ts";
import { insertCheck } from "../../src/store/checks.ts";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, startupMaintenanceDone, waitFor, type TestServer } from "../helpers/server.ts";
import { createMonitor, expectListEnvelope, httpAttrs } from "./fixtures.ts";

// GET /api/v1/monitors/{id}/checks (docs/monitors.md "Check results", docs/api-rules.md). Checks are
// seeded straight into the store, as the engine would write them.
let s: TestServer;
let other: { accountId: number; token: string };
let monitorId: number;
const checkIds: number[] = [];
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0); // 2026-11-20T12:00:00Z
const HOUR = 3_600_000;

const seeds: [string, number, Partial<CheckResult>][] = [
  ["local", 0, { status: "up", latency_ms: 41, http_code: 200, resolved_ip: "127.0.0.1" }],
  ["eu", 1, failed(0, "connection_timeout", "no answer within 5000 ms")],
  ["local", 2, { status: "degraded", latency_ms: 1500, http_code: 200, degraded_reason: "latency 1500 ms above 1000 ms" }],
  ["eu", 3, { status: "up", latency_ms: 30, http_code: 200, ssl_not_after: Date.UTC(2027, 0, 1), dns_answer: ["127.0.0.1", "::1"], synthetic_trace_json: { steps: [{ name: "login", status: 200 }] }, timings: { dns_ms: 2, connect_ms: 5, tls_ms: 19, ttfb_ms: 27.6 } }],
  ["local", 4, failed(0, "http_error", "HTTP 503", { http_code: 503, latency_ms: 12 })],
  ["eu", 5, { status: "up", latency_ms: 25, http_code: 200 }],
];

beforeAll(async () => {
  s = await startTestServer();
  // the server's maintenance runs once at start: seeded after it, the checks stay rows until the
  // test below packs them (on PostgreSQL that run takes long enough to meet the seeding otherwise)
  expect(await startupMaintenanceDone(s)).toBe(true);
  other = await makeAccount(s.ctx, "other", "pro");
  monitorId = await createMonitor(s, httpAttrs());
  for (const [region, hours, r] of seeds) {
    checkIds.push(await insertCheck(s.ctx.db, monitorId, region, { ...emptyResult(0), ...r, checked_at: T0 + hours * HOUR }));
  }
  // a check of another monitor never shows up
  const otherMonitor = await createMonitor(s, httpAttrs({ name: "noise" }));
  await insertCheck(s.ctx.db, otherMonitor, "local", { ...emptyResult(T0), status: "down" });
});
afterAll(() => s.stop());

const path = () => `/api/v1/monitors/${monitorId}/checks`;
const idsOf = (json: any) => json.data.map((d: { id: string }) => Number(d.id));
const newestFirst = () => [...checkIds].reverse();

test("lists the monitor's checks newest first in the list envelope", async () => {
  const res = await s.api("GET", path());
  expect(res.status).toBe(200);
  expectListEnvelope(res.json, { page: 1, per_page: 25, total: 6, total_pages: 1 });
  expect(idsOf(res.json)).toEqual(newestFirst());
  expect(res.json.data.every((d: { type: string }) => d.type === "check")).toBe(true);
});

test("item attributes are as documented: ints, ISO times, arrays and objects parsed, region", async () => {
  const res = await s.api("GET", path());
  const byId = new Map(res.json.data.map((d: { id: string; attributes: unknown }) => [Number(d.id), d.attributes]));
  expect(byId.get(checkIds[3])).toEqual({
    monitor_id: monitorId, status: "up", checked_at: "2026-11-20T15:00:00.000Z", latency_ms: 30, http_code: 200, error_code: null, error_message: null,
    degraded_reason: null, resolved_ip: null, ssl_not_after: "2027-01-01T00:00:00.000Z", dns_answer: ["127.0.0.1", "::1"], synthetic_trace_json: { steps: [{ name: "login", status: 200 }] }, region: "eu",
    timings: { dns_ms: 2, connect_ms: 5, tls_ms: 19, ttfb_ms: 28 },
  });
  expect(byId.get(checkIds[1])).toMatchObject({ status: "down", error_code: "connection_timeout", error_message: "no answer within 5000 ms", latency_ms: null, http_code: null, ssl_not_after: null, dns_answer: null, synthetic_trace_json: null, timings: null });
});

describe("filters", () => {
  test.each([
    ["status=down", [4, 1]],
    ["status=degraded", [2]],
    ["status=up", [5, 3, 0]],
    ["region=eu", [5, 3, 1]],
    ["region=local&status=up", [0]],
    ["region=mars", []],
    // no stored text holds a NUL (docs/api-rules.md "Text"): such a region names none
    ["region=eu%00", []],
  ])("?%s", async (qs, expected) => {
    const res = await s.api("GET", `${path()}?${qs}`);
    expect(res.status).toBe(200);
    expect(idsOf(res.json)).toEqual(expected.map((i) => checkIds[i]));
    expect(res.json.pagination.total).toBe(expected.length);
  });

  // every accepted date form (docs/api-rules.md "Dates and date filters"), each naming 14:00Z or a whole day
  const epoch14 = String((T0 + 2 * HOUR) / 1000);
  test.each([
    ["from=2026-11-20", [5, 4, 3, 2, 1, 0]],
    ["from=2026-11-21", []],
    ["to=2026-11-20", []],
    ["from=2026-11-20T14:00:00Z", [5, 4, 3, 2]],
    ["from=2026-11-20T14:00Z", [5, 4, 3, 2]],
    ["from=2026-11-20T14:00:00.000Z", [5, 4, 3, 2]],
    ["from=2026-11-20T14:00:00.001Z", [5, 4, 3]],
    ["from=" + encodeURIComponent("2026-11-20T16:00:00+02:00"), [5, 4, 3, 2]],
    ["from=" + encodeURIComponent("2026-11-20T09:00:00-05:00"), [5, 4, 3, 2]],
    [`from=${epoch14}`, [5, 4, 3, 2]],
    [`to=${epoch14}`, [2, 1, 0]],
    ["from=2026-11-20T13:00:00Z&to=2026-11-20T15:00:00Z", [3, 2, 1]],
  ])("?%s", async (qs, expected) => {
    const res = await s.api("GET", `${path()}?${qs}`);
    expect(res.status).toBe(200);
    expect(idsOf(res.json)).toEqual(expected.map((i) => checkIds[i]));
  });

  scenarios(() => s, ([
    ["from=yesterday", "from"],
    ["to=2026-13-01", "to"],
    ["from=2026-11-20T14:00:00", "from"],
    ["from=2026-02-30", "from"],
    ["status=unknown", "status"],
    ["per_page=0", "per_page"],
  ] as const).map(([qs, key]): Scenario => ({ name: `?${qs} is a 422 on that parameter`, method: "GET", path: () => `${path()}?${qs}`, status: 422, details: [key] })));
});

test("pages keep the newest-first order", async () => {
  const p1 = await s.api("GET", `${path()}?per_page=4`);
  const p2 = await s.api("GET", `${path()}?per_page=4&page=2`);
  expect(p1.json.pagination).toEqual({ page: 1, per_page: 4, total: 6, total_pages: 2 });
  expect([...idsOf(p1.json), ...idsOf(p2.json)]).toEqual(newestFirst());
  const past = await s.api("GET", `${path()}?per_page=4&page=3`);
  expect(past.json.data).toEqual([]);
  expect(past.json.pagination.total).toBe(6);
});

test("another account's monitor, or an unknown one, is a 404", async () => {
  expect((await s.api("GET", path(), undefined, { token: other.token })).status).toBe(404);
  expect((await s.api("GET", "/api/v1/monitors/987654/checks")).status).toBe(404);
});

test("once packed into blocks by maintenance, every list answers exactly as it did from rows, but for the timings packed checks do not keep", async () => {
  const queries = ["", "?status=down", "?region=eu", "?per_page=2&page=2", "?per_page=4&page=2", "?from=2026-11-20T14:00:00Z&to=2026-11-20T15:00:00Z", "?status=up&from=2026-11-20T13:00:00Z"];
  const before = await Promise.all(queries.map(async (q) => (await s.api("GET", `${path()}${q}`)).json));
  // the server's one maintenance run was over before the seeding: the lists above came from rows
  expect(await s.ctx.db.selectFrom("checks").select("id").where("monitor_id", "=", monitorId).execute()).toHaveLength(seeds.length);
  const report = await runMaintenance(s.ctx);
  expect(report.checksPacked).toBeGreaterThanOrEqual(seeds.length);
  expect(await s.ctx.db.selectFrom("checks").select("id").where("monitor_id", "=", monitorId).execute()).toEqual([]);
  // timings would double a block's size (README, Storage): a packed check reads back without them
  const withoutTimings = (data: { attributes: Record<string, unknown> }[]) => data.map((d) => ({ ...d, attributes: { ...d.attributes, timings: null } }));
  expect(before[0].data.some((d: { attributes: { timings: unknown } }) => d.attributes.timings !== null)).toBe(true);
  for (const [i, q] of queries.entries()) {
    const after = (await s.api("GET", `${path()}${q}`)).json;
    expect({ q, data: after.data, pagination: after.pagination }).toEqual({ q, data: withoutTimings(before[i].data), pagination: before[i].pagination });
  }
});
