/**
 * What a maintenance window does, on a real server with a real failing target and a real webhook
 * receiver (docs/maintenance-windows.md "What maintenance does", "When a window ends"): while it is
 * active, checks run and are stored and the state follows them, but no incident opens and no alert
 * is queued; when it ends with the monitor still down, the incident opens then and the down alert
 * goes out, once. Heartbeat monitors alike. Ends are real (a window a second or two long), waited
 * for with deadlines.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { httpAttrs } from "../api/fixtures.ts";
import { createHeartbeat, ping } from "../helpers/heartbeat.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";

const HOUR = 3_600_000;
let s: TestServer;
let target: HttpTarget;
let receiver: Receiver;
let channel: number;

beforeAll(async () => {
  receiver = startReceiver();
  target = await startHttpTarget({ "/broken": () => new Response("boom", { status: 500 }) });
  // one failed check turns a monitor down: the tests need not wait for a confirmation; they poll
  // the API, so the rate limit is out of the way
  s = await startTestServer(["--confirmations", "1", "--rate-limit", "pro=1000000,enterprise=1000000"]);
  const ch = await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${receiver.url}/hook` });
  channel = Number(ch.json.data.id);
});
afterAll(async () => {
  await s?.stop();
  await target?.close();
  await receiver?.stop();
});

const iso = (t: number) => new Date(t).toISOString();
const monitorAttrs = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes;
const incidents = async (id: number) => (await s.api("GET", `/api/v1/incidents?monitor_id=${id}`)).json.data as { id: string; attributes: Record<string, any> }[];
const downChecks = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}/checks?status=down`)).json.data as { id: string; attributes: Record<string, any> }[];
const queuedAlerts = (id: number) => s.ctx.db.selectFrom("alerts").select(["id", "event"]).where("monitor_id", "=", id).execute();
const deliveredFor = (id: number) => receiver.requests.filter((r) => JSON.parse(r.body).monitor.id === String(id));

async function brokenMonitor(name: string): Promise<number> {
  const r = await s.api("POST", "/api/v1/monitors", httpAttrs({ name, target: `${target.url}/broken`, interval_sec: 10, timeout_ms: 2000, notification_channel_ids: [channel] }));
  expect(r.status).toBe(201);
  return Number(r.json.data.id);
}

async function window(monitorIds: number[], startsAt: number, endsAt: number) {
  const r = await s.api("POST", "/api/v1/maintenance-windows", { name: "upgrade", monitor_ids: monitorIds, starts_at: iso(startsAt), ends_at: iso(endsAt) });
  expect(r.status).toBe(201);
  return r.json.data as { id: string; attributes: Record<string, any> };
}

/** Resumes the monitor and waits until it is down: checks ran and were stored, state followed. */
async function runUntilDown(id: number): Promise<void> {
  expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false })).status).toBe(200);
  expect(await waitFor(async () => (await monitorAttrs(id)).last_status === "down", { timeoutMs: 15_000 })).toBe(true);
  expect((await downChecks(id)).length).toBeGreaterThanOrEqual(1);
}

/**
 * Ends an active window a moment from now, through its timer (not through the write): far enough
 * ahead that the write lands before it, on a loaded machine too.
 */
async function endSoon(windowId: string, inMs = 3000): Promise<number> {
  const r = await s.api("PATCH", `/api/v1/maintenance-windows/${windowId}`, { ends_at: iso(Date.now() + inMs) });
  expect(r.status).toBe(200);
  expect(r.json.data.attributes.is_active).toBe(true);
  return Date.parse(r.json.data.attributes.ends_at);
}

