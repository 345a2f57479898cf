import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, createStatusPage, expectListEnvelope, httpAttrs, ISO_MS } from "./fixtures.ts";

// Status page updates written by people (README "Groups, tags and status page updates").
let s: TestServer;
let other: { accountId: number; token: string };
let page: number;
let onPage: number;
let offPage: number;
let theirPage: number;

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
  onPage = await createMonitor(s, httpAttrs({ name: "on the page" }));
  offPage = await createMonitor(s, httpAttrs({ name: "not on the page" }));
  page = await createStatusPage(s, { name: "Updates", monitor_ids: [onPage] });
  theirPage = await createStatusPage(s, { name: "Theirs" }, other.token);
});
afterAll(() => s.stop());

const base = () => `/api/v1/status-pages/${page}/updates`;
const post = (body: unknown) => s.api("POST", base(), body);

describe("CRUD", () => {
  test("an incident starts at investigating, published now; a later status step is a PATCH", async () => {
    const before = Date.now();
    const res = await post({ title: " Slow logins ", kind: "incident", body: "Logins take a minute.\n\nWe are on it.", affected_monitor_ids: [onPage] });
    expect(res.status).toBe(201);
    expect(res.json.data.type).toBe("status_page_update");
    const a = res.json.data.attributes;
    expect(a).toMatchObject({ status_page_id: page, title: "Slow logins", kind: "incident", status: "investigating", body: "Logins take a minute.\n\nWe are on it.", affected_monitor_ids: [onPage] });
    for (const k of ["published_at", "created_at", "updated_at"]) expect(a[k]).toMatch(ISO_MS);
    expect(Date.parse(a.published_at)).toBeGreaterThanOrEqual(before - 1000);
    const id = res.json.data.id;
    for (const status of ["identified", "monitoring", "resolved"]) {
      const step = await s.api("PATCH", `${base()}/${id}`, { status });
      expect(step.status).toBe(200);
      expect(step.json.data.attributes).toMatchObject({ status, title: "Slow logins", kind: "incident" });
    }
    const got = await s.api("GET", `${base()}/${id}`);
    expect(got.json.data.attributes.status).toBe("resolved");
    // read-only attributes sent back are ignored
    expect((await s.api("PATCH", `${base()}/${id}`, { ...got.json.data.attributes, title: "Slow logins (fixed)" })).status).toBe(200);
    const del = await s.api("DELETE", `${base()}/${id}`);
    expect(del.json.data).toEqual({ id, type: "status_page_update", attributes: { deleted: true } });
    expect((await s.api("GET", `${base()}/${id}`)).status).toBe(404);
  });

  test("maintenance and info have no status; an explicit published_at is kept; the list is newest published first", async () => {
    const info = await post({ title: "New region", kind: "info", published_at: "2026-11-20T08:00:00+01:00" });
    expect(info.json.data.attributes).toMatchObject({ kind: "info", status: null, body: "", affected_monitor_ids: [], published_at: "2026-11-20T07:00:00.000Z" });
    const maint = await post({ data: { type: "status_page_update", attributes: { title: "Database upgrade", kind: "maintenance", status: null, published_at: "2026-11-22T10:00:00Z" } } });
    expect(maint.status).toBe(201);
    expect(maint.json.data.attributes.status).toBeNull();
    const list = await s.api("GET", `${base()}?per_page=100`);
    expectListEnvelope(list.json, { page: 1, per_page: 100, total: list.json.pagination.total, total_pages: 1 });
    const published = list.json.data.map((d: { attributes: { published_at: string } }) => d.attributes.published_at);
    expect(published).toEqual([...published].sort().reverse());
    expect(list.json.data.map((d: { id: string }) => d.id)).toContain(maint.json.data.id);
  });

  test("changing the kind: away from incident drops the status, to incident starts at investigating", async () => {
    const id = (await post({ title: "Flaky", kind: "incident", status: "identified" })).json.data.id;
    const info = await s.api("PATCH", `${base()}/${id}`, { kind: "info" });
    expect(info.json.data.attributes).toMatchObject({ kind: "info", status: null });
    const back = await s.api("PATCH", `${base()}/${id}`, { kind: "incident" });
    expect(back.json.data.attributes).toMatchObject({ kind: "incident", status: "investigating" });
    const res = await s.api("PATCH", `${base()}/${id}`, { status: null });
    expect(res.status).toBe(422);
    expect(res.json.error.details.status[0]).toContain("is required on an incident update");
  });

  test("affected_monitor_ids: replaced on PATCH; a monitor deleted later leaves the list", async () => {
    const extra = await createMonitor(s, httpAttrs({ name: "short-lived" }));
    await s.api("PATCH", `/api/v1/status-pages/${page}`, { monitor_ids: [onPage, extra] });
    const id = (await post({ title: "Both", kind: "incident", affected_monitor_ids: [extra, onPage] })).json.data.id;
    expect((await s.api("GET", `${base()}/${id}`)).json.data.attributes.affected_monitor_ids).toEqual([onPage, extra].sort((a, b) => a - b));
    await s.api("DELETE", `/api/v1/monitors/${extra}`);
    expect((await s.api("GET", `${base()}/${id}`)).json.data.attributes.affected_monitor_ids).toEqual([onPage]);
    expect((await s.api("PATCH", `${base()}/${id}`, { affected_monitor_ids: [] })).json.data.attributes.affected_monitor_ids).toEqual([]);
  });

  test("deleting the status page deletes its updates", async () => {
    const doomed = await createStatusPage(s, { name: "Doomed" });
    const id = (await s.api("POST", `/api/v1/status-pages/${doomed}/updates`, { title: "x", kind: "info" })).json.data.id;
    await s.api("DELETE", `/api/v1/status-pages/${doomed}`);
    expect(await s.ctx.db.selectFrom("status_page_updates").select("id").where("id", "=", Number(id)).execute()).toEqual([]);
  });
});

