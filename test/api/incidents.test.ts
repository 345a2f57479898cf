import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { insertIncident, resolveIncidentRow } from "../../src/store/incidents.ts";
import type { IncidentRow } from "../../src/store/tables.ts";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, expectListEnvelope, httpAttrs } from "./fixtures.ts";

// GET /api/v1/incidents and /incidents/{id} (docs/monitors.md "Incidents"); seeded through the
// incident store functions the engine uses.
let s: TestServer;
let other: { accountId: number; token: string };
let a1: number;
let a2: number;
const inc: IncidentRow[] = [];
let foreign: IncidentRow;
const T0 = Date.UTC(2026, 10, 20, 0, 0, 0);
const HOUR = 3_600_000;

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
  const acct = (await s.ctx.db.selectFrom("accounts").select("id").where("name", "=", "default").executeTakeFirstOrThrow()).id;
  a1 = await createMonitor(s, httpAttrs({ name: "a1" }));
  a2 = await createMonitor(s, httpAttrs({ name: "a2" }));
  const b1 = await createMonitor(s, httpAttrs({ name: "b1" }), other.token);
  const open = (monitorId: number, hours: number, accountId = acct) =>
    insertIncident(s.ctx.db, { accountId, monitorId, startedAt: T0 + hours * HOUR, rootCheckId: 100 + hours, errorCode: "http_error", errorMessage: "HTTP 500", httpCode: 500, failureCount: 2 });
  inc.push(await resolveIncidentRow(s.ctx.db, await open(a1, 1), T0 + 1 * HOUR + 90_400, 201)); // 0: a1 resolved, 90.4 s
  inc.push(await resolveIncidentRow(s.ctx.db, await open(a2, 2), T0 + 3 * HOUR, 202)); // 1: a2 resolved
  inc.push(await open(a1, 5)); // 2: a1 open
  inc.push(await open(a2, 5)); // 3: a2 open, same start as 2: id breaks the tie
  foreign = await open(b1, 4, other.accountId);
});
afterAll(() => s.stop());

const ids = (json: any) => json.data.map((d: { id: string }) => Number(d.id));
const order = (...i: number[]) => i.map((n) => inc[n]!.id);

test("list: started_at descending then id descending, the account's incidents only", async () => {
  const res = await s.api("GET", "/api/v1/incidents");
  expect(res.status).toBe(200);
  expectListEnvelope(res.json, { page: 1, per_page: 25, total: 4, total_pages: 1 });
  expect(ids(res.json)).toEqual(order(3, 2, 1, 0));
  expect(res.json.data.every((d: { type: string }) => d.type === "incident")).toBe(true);
  const theirs = await s.api("GET", "/api/v1/incidents", undefined, { token: other.token });
  expect(ids(theirs.json)).toEqual([foreign.id]);
});

test("attributes: ints inside attributes, ISO times, duration rounded to seconds, nulls while open", async () => {
  const res = await s.api("GET", `/api/v1/incidents/${inc[0]!.id}`);
  expect(res.status).toBe(200);
  expect(res.json.data).toEqual({
    id: String(inc[0]!.id),
    type: "incident",
    attributes: {
      monitor_id: a1, status: "resolved", started_at: "2026-11-20T01:00:00.000Z", resolved_at: "2026-11-20T01:01:30.400Z", duration_ms: 90_000,
      failure_count: 2, last_error_code: "http_error", last_error_message: "HTTP 500", last_http_code: 500, root_check_id: 101, resolved_check_id: 201,
      parent_incident_id: null, created_at: "2026-11-20T01:00:00.000Z", updated_at: "2026-11-20T01:01:30.400Z",
    },
  });
  expect(typeof res.json.meta.request_id).toBe("string");
  const open = await s.api("GET", `/api/v1/incidents/${inc[2]!.id}`);
  expect(open.json.data.attributes).toMatchObject({ status: "open", resolved_at: null, duration_ms: null, resolved_check_id: null });
});

