/**
 * An escalation delay across restarts (README "Dependencies, reminders and escalation"): the
 * escalation is a due row in the database, so a Vigil stopped in the middle of the delay sends it
 * at its time once running again, once, and a later restart does not send it again.
 *
 * The incident is opened by an in-process server whose clock runs LAG_MS behind real time, so the
 * one-minute delay (the shortest there is) ends a few seconds after the real restart; the restarts
 * are real `vigil serve` processes on the same data directory, on the real clock.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { spawnServer, type ChildServer } from "../helpers/process.ts";
import { apiClient, startTestServer, tempDir, waitFor } from "../helpers/server.ts";
import { startReceiver } from "../notify/helpers.ts";

const LAG_MS = 50_000;
const dataDir = tempDir("vigil-escalation-restart-");
const team = startReceiver();
const pager = startReceiver();
const children: ChildServer[] = [];
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) await c.stop();
  await team.stop();
  await pager.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const events = (r: typeof team) => r.requests.map((q) => [q.headers.get("x-vigil-event"), q.headers.get("x-vigil-delivery")]);

test("stopped in the middle of an escalation delay: the restarted process escalates at its time, once; the next restart sends nothing again", async () => {
  // first life: the incident opens and the team hears it; the escalation is due in LAG_MS - 60 s
  const first = await startTestServer([], { dataDir, keepData: true, clock: { now: () => Date.now() - LAG_MS } });
  const token = first.token;
  const hook = async (name: string, url: string) => Number((await first.api("POST", "/api/v1/notification-channels", { name, channel_type: "webhook", url })).json.data.id);
  const teamChannel = await hook("team", team.url);
  const pagerChannel = await hook("pager", pager.url);
  const created = await first.api("POST", "/api/v1/monitors", {
    name: "billing run", monitor_type: "heartbeat", interval_sec: 86_400, timeout_ms: 1000, notification_channel_ids: [teamChannel], escalation_channel_ids: [pagerChannel], escalate_after_minutes: 1,
  });
  const m = { id: created.json.data.id as string, token: created.json.data.attributes.heartbeat_token as string };
  expect((await fetch(`${first.url}/h/${m.token}`, { method: "POST" })).status).toBe(200);
  expect((await fetch(`${first.url}/h/${m.token}/fail`, { method: "POST" })).status).toBe(200);
  expect(await waitFor(() => team.requests.length === 1)).toBe(true);
  const incident = (await first.api("GET", `/api/v1/incidents?monitor_id=${m.id}`)).json.data[0];
  const dueAt = Date.parse(incident.attributes.started_at) + 60_000;
  await first.stop();
  expect(Date.now()).toBeLessThan(dueAt); // stopped before the delay ended: the test means what it says
  expect(pager.requests).toEqual([]);

  // second life, a real process on the real clock: the escalation goes out when due, once
  const second = await spawnServer(["--data", dataDir], { name: "second life" });
  children.push(second);
  expect(await waitFor(() => pager.requests.length >= 1, { timeoutMs: 30_000 })).toBe(true);
  expect(pager.requests[0]!.at).toBeGreaterThanOrEqual(dueAt);
  const escalated = JSON.parse(pager.requests[0]!.body);
  expect(escalated).toMatchObject({ event: "monitor.escalated", incident: { id: incident.id, resolved_at: null }, monitor: { id: m.id } });
  expect(await second.stop()).toBe(0);

  // third life: its first pass over due follow-ups is done once it logs so, and finds nothing due
  const third = await spawnServer(["--data", dataDir], { name: "third life" });
  children.push(third);
  expect(await waitFor(() => third.output().includes("incident follow-ups started"), { timeoutMs: 15_000 })).toBe(true);
  const api = apiClient(third.url, token);
  const timeline = (await api("GET", `/api/v1/monitors/${m.id}/events?kind=escalated`)).json.data;
  expect(timeline.length).toBe(1);

  // the recovery reaches the pager as well, through the third process
  expect((await fetch(`${third.url}/h/${m.token}`, { method: "POST" })).status).toBe(200);
  expect(await waitFor(() => pager.requests.length >= 2)).toBe(true);
  expect(await third.stop()).toBe(0);
  expect(events(pager).map(([e]) => e)).toEqual(["monitor.escalated", "monitor.up"]);
  expect(events(team).map(([e]) => e)).toEqual(["monitor.down", "monitor.up"]);
}, 90_000);
