import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiRoutes } from "../../src/api/routes.ts";
import { SCOPES } from "../../src/domain/scopes.ts";
import { insertCheck } from "../../src/store/checks.ts";
import { insertIncident } from "../../src/store/incidents.ts";
import { emptyResult } from "../../src/domain/check-result.ts";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, createStatusPage, httpAttrs, VALID_BY_TYPE } from "./fixtures.ts";

// docs/api-rules.md "Tenancy": an account sees and changes nothing of another, and an id of another
// account is a 404. Every endpoint, scenario-table style.
let s: TestServer;
let a: { accountId: number; token: string };
let b: { accountId: number; token: string };
const ids = { monitor: 0, heartbeat: 0, page: 0, incident: 0 };
const own = { monitor: 0, page: 0, incident: 0 };

beforeAll(async () => {
  s = await startTestServer();
  a = await makeAccount(s.ctx, "tenant-a", "enterprise");
  b = await makeAccount(s.ctx, "tenant-b", "enterprise");
  ids.monitor = await createMonitor(s, httpAttrs({ name: "a-web" }), a.token);
  ids.heartbeat = await createMonitor(s, VALID_BY_TYPE.heartbeat, a.token);
  ids.page = await createStatusPage(s, { name: "A page", monitor_ids: [ids.monitor] }, a.token);
  await insertCheck(s.ctx.db, ids.monitor, "local", { ...emptyResult(Date.now()), status: "up" });
  const mkIncident = (accountId: number, monitorId: number) =>
    insertIncident(s.ctx.db, { accountId, monitorId, startedAt: Date.now(), rootCheckId: null, errorCode: "http_error", errorMessage: "HTTP 500", httpCode: 500, failureCount: 1 });
  ids.incident = (await mkIncident(a.accountId, ids.monitor)).id;
  own.monitor = await createMonitor(s, httpAttrs({ name: "b-web" }), b.token);
  own.page = await createStatusPage(s, { name: "B page" }, b.token);
  own.incident = (await mkIncident(b.accountId, own.monitor)).id;
});
afterAll(() => s.stop());

// every row has four entries: a callback declaring more parameters than a row has is taken as async "done" style
const SCENARIOS: [string, string, () => string, unknown][] = [
  ["GET", "monitor", () => `/api/v1/monitors/${ids.monitor}`, undefined],
  ["PATCH", "monitor", () => `/api/v1/monitors/${ids.monitor}`, { name: "hijacked" }],
  ["DELETE", "monitor", () => `/api/v1/monitors/${ids.monitor}`, undefined],
  ["POST", "rotate", () => `/api/v1/monitors/${ids.heartbeat}/heartbeat-token/rotate`, undefined],
  ["GET", "checks", () => `/api/v1/monitors/${ids.monitor}/checks`, undefined],
  ["GET", "events", () => `/api/v1/monitors/${ids.heartbeat}/events`, undefined],
  ["GET", "incident", () => `/api/v1/incidents/${ids.incident}`, undefined],
  ["GET", "status page", () => `/api/v1/status-pages/${ids.page}`, undefined],
  ["PATCH", "status page", () => `/api/v1/status-pages/${ids.page}`, { name: "hijacked" }],
  ["DELETE", "status page", () => `/api/v1/status-pages/${ids.page}`, undefined],
];

describe("another account's ids are 404 on every endpoint, and nothing changes", () => {
  test.each(SCENARIOS)("%s %s", async (method, _what, path, body) => {
    const before = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "in", [ids.monitor, ids.heartbeat]).orderBy("id").execute();
    const res = await s.api(method, path(), body, { token: b.token });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("not_found");
    const after = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "in", [ids.monitor, ids.heartbeat]).orderBy("id").execute();
    expect(after).toEqual(before);
    const page = await s.api("GET", `/api/v1/status-pages/${ids.page}`, undefined, { token: a.token });
    expect(page.json.data.attributes).toMatchObject({ name: "A page", monitor_ids: [ids.monitor] });
  });

  test.each([
    ["/api/v1/monitors", () => own.monitor],
    ["/api/v1/incidents", () => own.incident],
    ["/api/v1/status-pages", () => own.page],
  ])("GET %s lists only the caller's records", async (path, mine) => {
    const res = await s.api("GET", path, undefined, { token: b.token });
    expect(res.json.data.map((d: { id: string }) => Number(d.id))).toEqual([mine()]);
    expect(res.json.pagination.total).toBe(1);
  });

  test("references to another account's records are refused", async () => {
    const page = await s.api("POST", "/api/v1/status-pages", { name: "steal", monitor_ids: [ids.monitor] }, { token: b.token });
    expect(page.status).toBe(422);
    const filtered = await s.api("GET", `/api/v1/incidents?monitor_id=${ids.monitor}`, undefined, { token: b.token });
    expect(filtered.json.pagination.total).toBe(0);
  });
});

describe("each endpoint requires its scope (403 insufficient_scope naming it)", () => {
  const tokens = new Map<string, string>();
  beforeAll(async () => {
    for (const scope of SCOPES) {
      // the same account's other scopes, so only the missing one can explain a 403
      const acct = await makeAccount(s.ctx, `lacks-${scope}`, "enterprise", SCOPES.filter((x) => x !== scope));
      tokens.set(scope, acct.token);
    }
  });

  scenarios(() => s, apiRoutes.map(({ method, path, scope }): Scenario => ({
    name: `${method} ${path} needs ${scope}`, method, path: path.replace(":id", "1"), body: method === "POST" || method === "PATCH" ? {} : undefined, token: () => tokens.get(scope)!,
    status: 403, code: "insufficient_scope", contains: { error: { message: expect.stringContaining(scope) } },
  })));

  test("the documented scope of each endpoint (docs/api-rules.md \"Endpoints and scopes\")", () => {
    const table = Object.fromEntries(apiRoutes.map((r) => [`${r.method} ${r.path}`, r.scope]));
    expect(table).toMatchObject({
      "GET /api/v1/monitors": "monitors:read",
      "POST /api/v1/monitors": "monitors:write",
      "GET /api/v1/monitors/:id": "monitors:read",
      "PATCH /api/v1/monitors/:id": "monitors:write",
      "DELETE /api/v1/monitors/:id": "monitors:write",
      "POST /api/v1/monitors/:id/heartbeat-token/rotate": "monitors:write",
      "GET /api/v1/monitors/:id/checks": "checks:read",
      "GET /api/v1/monitors/:id/events": "checks:read",
      "GET /api/v1/incidents": "incidents:read",
      "GET /api/v1/incidents/:id": "incidents:read",
      "GET /api/v1/status-pages": "status_pages:read",
      "POST /api/v1/status-pages": "status_pages:write",
      "GET /api/v1/status-pages/:id": "status_pages:read",
      "PATCH /api/v1/status-pages/:id": "status_pages:write",
      "DELETE /api/v1/status-pages/:id": "status_pages:write",
    });
  });
});
