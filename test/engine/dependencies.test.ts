/**
 * Dependencies end to end on a real server (README "Dependencies, reminders and escalation"):
 * heartbeat pings and a real HTTP target drive the state changes, a webhook receiver on loopback
 * hears the alerts. A child that goes down while its parent is down opens its incident naming the
 * parent's and alerts nobody; it alerts (monitor.down) if it is still down once the parent is up;
 * a child that recovers while the parent is down sends nothing at all.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { alertsForMonitor } from "../../src/store/alerts.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";

let s: TestServer;
let r: Receiver;
let channelId: number;
let target: HttpTarget;
let targetStatus = 500;

beforeAll(async () => {
  r = startReceiver();
  target = await startHttpTarget({ "/health": () => new Response("x", { status: targetStatus }) });
  // one failed check is enough for an HTTP monitor to count as down, so the test needs no waiting
  s = await startTestServer(["--confirmations", "1"]);
  channelId = Number((await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${r.url}/hook` })).json.data.id);
});
afterAll(async () => {
  await s.stop();
  await r.stop();
  await target.close();
});

async function heartbeat(name: string, dependsOn: number[] = []): Promise<{ id: number; token: string }> {
  const res = await s.api("POST", "/api/v1/monitors", { name, monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, notification_channel_ids: [channelId], depends_on_ids: dependsOn });
  expect(res.status).toBe(201);
  return { id: Number(res.json.data.id), token: res.json.data.attributes.heartbeat_token };
}
async function ping(m: { token: string }, suffix = "") {
  expect((await fetch(`${s.url}/h/${m.token}${suffix}`, { method: "POST" })).status).toBe(200);
}
const state = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status;
async function reachState(id: number, want: string) {
  expect(await waitFor(async () => (await state(id)) === want)).toBe(true);
}
async function incidents(id: number) {
  return (await s.api("GET", `/api/v1/incidents?monitor_id=${id}`)).json.data.map((i: { id: string; attributes: Record<string, unknown> }) => ({ id: Number(i.id), ...i.attributes }));
}
/** The webhook bodies heard for one monitor, as [event, incident id]. */
const heard = (id: number) =>
  r.requests.map((q) => JSON.parse(q.body)).filter((b) => b.monitor.id === String(id)).map((b) => [b.event, Number(b.incident?.id)]);
async function hear(id: number, n: number) {
  expect(await waitFor(() => heard(id).length >= n)).toBe(true);
  return heard(id);
}

test("parent down, then child down: the child's incident names the parent's and alerts nobody; the parent's recovery lets it alert monitor.down; its own recovery alerts too", async () => {
  const parent = await heartbeat("core switch");
  const child = await heartbeat("backup job", [parent.id]);
  await ping(parent);
  await ping(child);

  await ping(parent, "/fail");
  await reachState(parent.id, "down");
  const [parentIncident] = await incidents(parent.id);
  expect(await hear(parent.id, 1)).toEqual([["monitor.down", parentIncident.id]]);

  await ping(child, "/fail");
  await reachState(child.id, "down");
  const [childIncident] = await incidents(child.id);
  expect(childIncident).toMatchObject({ status: "open", parent_incident_id: parentIncident.id });
  expect((await s.api("GET", `/api/v1/incidents/${childIncident.id}`)).json.data.attributes.parent_incident_id).toBe(parentIncident.id);
  // the alert would have been written with the state change: there is none
  expect(await alertsForMonitor(s.ctx.db, child.id)).toEqual([]);

  // the parent recovers while the child is still down: the child alerts now, as the down alert it held
  await ping(parent);
  expect(await hear(parent.id, 2)).toEqual([["monitor.down", parentIncident.id], ["monitor.up", parentIncident.id]]);
  expect(await hear(child.id, 1)).toEqual([["monitor.down", childIncident.id]]);
  const released = JSON.parse(r.requests.find((q) => JSON.parse(q.body).monitor.id === String(child.id))!.body);
  expect(released).toMatchObject({ state: "down", previous_state: "up", error_code: "heartbeat_failed", incident: { id: String(childIncident.id), resolved_at: null } });

  // from here the child's incident is an ordinary one: its recovery alerts
  await ping(child);
  expect(await hear(child.id, 2)).toEqual([["monitor.down", childIncident.id], ["monitor.up", childIncident.id]]);
  expect((await incidents(child.id))[0]).toMatchObject({ status: "resolved", parent_incident_id: parentIncident.id });
});

