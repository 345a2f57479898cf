/**
 * Tenant isolation on every route of apiRoutes, derived from the route table so a new endpoint is
 * covered (or this test fails until it is mapped): account B aims each route at account A's
 * records. Routes with an id answer 404 not_found; lists show none of A's records; creates that
 * reference A's records are refused; and nothing of A changes (its rows and links are compared
 * before and after). docs/api-rules.md "Tenancy": an account sees and changes nothing of another.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { apiRoutes } from "../../src/api/routes.ts";
import type { RouteDef } from "../../src/api/route.ts";
import { issuePeerToken } from "../../src/auth/peer-tokens.ts";
import { insertCheck } from "../../src/store/checks.ts";
import { insertIncident } from "../../src/store/incidents.ts";
import { emptyResult } from "../../src/domain/check-result.ts";
import { httpAttrs } from "../api/fixtures.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let a: { accountId: number; token: string };
let b: { accountId: number; token: string };
const A = { monitor: "", heartbeat: "", page: "", channel: "", incident: "", window: "", group: "", update: "", peer: "" };

beforeAll(async () => {
  s = await startTestServer();
  a = await makeAccount(s.ctx, "tenant-a", "enterprise");
  b = await makeAccount(s.ctx, "tenant-b", "enterprise");
  const create = async (path: string, body: Record<string, unknown>) => {
    const r = await s.api("POST", path, body, { token: a.token });
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
    return String(r.json.data.id);
  };
  A.channel = await create("/api/v1/notification-channels", { name: "a-hook", channel_type: "webhook", url: "http://127.0.0.1:9/hook" });
  A.group = await create("/api/v1/groups", { name: "a-group" });
  A.monitor = await create("/api/v1/monitors", httpAttrs({ name: "a-web", notification_channel_ids: [Number(A.channel)], group_id: Number(A.group), tags: ["a-tag"] }));
  A.heartbeat = await create("/api/v1/monitors", { name: "a-job", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000, is_paused: true });
  A.page = await create("/api/v1/status-pages", { name: "A page", monitor_ids: [Number(A.monitor)] });
  A.window = await create("/api/v1/maintenance-windows", { name: "A window", monitor_ids: [Number(A.monitor)], schedule: "0 3 * * *", duration_sec: 600 });
  A.update = await create(`/api/v1/status-pages/${A.page}/updates`, { title: "a-update", kind: "info", affected_monitor_ids: [Number(A.monitor)] });
  await insertCheck(s.ctx.db, Number(A.monitor), "local", { ...emptyResult(Date.now()), status: "up" });
  // a probe peer made for A alone (`vigil peer create --account tenant-a`), and one for B
  A.peer = String((await issuePeerToken(s.ctx.db, { region: "a-region", label: "a-probe", accounts: [a.accountId], now: Date.now() })).row.id);
  await issuePeerToken(s.ctx.db, { region: "b-region", label: "b-probe", accounts: [b.accountId], now: Date.now() });
  A.incident = String((await insertIncident(s.ctx.db, { accountId: a.accountId, monitorId: Number(A.monitor), startedAt: Date.now(), rootCheckId: null, errorCode: "http_error", errorMessage: "HTTP 500", httpCode: 500, failureCount: 1 })).id);
});
afterAll(() => s?.stop());

/** A's record that a route's :id names; a route this does not know fails the test until mapped. */
function targetOf(def: RouteDef): string {
  const p = def.path;
  if (p.startsWith("/api/v1/monitors/:id/heartbeat-token")) return A.heartbeat;
  if (p.startsWith("/api/v1/monitors/:id/events")) return A.heartbeat;
  if (p.startsWith("/api/v1/monitors/:id")) return A.monitor;
  if (p.startsWith("/api/v1/incidents/:id")) return A.incident;
  if (p.startsWith("/api/v1/status-pages/:id")) return A.page;
  if (p.startsWith("/api/v1/notification-channels/:id")) return A.channel;
  if (p.startsWith("/api/v1/maintenance-windows/:id")) return A.window;
  if (p.startsWith("/api/v1/groups/:id")) return A.group;
  throw new Error(`tenancy test: no record of account A mapped for ${def.method} ${p}; add one`);
}

/** What a create by B may reference of A's: each must be refused. */
const CROSS_CREATES: Record<string, Record<string, unknown>> = {
  "/api/v1/monitors": httpAttrs({ name: "b-steals", notification_channel_ids: () => [Number(A.channel)], group_id: () => Number(A.group) }),
  "/api/v1/status-pages": { name: "B steals", monitor_ids: () => [Number(A.monitor)] },
  "/api/v1/notification-channels": { name: "b-hook", channel_type: "webhook", url: "http://127.0.0.1:9/b" },
  "/api/v1/maintenance-windows": { name: "B steals", monitor_ids: () => [Number(A.monitor)], schedule: "0 3 * * *", duration_sec: 600 },
  // the same name as A's group: names are unique within an account only
  "/api/v1/groups": { name: "a-group" },
};
const resolve = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === "function" ? v() : v]));