describe("tenancy", () => {
  test("another account's page and its updates read as missing, for every method", async () => {
    const theirs = await s.api("POST", `/api/v1/status-pages/${theirPage}/updates`, { title: "private", kind: "info" }, { token: other.token });
    expect(theirs.status).toBe(201);
    const uid = theirs.json.data.id;
    const calls: [string, string, unknown][] = [
      ["GET", `/api/v1/status-pages/${theirPage}/updates`, undefined],
      ["POST", `/api/v1/status-pages/${theirPage}/updates`, { title: "mine", kind: "info" }],
      ["GET", `/api/v1/status-pages/${theirPage}/updates/${uid}`, undefined],
      ["PATCH", `/api/v1/status-pages/${theirPage}/updates/${uid}`, { title: "mine" }],
      ["DELETE", `/api/v1/status-pages/${theirPage}/updates/${uid}`, undefined],
      // their update through my page
      ["GET", `/api/v1/status-pages/${page}/updates/${uid}`, undefined],
      ["PATCH", `/api/v1/status-pages/${page}/updates/${uid}`, { title: "mine" }],
      ["DELETE", `/api/v1/status-pages/${page}/updates/${uid}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await s.api(method, path, body);
      expect({ method, path, status: res.status, code: res.json.error?.code }).toEqual({ method, path, status: 404, code: "not_found" });
    }
    expect((await s.api("GET", `/api/v1/status-pages/${theirPage}/updates/${uid}`, undefined, { token: other.token })).json.data.attributes.title).toBe("private");
  });

  test("the scopes are status_pages:read and status_pages:write", async () => {
    const reader = await makeAccount(s.ctx, "reader", "pro", ["status_pages:read", "monitors:read"]);
    expect((await s.api("GET", `/api/v1/status-pages/987654321/updates`, undefined, { token: reader.token })).status).toBe(404);
    const write = await s.api("POST", `/api/v1/status-pages/987654321/updates`, { title: "x", kind: "info" }, { token: reader.token });
    expect(write.status).toBe(403);
    expect(write.json.error.code).toBe("insufficient_scope");
    expect(write.json.error.message).toContain("status_pages:write");
  });
});

describe("validation", () => {
  scenarios(() => s, [
    ...([
      ["title missing", { kind: "info" }, { title: "is required" }],
      ["kind missing", { title: "a" }, { kind: "is required: one of incident, maintenance, info" }],
      ["title blank", { title: "  ", kind: "info" }, { title: "must not be blank" }],
      ["title of two lines", { title: "Slow\r\nlogins", kind: "info" }, { title: "must be one line" }],
      ["title with a line feed", { title: "Slow\nlogins", kind: "info" }, { title: "must be one line" }],
      ["title with a control character", { title: "Slow\u001b[31m", kind: "info" }, { title: "must be one line" }],
      ["title too long", { title: "x".repeat(201), kind: "info" }, { title: "1 to 200 characters" }],
      ["body too long", { title: "a", kind: "info", body: "x".repeat(10_001) }, { body: "at most 10000 characters" }],
      ["kind unknown", { title: "a", kind: "outage" }, { kind: "must be one of incident, maintenance, info" }],
      ["status on an info update", { title: "a", kind: "info", status: "resolved" }, { status: "is only for incident updates (this one is info)" }],
      ["status on a maintenance update", { title: "a", kind: "maintenance", status: "investigating" }, { status: "is only for incident updates" }],
      ["status unknown", { title: "a", kind: "incident", status: "fixed" }, { status: "must be one of investigating, identified, monitoring, resolved" }],
      ["published_at not a date-time", { title: "a", kind: "info", published_at: "yesterday" }, { published_at: "ISO 8601 date-time" }],
      ["published_at a bare date", { title: "a", kind: "info", published_at: "2026-11-24" }, { published_at: "ISO 8601 date-time" }],
      ["published_at an impossible day", { title: "a", kind: "info", published_at: "2026-02-31T10:00:00Z" }, { published_at: "ISO 8601 date-time" }],
      ["affected_monitor_ids not ints", { title: "a", kind: "info", affected_monitor_ids: ["1"] }, { affected_monitor_ids: "distinct monitor ids" }],
      ["unknown attribute", { title: "a", kind: "info", severity: "high" }, { severity: "is not a status page update attribute" }],
      ["a NUL in the body", { title: "a", kind: "info", body: "x\u0000" }, { body: "NUL character" }],
    ] as const).map(([name, body, details]): Scenario => ({ name, method: "POST", path: () => base(), body, status: 422, code: "validation_error", details })),
    {
      name: "an affected monitor that is not on the page",
      method: "POST",
      path: () => base(),
      body: () => ({ title: "a", kind: "incident", affected_monitor_ids: [onPage, offPage] }),
      status: 422,
      check: (res) => expect(res.json.error.details).toEqual({ affected_monitor_ids: [`monitor ${offPage} is not on this status page`] }),
    },
    { name: "another account's monitor is not on the page either", method: "POST", path: () => base(), body: { title: "a", kind: "info", affected_monitor_ids: [987654321] }, status: 422, details: { affected_monitor_ids: "monitor 987654321 is not on this status page" } },
    { name: "a JSON:API body of another type", method: "POST", path: () => base(), body: { data: { type: "status_page", attributes: { title: "a", kind: "info" } } }, status: 422, details: { "data.type": 'must be "status_page_update"' } },
  ]);

  test("a status on a PATCH of an info update is a 422, and changes nothing", async () => {
    const id = (await post({ title: "FYI", kind: "info" })).json.data.id;
    const res = await s.api("PATCH", `${base()}/${id}`, { status: "monitoring", title: "changed" });
    expect(res.status).toBe(422);
    expect(Object.keys(res.json.error.details)).toEqual(["status"]);
    expect((await s.api("GET", `${base()}/${id}`)).json.data.attributes).toMatchObject({ title: "FYI", status: null });
  });
});