describe("an http monitor against a target that answers 500", () => {
  test("in an active window: checked and down, no incident, no alert; when the window ends, the incident opens and monitor.down goes out once", async () => {
    const id = await brokenMonitor("in window");
    const w = await window([id], Date.now() - 1000, Date.now() + HOUR);
    expect(w.attributes.is_active).toBe(true);
    await runUntilDown(id);
    const during = await monitorAttrs(id);
    expect(during).toMatchObject({ last_status: "down", is_in_maintenance: true });
    // a second check while in the window: still nothing
    expect(await waitFor(async () => (await downChecks(id)).length >= 2, { timeoutMs: 30_000 })).toBe(true);
    expect(await incidents(id)).toEqual([]);
    expect(await queuedAlerts(id)).toEqual([]);
    expect(deliveredFor(id)).toEqual([]);

    const endsAt = await endSoon(w.id);
    expect(await waitFor(async () => (await incidents(id)).length === 1, { timeoutMs: 15_000 })).toBe(true);
    const [incident] = await incidents(id);
    expect(incident!.attributes).toMatchObject({ status: "open", last_error_code: "http_error", last_http_code: 500 });
    expect(Date.parse(incident!.attributes.started_at)).toBeGreaterThanOrEqual(endsAt);
    expect((await downChecks(id)).map((c) => Number(c.id))).toContain(incident!.attributes.root_check_id);

    expect(await waitFor(() => deliveredFor(id).length === 1, { timeoutMs: 10_000 })).toBe(true);
    const alert = JSON.parse(deliveredFor(id)[0]!.body);
    expect(deliveredFor(id)[0]!.headers.get("x-vigil-event")).toBe("monitor.down");
    expect(alert).toMatchObject({ event: "monitor.down", state: "down", previous_state: "unknown", incident: { id: incident!.id, started_at: incident!.attributes.started_at }, error_code: "http_error" });

    const after = await s.api("GET", `/api/v1/maintenance-windows/${w.id}`);
    expect(after.json.data.attributes).toMatchObject({ is_active: false, next_starts_at: null, next_ends_at: null });
    expect((await monitorAttrs(id)).is_in_maintenance).toBe(false);
    expect(s.logs.some((l) => l.component === "maintenance-windows" && l.msg === "maintenance window ended" && l.window_id === Number(w.id))).toBe(true);
    // acted on once: one incident, one alert queued
    expect((await queuedAlerts(id)).map((a) => a.event)).toEqual(["monitor.down"]);
  }, 60_000);

  test("a window that has not started yet changes nothing: the incident opens and alerts at once", async () => {
    const id = await brokenMonitor("before window");
    await window([id], Date.now() + HOUR, Date.now() + 2 * HOUR);
    await runUntilDown(id);
    expect((await monitorAttrs(id)).is_in_maintenance).toBe(false);
    expect(await waitFor(async () => (await incidents(id)).length === 1)).toBe(true);
    expect(await waitFor(() => deliveredFor(id).length === 1)).toBe(true);
  }, 30_000);

  test("deleting an active window, or disabling it, opens the incident of a monitor still down at once; the manual switch still holds", async () => {
    const a = await brokenMonitor("deleted window");
    const b = await brokenMonitor("disabled window");
    const c = await brokenMonitor("switched");
    expect((await s.api("PATCH", `/api/v1/monitors/${c}`, { is_in_maintenance: true })).status).toBe(200);
    const wa = await window([a, c], Date.now() - 1000, Date.now() + HOUR);
    const wb = await window([b], Date.now() - 1000, Date.now() + HOUR);
    for (const id of [a, b, c]) await runUntilDown(id);
    for (const id of [a, b, c]) expect(await incidents(id)).toEqual([]);

    expect((await s.api("DELETE", `/api/v1/maintenance-windows/${wa.id}`)).status).toBe(200);
    expect((await s.api("PATCH", `/api/v1/maintenance-windows/${wb.id}`, { is_enabled: false })).status).toBe(200);
    expect(await waitFor(async () => (await incidents(a)).length === 1 && (await incidents(b)).length === 1)).toBe(true);
    expect(await waitFor(() => deliveredFor(a).length === 1 && deliveredFor(b).length === 1)).toBe(true);
    // c is in maintenance by its own switch: no incident, no alert
    expect((await monitorAttrs(c)).is_in_maintenance).toBe(true);
    expect(await incidents(c)).toEqual([]);
    expect(await queuedAlerts(c)).toEqual([]);
  }, 60_000);

  test("taking a monitor off an active window opens its incident; the others stay held", async () => {
    const kept = await brokenMonitor("kept in window");
    const released = await brokenMonitor("released from window");
    const w = await window([kept, released], Date.now() - 1000, Date.now() + HOUR);
    for (const id of [kept, released]) await runUntilDown(id);
    expect((await s.api("PATCH", `/api/v1/maintenance-windows/${w.id}`, { monitor_ids: [kept] })).status).toBe(200);
    expect(await waitFor(async () => (await incidents(released)).length === 1)).toBe(true);
    expect((await monitorAttrs(kept)).is_in_maintenance).toBe(true);
    expect(await incidents(kept)).toEqual([]);
  }, 60_000);
});