test("a child that recovers while its parent is down sends nothing, then or when the parent recovers", async () => {
  const parent = await heartbeat("uplink");
  const child = await heartbeat("nightly sync", [parent.id]);
  await ping(parent);
  await ping(child);
  await ping(parent, "/fail");
  await reachState(parent.id, "down");
  await ping(child, "/fail");
  await reachState(child.id, "down");
  await ping(child);
  await reachState(child.id, "up");
  expect((await incidents(child.id))[0]).toMatchObject({ status: "resolved" });
  await ping(parent);
  await hear(parent.id, 2);
  // the parent's recovery is written in one transaction with any release: none happened
  expect(await alertsForMonitor(s.ctx.db, child.id)).toEqual([]);
  expect(heard(child.id)).toEqual([]);
});

test("a child with two parents alerts only once both are up", async () => {
  const a = await heartbeat("power A");
  const b = await heartbeat("power B");
  const child = await heartbeat("rack job", [a.id, b.id]);
  for (const m of [a, b, child]) await ping(m);
  await ping(a, "/fail");
  await ping(b, "/fail");
  await reachState(b.id, "down");
  await ping(child, "/fail");
  await reachState(child.id, "down");
  const [childIncident] = await incidents(child.id);
  expect(childIncident.parent_incident_id).toBe((await incidents(a.id))[0].id);

  await ping(a);
  await hear(a.id, 2);
  expect(await alertsForMonitor(s.ctx.db, child.id)).toEqual([]);
  await ping(b);
  expect(await hear(child.id, 1)).toEqual([["monitor.down", childIncident.id]]);
});

test("a heartbeat parent holds an HTTP child: the child's check fails while the parent is down, and it alerts once the parent is up", async () => {
  const parent = await heartbeat("vpn keepalive");
  await ping(parent);
  await ping(parent, "/fail");
  await reachState(parent.id, "down");
  const [parentIncident] = await incidents(parent.id);

  targetStatus = 500;
  const res = await s.api("POST", "/api/v1/monitors", {
    name: "intranet", monitor_type: "http", target: `${target.url}/health`, interval_sec: 3600, timeout_ms: 2000, notification_channel_ids: [channelId], depends_on_ids: [parent.id],
  });
  expect(res.status).toBe(201);
  const child = Number(res.json.data.id);
  await reachState(child, "down"); // its first check runs at once
  const [childIncident] = await incidents(child);
  expect(childIncident).toMatchObject({ status: "open", parent_incident_id: parentIncident.id, last_http_code: 500 });
  expect(await alertsForMonitor(s.ctx.db, child)).toEqual([]);

  await ping(parent);
  expect(await hear(child, 1)).toEqual([["monitor.down", childIncident.id]]);
});

test("an HTTP parent holds a heartbeat child", async () => {
  targetStatus = 500;
  const res = await s.api("POST", "/api/v1/monitors", { name: "gateway", monitor_type: "http", target: `${target.url}/health`, interval_sec: 3600, timeout_ms: 2000, notification_channel_ids: [channelId] });
  const parent = Number(res.json.data.id);
  await reachState(parent, "down");
  const [parentIncident] = await incidents(parent);
  const child = await heartbeat("job behind the gateway", [parent]);
  await ping(child);
  await ping(child, "/fail");
  await reachState(child.id, "down");
  expect((await incidents(child.id))[0]).toMatchObject({ status: "open", parent_incident_id: parentIncident.id });
  expect(await alertsForMonitor(s.ctx.db, child.id)).toEqual([]);
});

test("deleting the parent of a held child lets the child alert (the leader's sweep finds it)", async () => {
  const parent = await heartbeat("old router");
  const child = await heartbeat("job behind it", [parent.id]);
  await ping(parent);
  await ping(child);
  await ping(parent, "/fail");
  await reachState(parent.id, "down");
  await ping(child, "/fail");
  await reachState(child.id, "down");
  const [childIncident] = await incidents(child.id);
  expect(await alertsForMonitor(s.ctx.db, child.id)).toEqual([]);
  expect((await s.api("DELETE", `/api/v1/monitors/${parent.id}`)).status).toBe(200);
  expect(await hear(child.id, 1)).toEqual([["monitor.down", childIncident.id]]);
  // the parent's incident went with it
  expect((await incidents(child.id))[0].parent_incident_id).toBe(null);
});
