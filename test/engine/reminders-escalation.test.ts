/**
 * Reminders and escalation on a real server whose clock the test moves (README "Dependencies,
 * reminders and escalation"): heartbeat pings open and resolve incidents, webhook receivers on
 * loopback hear the alerts, and "five minutes later" is a jump of the server's clock, not a wait.
 * While an incident is open its down alert is repeated every alert_repeat_minutes
 * (monitor.still_down); after escalate_after_minutes it goes to the escalation channels
 * (monitor.escalated), which then hear the recovery; a resolved incident stops both.
 *
 * "Nothing more was sent" is shown with a sentinel: a second monitor whose reminder falls due at the
 * same moment. Due rows are fired in one pass, so once the sentinel's reminder is heard, the pass
 * that would have sent the other one has run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";

const MINUTE = 60_000;
let offset = 0;
const clock = { now: () => Date.now() + offset };
let s: TestServer;
let team: Receiver;
let pager: Receiver;
let teamChannel: number;
let pagerChannel: number;

beforeAll(async () => {
  team = startReceiver();
  pager = startReceiver();
  s = await startTestServer([], { clock });
  const hook = async (name: string, r: Receiver) => Number((await s.api("POST", "/api/v1/notification-channels", { name, channel_type: "webhook", url: `${r.url}/${name}` })).json.data.id);
  teamChannel = await hook("team", team);
  pagerChannel = await hook("pager", pager);
});
afterAll(async () => {
  await s.stop();
  await team.stop();
  await pager.stop();
});

async function heartbeat(name: string, attrs: Record<string, unknown>): Promise<{ id: number; token: string }> {
  const res = await s.api("POST", "/api/v1/monitors", { name, monitor_type: "heartbeat", interval_sec: 86_400, timeout_ms: 1000, notification_channel_ids: [teamChannel], ...attrs });
  expect(res.status).toBe(201);
  return { id: Number(res.json.data.id), token: res.json.data.attributes.heartbeat_token };
}
async function ping(m: { token: string }, suffix = "") {
  expect((await fetch(`${s.url}/h/${m.token}${suffix}`, { method: "POST" })).status).toBe(200);
}
async function goDown(m: { id: number; token: string }) {
  await ping(m);
  await ping(m, "/fail");
  expect(await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${m.id}`)).json.data.attributes.last_status === "down")).toBe(true);
  return Number((await s.api("GET", `/api/v1/incidents?monitor_id=${m.id}&resolved=false`)).json.data[0].id);
}
/** [event, incident id] of what a receiver heard about one monitor. */
const heard = (r: Receiver, id: number) =>
  r.requests.map((q) => JSON.parse(q.body)).filter((b) => b.monitor.id === String(id)).map((b) => [b.event, Number(b.incident?.id)]);
async function hear(r: Receiver, id: number, n: number) {
  expect(await waitFor(() => heard(r, id).length >= n)).toBe(true);
  return heard(r, id);
}
const events = async (id: number, kind: string) => (await s.api("GET", `/api/v1/monitors/${id}/events?kind=${kind}`)).json.data.map((e: { attributes: Record<string, unknown> }) => e.attributes);

test("reminders every alert_repeat_minutes while the incident is open, in the timeline too; none once it is resolved", async () => {
  const m = await heartbeat("payments worker", { alert_repeat_minutes: 5 });
  const incident = await goDown(m);
  expect(await hear(team, m.id, 1)).toEqual([["monitor.down", incident]]);

  offset += 5 * MINUTE;
  expect(await hear(team, m.id, 2)).toEqual([["monitor.down", incident], ["monitor.still_down", incident]]);
  offset += 5 * MINUTE;
  expect(await hear(team, m.id, 3)).toEqual([["monitor.down", incident], ["monitor.still_down", incident], ["monitor.still_down", incident]]);

  const reminder = JSON.parse(team.requests.filter((q) => JSON.parse(q.body).monitor.id === String(m.id))[2]!.body);
  expect(reminder).toMatchObject({ event: "monitor.still_down", state: "down", previous_state: "up", error_code: "heartbeat_failed", incident: { id: String(incident), resolved_at: null } });
  const deliveries = team.requests.filter((q) => JSON.parse(q.body).monitor.id === String(m.id)).map((q) => q.headers.get("x-vigil-delivery"));
  expect(new Set(deliveries).size).toBe(3);
  const timeline = await events(m.id, "still_down");
  expect(timeline.length).toBe(2);
  expect(timeline[0].reason).toBe("down for 10 min; reminder sent to 1 channel");

  // resolved: the recovery, then silence, though the next reminder would be due
  await ping(m);
  expect(await hear(team, m.id, 4)).toEqual([["monitor.down", incident], ["monitor.still_down", incident], ["monitor.still_down", incident], ["monitor.up", incident]]);
  const sentinel = await heartbeat("sentinel", { alert_repeat_minutes: 5 });
  const sentinelIncident = await goDown(sentinel);
  offset += 5 * MINUTE;
  expect(await hear(team, sentinel.id, 2)).toEqual([["monitor.down", sentinelIncident], ["monitor.still_down", sentinelIncident]]);
  expect(heard(team, m.id).length).toBe(4);
  await ping(sentinel);
});

