/**
 * Alerts end to end on a real server: heartbeat pings drive the state changes, the outbox row is
 * written with them, the registered dispatcher delivers to a webhook receiver; and a restart with
 * undelivered alerts in the outbox delivers each exactly once.
 */
import { afterAll, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { rmSync } from "node:fs";
import { alertsForMonitor, listAttempts } from "../../src/store/alerts.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startReceiver, type ReceivedRequest } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function heartbeatMonitor(s: TestServer, channelId: string) {
  const m = await s.api("POST", "/api/v1/monitors", { name: "Nightly backup", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, notification_channel_ids: [Number(channelId)] });
  expect(m.status).toBe(201);
  return { id: m.json.data.id as string, token: m.json.data.attributes.heartbeat_token as string };
}

const ping = async (s: TestServer, token: string, suffix = "") => {
  const res = await fetch(`${s.url}/h/${token}${suffix}`, { method: "POST", body: suffix === "/fail" ? "disk full" : "" });
  expect(res.status).toBe(200);
};

test("a heartbeat going down and up reaches the webhook as monitor.down then monitor.up, signed", async () => {
  const r = startReceiver();
  const s = await startTestServer();
  try {
    const ch = (await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${r.url}/vigil`, secret: "e2e-secret" })).json.data.id;
    const m = await heartbeatMonitor(s, ch);
    await ping(s, m.token); // unknown → up: no alert
    await ping(s, m.token, "/fail");
    await waitFor(() => r.requests.length >= 1);
    await ping(s, m.token);
    await waitFor(() => r.requests.length >= 2);

    const [down, up] = r.requests as [ReceivedRequest, ReceivedRequest];
    expect(r.requests.map((q) => q.headers.get("x-vigil-event"))).toEqual(["monitor.down", "monitor.up"]);
    for (const q of [down, up]) expect(q.headers.get("x-vigil-signature")).toBe("sha256=" + createHmac("sha256", "e2e-secret").update(q.body).digest("hex"));
    expect(down.headers.get("x-vigil-delivery")).not.toBe(up.headers.get("x-vigil-delivery"));

    const incidents = (await s.api("GET", `/api/v1/incidents?monitor_id=${m.id}`, undefined)).json.data;
    expect(incidents.length).toBe(1);
    const inc = incidents[0];
    const d = JSON.parse(down.body);
    const monitor = { id: m.id, name: "Nightly backup", monitor_type: "heartbeat", target: null };
    expect(d).toEqual({
      event: "monitor.down",
      occurred_at: inc.attributes.started_at,
      monitor,
      state: "down",
      previous_state: "up",
      incident: { id: inc.id, started_at: inc.attributes.started_at, resolved_at: null, duration_ms: null },
      error_code: "heartbeat_failed",
      error_message: "disk full",
      regions: d.regions,
    });
    expect(Array.isArray(d.regions)).toBe(true);
    const u = JSON.parse(up.body);
    expect(u).toEqual({
      event: "monitor.up",
      occurred_at: inc.attributes.resolved_at,
      monitor,
      state: "up",
      previous_state: "down",
      incident: { id: inc.id, started_at: inc.attributes.started_at, resolved_at: inc.attributes.resolved_at, duration_ms: inc.attributes.duration_ms },
      error_code: null,
      error_message: null,
      regions: u.regions,
    });
    const rows = await alertsForMonitor(s.ctx.db, Number(m.id));
    expect(rows.map((a) => [a.event, a.status, a.attempts])).toEqual([
      ["monitor.down", "delivered", 1],
      ["monitor.up", "delivered", 1],
    ]);
    // the link to the dashboard travels in the stored payload for the human-readable channels
    expect(JSON.parse(rows[0]!.payload_json).dashboard_url).toBe(`${s.ctx.config.baseUrl}/monitors/${m.id}`);
  } finally {
    await s.stop();
    await r.stop();
  }
});

test("restart with an undelivered alert in the outbox: delivered exactly once after the restart", async () => {
  const dataDir = tempDir("vigil-notify-restart-");
  dirs.push(dataDir);
  // First life: the receiver holds the request open, so the alert is still in flight at shutdown.
  let release: () => void = () => {};
  const hung = new Promise<void>((res) => (release = res));
  const r = startReceiver(async (_q, n) => {
    if (n === 1) await hung;
    return new Response("ok");
  });
  let s = await startTestServer([], { dataDir, keepData: true });
  const ch = (await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: r.url })).json.data.id;
  const m = await heartbeatMonitor(s, ch);
  await ping(s, m.token);
  await ping(s, m.token, "/fail");
  await waitFor(() => r.requests.length >= 1);
  await s.stop();
  release();
  const afterStop = await startTestServer([], { dataDir, keepData: true }).then(async (next) => {
    s = next;
    return alertsForMonitor(s.ctx.db, Number(m.id));
  });
  expect(afterStop.length).toBe(1);

  try {
    // Second life: the outbox row is picked up at start and delivered with the same delivery id.
    const delivered = await waitFor(async () => (await alertsForMonitor(s.ctx.db, Number(m.id))).find((a) => a.status === "delivered"));
    expect(delivered).toBeTruthy();
    expect(r.requests.length).toBe(2);
    expect(r.requests.map((q) => q.headers.get("x-vigil-delivery"))).toEqual([delivered!.delivery_id, delivered!.delivery_id]);
    const attempts = await listAttempts(s.ctx.db, delivered!.id);
    expect(attempts.map((a) => [a.ok, a.error])).toEqual([
      [0, "interrupted by shutdown"],
      [1, null],
    ]);

    // Third life: nothing is re-sent; only the new recovery alert arrives.
    await s.stop();
    s = await startTestServer([], { dataDir, keepData: true });
    await ping(s, m.token);
    await waitFor(() => r.requests.length >= 3);
    await waitFor(async () => (await alertsForMonitor(s.ctx.db, Number(m.id))).every((a) => a.status === "delivered"));
    expect(r.requests.map((q) => q.headers.get("x-vigil-event"))).toEqual(["monitor.down", "monitor.down", "monitor.up"]);
  } finally {
    await s.stop();
    await r.stop();
  }
});