describe("filters", () => {
  test.each([
    [() => `monitor_id=${a1}`, [2, 0]],
    [() => `monitor_id=${a2}&resolved=false`, [3]],
    [() => "resolved=true", [1, 0]],
    [() => "resolved=false", [3, 2]],
    [() => "from=2026-11-20T02:00:00Z", [3, 2, 1]],
    [() => "to=2026-11-20T02:00:00Z", [1, 0]],
    [() => "from=" + encodeURIComponent("2026-11-20T03:00:00+01:00") + "&to=2026-11-20T05:00Z", [3, 2, 1]],
    [() => `from=${(T0 + 5 * HOUR) / 1000}`, [3, 2]],
    [() => "from=2026-11-21", []],
    [() => "to=2026-11-20", []],
  ])("#%#", async (qs, expected) => {
    const res = await s.api("GET", `/api/v1/incidents?${qs()}`);
    expect(res.status).toBe(200);
    expect(ids(res.json)).toEqual(order(...expected));
    expect(res.json.pagination.total).toBe(expected.length);
  });

  test("a monitor of another account filters to nothing", async () => {
    const res = await s.api("GET", `/api/v1/incidents?monitor_id=${foreign.monitor_id}`);
    expect(res.json.pagination.total).toBe(0);
  });

  test("an open incident exists when monitor_id + resolved=false has total > 0 (docs/monitors.md)", async () => {
    expect((await s.api("GET", `/api/v1/incidents?monitor_id=${a1}&resolved=false`)).json.pagination.total).toBeGreaterThan(0);
    const quiet = await createMonitor(s, httpAttrs({ name: "quiet" }));
    expect((await s.api("GET", `/api/v1/incidents?monitor_id=${quiet}&resolved=false`)).json.pagination.total).toBe(0);
  });

  scenarios(() => s, ([
    ["resolved=maybe", "resolved"],
    ["monitor_id=abc", "monitor_id"],
    ["monitor_id=0", "monitor_id"],
    ["from=last-week", "from"],
    ["to=2026-11-20T25:00:00Z", "to"],
    ["page=abc", "page"],
  ] as const).map(([qs, key]): Scenario => ({ name: `?${qs} is a 422 on that parameter`, method: "GET", path: `/api/v1/incidents?${qs}`, status: 422, details: [key] })));

  test("paging", async () => {
    const res = await s.api("GET", "/api/v1/incidents?per_page=3&page=2");
    expect(ids(res.json)).toEqual(order(0));
    expect(res.json.pagination).toEqual({ page: 2, per_page: 3, total: 4, total_pages: 2 });
  });
});

test("GET one: another account's or an unknown id is a 404", async () => {
  expect((await s.api("GET", `/api/v1/incidents/${foreign.id}`)).status).toBe(404);
  expect((await s.api("GET", `/api/v1/incidents/${inc[0]!.id}`, undefined, { token: other.token })).status).toBe(404);
  expect((await s.api("GET", "/api/v1/incidents/424242")).status).toBe(404);
});

test.each([
  ["POST", "/api/v1/incidents"],
  ["PUT", "/api/v1/incidents"],
  ["DELETE", "/api/v1/incidents"],
  ["PATCH", "/api/v1/incidents/1"],
  ["PUT", "/api/v1/incidents/1"],
  ["DELETE", "/api/v1/incidents/1"],
  ["POST", "/api/v1/incidents/1"],
])("incidents are read-only: %s %s is a 405 with Allow: GET", async (method, path) => {
  const res = await s.api(method, path, {});
  expect(res.status).toBe(405);
  expect(res.headers.get("allow")).toBe("GET, HEAD");
  expect(res.json.error.code).toBe("method_not_allowed");
  const count = await s.ctx.db.selectFrom("incidents").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  expect(Number(count.n)).toBe(5);
});