test("escalation after escalate_after_minutes goes to the escalation channels only, and they hear the recovery", async () => {
  const m = await heartbeat("checkout", { escalation_channel_ids: [pagerChannel], escalate_after_minutes: 10 });
  const incident = await goDown(m);
  expect(await hear(team, m.id, 1)).toEqual([["monitor.down", incident]]);
  expect(heard(pager, m.id)).toEqual([]);

  offset += 10 * MINUTE;
  expect(await hear(pager, m.id, 1)).toEqual([["monitor.escalated", incident]]);
  const escalated = JSON.parse(pager.requests.find((q) => JSON.parse(q.body).monitor.id === String(m.id))!.body);
  expect(escalated).toMatchObject({ state: "down", previous_state: "up", incident: { id: String(incident), resolved_at: null } });
  expect((await events(m.id, "escalated")).map((e: { reason: string }) => e.reason)).toEqual(["down for 10 min; escalated to 1 channel"]);

  await ping(m);
  expect(await hear(pager, m.id, 2)).toEqual([["monitor.escalated", incident], ["monitor.up", incident]]);
  expect(await hear(team, m.id, 2)).toEqual([["monitor.down", incident], ["monitor.up", incident]]);
});

test("an incident resolved before its escalation delay never escalates, and its recovery stays with the team", async () => {
  const m = await heartbeat("search", { escalation_channel_ids: [pagerChannel], escalate_after_minutes: 30 });
  const incident = await goDown(m);
  offset += 29 * MINUTE;
  await ping(m);
  expect(await hear(team, m.id, 2)).toEqual([["monitor.down", incident], ["monitor.up", incident]]);
  const sentinel = await heartbeat("sentinel 2", { alert_repeat_minutes: 5 });
  await goDown(sentinel);
  offset += 5 * MINUTE; // past the 30 minutes the escalation would have waited
  await hear(team, sentinel.id, 2);
  expect(heard(pager, m.id)).toEqual([]);
  await ping(sentinel);
});

test("once escalated, reminders go to the escalation channels too", async () => {
  const m = await heartbeat("ledger", { alert_repeat_minutes: 5, escalation_channel_ids: [pagerChannel], escalate_after_minutes: 1 });
  const incident = await goDown(m);
  offset += 1 * MINUTE;
  expect(await hear(pager, m.id, 1)).toEqual([["monitor.escalated", incident]]);
  offset += 4 * MINUTE;
  expect(await hear(team, m.id, 2)).toEqual([["monitor.down", incident], ["monitor.still_down", incident]]);
  expect(await hear(pager, m.id, 2)).toEqual([["monitor.escalated", incident], ["monitor.still_down", incident]]);
  await ping(m);
  await hear(pager, m.id, 3);
});

test("reminders set while an incident is open start from then; removed, they stop", async () => {
  const m = await heartbeat("mailer", {});
  const incident = await goDown(m);
  expect((await s.api("PATCH", `/api/v1/monitors/${m.id}`, { alert_repeat_minutes: 5 })).status).toBe(200);
  // the leader's sweep plans the first reminder from the change on: wait until it did
  expect(await waitFor(async () => (await s.ctx.db.selectFrom("incident_followups").select("due_at").where("incident_id", "=", incident).executeTakeFirst()) !== undefined)).toBe(true);
  offset += 5 * MINUTE;
  expect(await hear(team, m.id, 2)).toEqual([["monitor.down", incident], ["monitor.still_down", incident]]);
  expect((await s.api("PATCH", `/api/v1/monitors/${m.id}`, { alert_repeat_minutes: null })).status).toBe(200);
  const sentinel = await heartbeat("sentinel 3", { alert_repeat_minutes: 5 });
  await goDown(sentinel);
  offset += 5 * MINUTE;
  await hear(team, sentinel.id, 2);
  expect(heard(team, m.id).length).toBe(2);
  await ping(m);
  await ping(sentinel);
});

test("a child held for its parent gets no reminder or escalation until it alerts", async () => {
  const parent = await heartbeat("core", {});
  const child = await heartbeat("edge", { depends_on_ids: [parent.id], alert_repeat_minutes: 5, escalation_channel_ids: [pagerChannel], escalate_after_minutes: 5 });
  await goDown(parent);
  const incident = await goDown(child);
  const sentinel = await heartbeat("sentinel 4", { alert_repeat_minutes: 5 });
  await goDown(sentinel);
  offset += 5 * MINUTE;
  await hear(team, sentinel.id, 2);
  expect(heard(team, child.id)).toEqual([]);
  expect(heard(pager, child.id)).toEqual([]);
  // the parent recovers: the child alerts, and its escalation, overdue, follows at once
  await ping(parent);
  expect(await hear(team, child.id, 1)).toEqual([["monitor.down", incident]]);
  expect(await hear(pager, child.id, 1)).toEqual([["monitor.escalated", incident]]);
  await ping(child);
  await ping(sentinel);
});
