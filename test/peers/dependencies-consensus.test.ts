/**
 * Dependencies with several regions (README "Dependencies, reminders and escalation"): a parent and
 * a child checked from two probe regions that report to a real in-process leader, whose clock moves
 * with the reports, and a heartbeat child of the same parent. The consensus state decides what is
 * down: a parent down in one region of two is not down, and holds nothing; down in both, it holds
 * its children's alerts until it is up again by consensus.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { alertsForMonitor } from "../../src/store/alerts.ts";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";
import { batch, makePeer, peerCall, resultItem } from "./helpers.ts";

let s: TestServer;
let r: Receiver;
let now = Date.now();
const T0 = now;
const clock = { now: () => now };
const peers: Record<string, { token: string }> = {};
let channelId: number;

beforeAll(async () => {
  r = startReceiver();
  s = await startTestServer([], { clock });
  for (const region of ["eu", "us"]) peers[region] = await makePeer(s.ctx, region);
  channelId = Number((await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${r.url}/hook` })).json.data.id);
});
afterAll(async () => {
  await s.stop();
  await r.stop();
});

/** One result from `region`, stamped `atMs` after T0 (the leader's clock moves there too). */
async function report(region: string, monitorId: number, status: "up" | "down", atMs: number) {
  now = Math.max(now, T0 + atMs);
  const res = await peerCall(s.url, peers[region]!.token, "POST", "/results", batch([resultItem(monitorId, status, T0 + atMs)]));
  expect(res.status).toBe(200);
}
/** Both regions report `status` twice (confirmed), from `atMs` on. */
async function everywhere(monitorId: number, status: "up" | "down", atMs: number) {
  for (const [i, region] of ["eu", "us", "eu", "us"].entries()) await report(region, monitorId, status, atMs + i * 100);
}
const state = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status;
const incidents = async (id: number) => (await s.api("GET", `/api/v1/incidents?monitor_id=${id}`)).json.data.map((i: { id: string; attributes: Record<string, unknown> }) => ({ id: Number(i.id), ...i.attributes }));
const heard = (id: number) => r.requests.map((q) => JSON.parse(q.body)).filter((b) => b.monitor.id === String(id)).map((b) => [b.event, Number(b.incident?.id)]);
const checked = (name: string, over: Record<string, unknown> = {}) =>
  createMonitor(s, httpAttrs({ name, is_paused: false, interval_sec: 10, timeout_ms: 2000, regions: ["eu", "us"], notification_channel_ids: [channelId], ...over }));

test("a parent down by consensus holds a checked child and a heartbeat child; up by consensus, it lets both alert", async () => {
  const parent = await checked("router");
  const child = await checked("web", { depends_on_ids: [parent] });
  const hb = await s.api("POST", "/api/v1/monitors", { name: "cron", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, notification_channel_ids: [channelId], depends_on_ids: [parent] });
  const job = { id: Number(hb.json.data.id), token: hb.json.data.attributes.heartbeat_token as string };
  await everywhere(parent, "up", 0);
  await everywhere(child, "up", 0);
  expect((await fetch(`${s.url}/h/${job.token}`, { method: "POST" })).status).toBe(200);

  // down in one region only: not down, so it holds nothing
  await report("eu", parent, "down", 1000);
  await report("eu", parent, "down", 1100);
  expect(await state(parent)).not.toBe("down");

  await everywhere(parent, "down", 2000);
  expect(await state(parent)).toBe("down");
  const [parentIncident] = await incidents(parent);
  await everywhere(child, "down", 3000);
  expect(await state(child)).toBe("down");
  expect((await fetch(`${s.url}/h/${job.token}/fail`, { method: "POST" })).status).toBe(200);
  expect(await waitFor(async () => (await state(job.id)) === "down")).toBe(true);
  const [childIncident] = await incidents(child);
  const [jobIncident] = await incidents(job.id);
  expect(childIncident.parent_incident_id).toBe(parentIncident.id);
  expect(jobIncident.parent_incident_id).toBe(parentIncident.id);
  expect(await alertsForMonitor(s.ctx.db, child)).toEqual([]);
  expect(await alertsForMonitor(s.ctx.db, job.id)).toEqual([]);

  // one region sees the parent up again: still down by consensus, nothing released
  await report("eu", parent, "up", 4000);
  expect(await state(parent)).toBe("down");
  expect(await alertsForMonitor(s.ctx.db, child)).toEqual([]);
  await report("us", parent, "up", 4100);
  expect(await state(parent)).toBe("up");
  // the parent's recovery and the released children are separate deliveries: wait for all three
  expect(await waitFor(() => heard(child).length >= 1 && heard(job.id).length >= 1 && heard(parent).length >= 2)).toBe(true);
  expect(heard(child)).toEqual([["monitor.down", childIncident.id]]);
  expect(heard(job.id)).toEqual([["monitor.down", jobIncident.id]]);
  expect(heard(parent)).toEqual([["monitor.down", parentIncident.id], ["monitor.up", parentIncident.id]]);
});

test("a child whose regions recover while the parent is down by consensus sends nothing", async () => {
  const parent = await checked("firewall");
  const child = await checked("api", { depends_on_ids: [parent] });
  await everywhere(parent, "up", 10_000);
  await everywhere(child, "up", 10_000);
  await everywhere(parent, "down", 11_000);
  await everywhere(child, "down", 12_000);
  await everywhere(child, "up", 13_000);
  expect((await incidents(child))[0]).toMatchObject({ status: "resolved" });
  await everywhere(parent, "up", 14_000);
  expect(await waitFor(() => heard(parent).length >= 2)).toBe(true);
  expect(await alertsForMonitor(s.ctx.db, child)).toEqual([]);
});