/** Every row of account A and every link touching A's records. */
async function snapshotA() {
  const db = s.ctx.db;
  const monitors = await db.selectFrom("monitors").selectAll().where("account_id", "=", a.accountId).orderBy("id").execute();
  const ids = monitors.map((m) => m.id);
  return {
    monitors,
    pages: await db.selectFrom("status_pages").selectAll().where("account_id", "=", a.accountId).orderBy("id").execute(),
    channels: await db.selectFrom("notification_channels").selectAll().where("account_id", "=", a.accountId).orderBy("id").execute(),
    incidents: await db.selectFrom("incidents").selectAll().where("account_id", "=", a.accountId).orderBy("id").execute(),
    pageLinks: await db.selectFrom("status_page_monitors").selectAll().where("monitor_id", "in", ids).execute(),
    channelLinks: await db.selectFrom("monitor_channels").selectAll().where("monitor_id", "in", ids).execute(),
    dependencyLinks: await db.selectFrom("monitor_dependencies").selectAll().where((eb) => eb.or([eb("monitor_id", "in", ids), eb("parent_id", "in", ids)])).execute(),
    escalationLinks: await db.selectFrom("monitor_escalation_channels").selectAll().where("monitor_id", "in", ids).execute(),
    checks: await db.selectFrom("checks").select(["id", "monitor_id"]).where("monitor_id", "in", ids).execute(),
    alerts: await db.selectFrom("alerts").select("id").where("account_id", "=", a.accountId).execute(),
    windows: await db.selectFrom("maintenance_windows").selectAll().where("account_id", "=", a.accountId).orderBy("id").execute(),
    windowLinks: await db.selectFrom("maintenance_window_monitors").selectAll().where("monitor_id", "in", ids).orderBy("window_id").execute(),
    groups: await db.selectFrom("monitor_groups").selectAll().where("account_id", "=", a.accountId).orderBy("id").execute(),
    tags: await db.selectFrom("monitor_tags").selectAll().where("monitor_id", "in", ids).orderBy("tag").execute(),
    updates: await db.selectFrom("status_page_updates").selectAll().where("id", "=", Number(A.update)).execute(),
    updateLinks: await db.selectFrom("status_page_update_monitors").selectAll().where("monitor_id", "in", ids).execute(),
  };
}

/** A's ids that a list route could show. */
function listedOfA(path: string): string[] {
  const lists: Record<string, string[]> = {
    "/api/v1/monitors": [A.monitor, A.heartbeat],
    "/api/v1/incidents": [A.incident],
    "/api/v1/status-pages": [A.page],
    "/api/v1/notification-channels": [A.channel],
    "/api/v1/maintenance-windows": [A.window],
    "/api/v1/groups": [A.group],
    "/peer/v1/peers": [A.peer],
  };
  const ids = lists[path];
  if (!ids) throw new Error(`tenancy test: no records of account A mapped for the list ${path}; add them`);
  return ids;
}

test.each(apiRoutes.map((r) => [r.method, r.path, r] as const))("%s %s: account B cannot see or change account A's records", async (method, path, def) => {
  const before = await snapshotA();
  if (path.includes(":id")) {
    const res = await s.api(method, path.replace(":id", targetOf(def)).replace(":updateId", A.update), def.body ? { name: "hijacked" } : undefined, { token: b.token });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe("not_found");
  } else if (method === "GET") {
    // lists, also filtered by A's ids
    for (const q of ["", `?monitor_id=${A.monitor}`, `?q=a-`, `?group_id=${A.group}`, "?tag=a-tag"]) {
      const res = await s.api("GET", path + q, undefined, { token: b.token });
      if (res.status === 422) continue; // a filter this list does not take
      expect(res.status).toBe(200);
      const shown = (res.json.data as { id: string }[]).map((d) => d.id).filter((id) => listedOfA(path).includes(id));
      expect({ list: path + q, shownOfA: shown }).toEqual({ list: path + q, shownOfA: [] });
      expect(res.text).not.toContain("a-web");
      expect(res.text).not.toContain("A page");
      expect(res.text).not.toContain("a-hook");
      expect(res.text).not.toContain("A window");
      expect(res.text).not.toContain("a-tag");
      expect(res.text).not.toContain("a-probe");
    }
  } else {
    const body = CROSS_CREATES[path];
    if (!body) throw new Error(`tenancy test: no cross-account create body for ${method} ${path}; add one`);
    const res = await s.api(method, path, resolve(body), { token: b.token });
    if (res.status === 201) {
      // nothing of A could be referenced: the record is B's alone, invisible to A
      expect((await s.api("GET", `${path}/${res.json.data.id}`, undefined, { token: a.token })).status).toBe(404);
    } else {
      expect(res.status).toBe(422);
    }
  }
  expect(await snapshotA()).toEqual(before);
});

test("account B cannot make its monitors depend on A's, nor escalate to A's channels", async () => {
  const before = await snapshotA();
  const refs = { depends_on_ids: [Number(A.monitor)], escalation_channel_ids: [Number(A.channel)], escalate_after_minutes: 5 };
  const created = await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "b-depends", ...refs }), { token: b.token });
  expect(created.status).toBe(422);
  expect(Object.keys(created.json.error.details).sort()).toEqual(["depends_on_ids", "escalation_channel_ids"]);
  const own = await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "b-own" }), { token: b.token });
  const patched = await s.api("PATCH", `/api/v1/monitors/${own.json.data.id}`, refs, { token: b.token });
  expect(patched.status).toBe(422);
  expect(Object.keys(patched.json.error.details).sort()).toEqual(["depends_on_ids", "escalation_channel_ids"]);
  expect(await snapshotA()).toEqual(before);
});

test("every route of apiRoutes was exercised above", () => {
  const idRoutes = apiRoutes.filter((r) => r.path.includes(":id"));
  for (const r of idRoutes) expect(() => targetOf(r)).not.toThrow();
  for (const r of apiRoutes.filter((r) => !r.path.includes(":id") && r.method !== "GET")) expect(CROSS_CREATES[r.path]).toBeDefined();
  for (const r of apiRoutes.filter((r) => !r.path.includes(":id") && r.method === "GET")) expect(() => listedOfA(r.path)).not.toThrow();
});
