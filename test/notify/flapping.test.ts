/**
 * Flap protection, driven through applyStateChange with explicit times: more than 5 state changes
 * in 10 minutes are reported once as monitor.flapping, then alerts stay quiet until the monitor has
 * been stable for 10 minutes; one state change never queues two alerts for a channel.
 */
import { afterEach, expect, test } from "bun:test";
import { FLAP_MAX_CHANGES, FLAP_WINDOW_MS } from "../../src/engine/alerts.ts";
import { AlertDispatcher } from "../../src/notify/dispatcher.ts";
import { alertsForMonitor } from "../../src/store/alerts.ts";
import { insertChannel } from "../../src/store/notification-channels.ts";
import { waitFor } from "../helpers/server.ts";
import { flip, harness, insertMonitorRow, linkChannel, startReceiver } from "./helpers.ts";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

test("flapping is reported once, suppressed while it lasts, and alerts resume after a quiet window", async () => {
  expect([FLAP_MAX_CHANGES, FLAP_WINDOW_MS]).toEqual([5, 600_000]); // the documented defaults
  const h = await harness();
  const r = startReceiver();
  cleanup.push(() => h.close(), () => r.stop());
  const hook = await insertChannel(h.ctx.db, h.ctx.secrets, { accountId: h.accountId, changes: { name: "hook", channel_type: "webhook", url: r.url, is_enabled: true }, now: Date.now() });
  const second = await insertChannel(h.ctx.db, h.ctx.secrets, { accountId: h.accountId, changes: { name: "hook2", channel_type: "webhook", url: `${r.url}/two`, is_enabled: true }, now: Date.now() });
  const monitorId = await insertMonitorRow(h.ctx, h.accountId);
  await linkChannel(h.ctx, monitorId, hook.id);
  await linkChannel(h.ctx, monitorId, second.id);

  const t0 = Date.now() - 60_000;
  const states = ["down", "up", "down", "up", "down", "up", "down", "up"] as const;
  for (const [i, s] of states.entries()) expect((await flip(h.ctx, monitorId, s, { at: t0 + i * 1000 })).changed).toBe(true);
  // quiet for longer than the window, then the next change alerts normally
  expect((await flip(h.ctx, monitorId, "down", { at: t0 + 7000 + FLAP_WINDOW_MS + 1000 })).changed).toBe(true);

  const rows = await alertsForMonitor(h.ctx.db, monitorId);
  const perChannel = (id: number) => rows.filter((a) => a.channel_id === id).map((a) => a.event);
  const expected = ["monitor.down", "monitor.up", "monitor.down", "monitor.up", "monitor.down", "monitor.flapping", "monitor.down"];
  expect(perChannel(hook.id)).toEqual(expected);
  expect(perChannel(second.id)).toEqual(expected);
  expect(new Set(rows.map((a) => a.delivery_id)).size).toBe(rows.length);

  const d = new AlertDispatcher(h.ctx, { baseDelayMs: 50, pollMs: 50, stopGraceMs: 100 });
  cleanup.push(() => d.stop(1000));
  await d.start();
  await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).every((a) => a.status === "delivered"));
  const flapping = r.requests.filter((q) => q.path === "/" && q.headers.get("x-vigil-event") === "monitor.flapping");
  expect(flapping.length).toBe(1);
  const body = JSON.parse(flapping[0]!.body);
  expect([body.event, body.state, body.previous_state]).toEqual(["monitor.flapping", "up", "down"]);
  expect(h.lines.some((l) => l.includes("alert suppressed: the monitor is flapping"))).toBe(true);
});

test("a monitor changing slower than the threshold is never flapping", async () => {
  const h = await harness();
  cleanup.push(() => h.close());
  const hook = await insertChannel(h.ctx.db, h.ctx.secrets, { accountId: h.accountId, changes: { name: "hook", channel_type: "webhook", url: "http://127.0.0.1:9/", is_enabled: true }, now: Date.now() });
  const monitorId = await insertMonitorRow(h.ctx, h.accountId);
  await linkChannel(h.ctx, monitorId, hook.id);
  const t0 = Date.now() - 3_600_000;
  // 10 changes, 2.5 minutes apart: never more than 5 within any 10 minutes
  for (let i = 0; i < 10; i++) await flip(h.ctx, monitorId, i % 2 === 0 ? "down" : "up", { at: t0 + i * 150_000 });
  const events = (await alertsForMonitor(h.ctx.db, monitorId)).map((a) => a.event);
  expect(events.length).toBe(10);
  expect(events.includes("monitor.flapping")).toBe(false);
});

test("leaving down for degraded announces the recovery: the incident resolved, the state degraded", async () => {
  const h = await harness();
  cleanup.push(() => h.close());
  const hook = await insertChannel(h.ctx.db, h.ctx.secrets, { accountId: h.accountId, changes: { name: "hook", channel_type: "webhook", url: "http://127.0.0.1:9/", is_enabled: true }, now: Date.now() });
  const monitorId = await insertMonitorRow(h.ctx, h.accountId);
  await linkChannel(h.ctx, monitorId, hook.id);
  const t0 = Date.now() - 60_000;
  expect((await flip(h.ctx, monitorId, "down", { at: t0 })).changed).toBe(true);
  expect((await flip(h.ctx, monitorId, "degraded", { at: t0 + 30_000 })).changed).toBe(true);
  // a checked monitor's degraded state alone does not alert (only heartbeats' lateness may)
  expect((await flip(h.ctx, monitorId, "up", { at: t0 + 40_000 })).changed).toBe(true);
  expect((await flip(h.ctx, monitorId, "degraded", { at: t0 + 50_000 })).changed).toBe(true);
  const rows = await alertsForMonitor(h.ctx.db, monitorId);
  expect(rows.map((a) => a.event)).toEqual(["monitor.down", "monitor.degraded"]);
  const payload = JSON.parse(rows[1]!.payload_json);
  expect([payload.state, payload.previous_state]).toEqual(["degraded", "down"]);
  expect(payload.incident.resolved_at).not.toBeNull();
});