describe("a window ends under a parent that is down", () => {
  test("the child's incident opens naming the parent's and alerts nobody (README \"Dependencies, reminders and escalation\")", async () => {
    const parent = await brokenMonitor("switch in front");
    const child = await brokenMonitor("service behind it");
    expect((await s.api("PATCH", `/api/v1/monitors/${child}`, { depends_on_ids: [parent] })).status).toBe(200);
    const w = await window([child], Date.now() - 1000, Date.now() + HOUR);
    await runUntilDown(parent);
    expect(await waitFor(async () => (await incidents(parent)).length === 1)).toBe(true);
    await runUntilDown(child);
    expect(await incidents(child)).toEqual([]);

    expect((await s.api("DELETE", `/api/v1/maintenance-windows/${w.id}`)).status).toBe(200);
    expect(await waitFor(async () => (await incidents(child)).length === 1)).toBe(true);
    const [parentIncident] = await incidents(parent);
    const [childIncident] = await incidents(child);
    expect(childIncident!.attributes).toMatchObject({ status: "open", parent_incident_id: Number(parentIncident!.id) });
    expect(await queuedAlerts(child)).toEqual([]);
  }, 60_000);
});

describe("a heartbeat monitor", () => {
  test("in an active window its deadline turns it down without an incident or alert; the window's end opens both", async () => {
    const m = await createHeartbeat(s, { periodSec: 1, graceSec: 0 });
    expect((await s.api("PATCH", `/api/v1/monitors/${m.id}`, { notification_channel_ids: [channel] })).status).toBe(200);
    const w = await window([m.id], Date.now() - 1000, Date.now() + HOUR);
    await ping(s.url, m.token);
    expect(await waitFor(async () => (await monitorAttrs(m.id)).last_status === "down", { timeoutMs: 10_000 })).toBe(true);
    expect((await monitorAttrs(m.id)).is_in_maintenance).toBe(true);
    expect(await incidents(m.id)).toEqual([]);
    expect(await queuedAlerts(m.id)).toEqual([]);

    const endsAt = await endSoon(w.id);
    expect(await waitFor(async () => (await incidents(m.id)).length === 1, { timeoutMs: 15_000 })).toBe(true);
    const [incident] = await incidents(m.id);
    expect(Date.parse(incident!.attributes.started_at)).toBeGreaterThanOrEqual(endsAt);
    expect(incident!.attributes.last_error_code).toBe("heartbeat_missed");
    expect(await waitFor(() => deliveredFor(m.id).length === 1, { timeoutMs: 10_000 })).toBe(true);
    expect(JSON.parse(deliveredFor(m.id)[0]!.body)).toMatchObject({ event: "monitor.down", state: "down", previous_state: "up", incident: { id: incident!.id } });

    // the next ping resolves it and announces the recovery, as any incident
    await ping(s.url, m.token);
    expect(await waitFor(() => deliveredFor(m.id).length === 2)).toBe(true);
    expect(JSON.parse(deliveredFor(m.id)[1]!.body).event).toBe("monitor.up");
  }, 60_000);
});
