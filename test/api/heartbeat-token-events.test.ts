import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { AppEvents } from "../../src/context.ts";
import { insertMonitorEvent } from "../../src/store/monitor-events.ts";
import { makeAccount, startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { createMonitor, expectListEnvelope, httpAttrs, VALID_BY_TYPE } from "./fixtures.ts";

// docs/heartbeats.md "Token rotation" and "Timeline events": POST .../heartbeat-token/rotate and
// GET .../events, both tenant-scoped.
let s: TestServer;
let other: { accountId: number; token: string };
const changed: AppEvents["monitor.changed"][] = [];

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
  s.ctx.events.on("monitor.changed", (e) => changed.push(e));
});
afterAll(() => s.stop());

const rotate = (id: number, token?: string) => s.api("POST", `/api/v1/monitors/${id}/heartbeat-token/rotate`, undefined, token ? { token } : {});
const events = (id: number, qs = "", token?: string) => s.api("GET", `/api/v1/monitors/${id}/events${qs}`, undefined, token ? { token } : {});
const pingStatus = async (token: string) => (await fetch(`${s.url}/h/${token}`)).status;

describe("rotate", () => {
  test("returns the monitor with a new token; the old token answers 404 at once, the new one works", async () => {
    const created = await s.api("POST", "/api/v1/monitors", { ...VALID_BY_TYPE.heartbeat, is_paused: false, heartbeat_period_sec: 3600 });
    const id = Number(created.json.data.id);
    const oldToken = created.json.data.attributes.heartbeat_token as string;
    expect(await pingStatus(oldToken)).toBe(200);
    changed.length = 0;
    const res = await rotate(id);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: String(id), type: "monitor", attributes: { monitor_type: "heartbeat", name: "job" } });
    const newToken = res.json.data.attributes.heartbeat_token as string;
    expect(newToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(newToken).not.toBe(oldToken);
    expect(changed).toEqual([{ monitorId: id, accountId: expect.any(Number) }]);
    expect(await pingStatus(oldToken)).toBe(404);
    expect(await pingStatus(newToken)).toBe(200);
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.heartbeat_token).toBe(newToken);
  });

  test("history is kept: earlier events stay and the rotation is on the timeline", async () => {
    const id = await createMonitor(s, VALID_BY_TYPE.heartbeat);
    await insertMonitorEvent(s.ctx.db, { monitorId: id, kind: "ping", at: Date.now() - 60_000, result: "accepted", sourceIp: "127.0.0.1" });
    expect((await rotate(id)).status).toBe(200);
    const res = await events(id);
    expect(res.json.data.map((e: { attributes: { kind: string } }) => e.attributes.kind)).toEqual(["token_rotated", "ping"]);
  });

  test("404 for a non-heartbeat monitor, another account's monitor and an unknown id", async () => {
    const http = await createMonitor(s, httpAttrs());
    const hb = await createMonitor(s, VALID_BY_TYPE.heartbeat);
    const before = (await s.api("GET", `/api/v1/monitors/${hb}`)).json.data.attributes.heartbeat_token;
    for (const [id, token] of [[http, undefined], [hb, other.token], [987654, undefined]] as const) {
      const res = await rotate(id, token);
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("not_found");
    }
    expect((await s.api("GET", `/api/v1/monitors/${hb}`)).json.data.attributes.heartbeat_token).toBe(before);
  });
});

describe("events", () => {
  test("pings and transitions from the real ping endpoint appear with their fields", async () => {
    const created = await s.api("POST", "/api/v1/monitors", { ...VALID_BY_TYPE.heartbeat, is_paused: false, heartbeat_period_sec: 3600 });
    const id = Number(created.json.data.id);
    expect(await pingStatus(created.json.data.attributes.heartbeat_token)).toBe(200);
    const res = await waitFor(async () => {
      const r = await events(id);
      return r.json.pagination.total >= 2 ? r : null;
    });
    expect(res).toBeTruthy();
    const byKind = Object.fromEntries(res!.json.data.map((e: { attributes: { kind: string } }) => [e.attributes.kind, e]));
    expect(byKind.ping.type).toBe("event");
    expect(byKind.ping.attributes).toMatchObject({ monitor_id: id, kind: "ping", result: "accepted", reason: null, source_ip: "127.0.0.1" });
    expect(byKind.ping.attributes.received_at).toBe(byKind.ping.attributes.at);
    expect(byKind.transition.attributes).toMatchObject({ monitor_id: id, kind: "transition", from: "unknown", to: "up" });
  });

  test("newest first, each kind with its own fields, paged, filterable by kind", async () => {
    const id = await createMonitor(s, VALID_BY_TYPE.heartbeat);
    const t = Date.UTC(2026, 10, 20, 10, 0, 0);
    await insertMonitorEvent(s.ctx.db, { monitorId: id, kind: "ping", at: t, result: "accepted", sourceIp: "127.0.0.1", durationMs: 1200 });
    await insertMonitorEvent(s.ctx.db, { monitorId: id, kind: "transition", at: t + 1000, fromState: "up", toState: "down", reason: "no ping within period plus grace" });
    await insertMonitorEvent(s.ctx.db, { monitorId: id, kind: "ping", at: t + 2000, result: "rejected", reason: "status is not ok", sourceIp: "::1" });
    const res = await events(id);
    expectListEnvelope(res.json, { page: 1, per_page: 25, total: 3, total_pages: 1 });
    expect(res.json.data.map((e: { attributes: unknown }) => e.attributes)).toEqual([
      { monitor_id: id, kind: "ping", at: "2026-11-20T10:00:02.000Z", received_at: "2026-11-20T10:00:02.000Z", result: "rejected", reason: "status is not ok", source_ip: "::1", duration_ms: null, body: null, body_bytes: null },
      { monitor_id: id, kind: "transition", at: "2026-11-20T10:00:01.000Z", from: "up", to: "down", reason: "no ping within period plus grace" },
      { monitor_id: id, kind: "ping", at: "2026-11-20T10:00:00.000Z", received_at: "2026-11-20T10:00:00.000Z", result: "accepted", reason: null, source_ip: "127.0.0.1", duration_ms: 1200, body: null, body_bytes: null },
    ]);
    const page2 = await events(id, "?per_page=2&page=2");
    expect(page2.json.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
    expect(page2.json.data.map((e: { attributes: { at: string } }) => e.attributes.at)).toEqual(["2026-11-20T10:00:00.000Z"]);
    const pings = await events(id, "?kind=transition");
    expect(pings.json.data.map((e: { attributes: { kind: string } }) => e.attributes.kind)).toEqual(["transition"]);
    const bad = await events(id, "?kind=nap");
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.json.error.details)).toEqual(["kind"]);
  });

  test("another account's or an unknown monitor is a 404", async () => {
    const id = await createMonitor(s, VALID_BY_TYPE.heartbeat);
    expect((await events(id, "", other.token)).status).toBe(404);
    expect((await events(987654)).status).toBe(404);
  });
});
