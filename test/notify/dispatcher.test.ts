/**
 * The outbox dispatcher on a real store with short backoff: retries, permanent failures, the retry
 * window, Retry-After, ordering, two dispatchers, and rows left behind by a crash.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { AlertDispatcher, type DispatcherOptions } from "../../src/notify/dispatcher.ts";
import { alertsForMonitor, claimDueAlerts, listAttempts } from "../../src/store/alerts.ts";
import { insertChannel } from "../../src/store/notification-channels.ts";
import { waitFor } from "../helpers/server.ts";
import { flip, harness, insertMonitorRow, linkChannel, startReceiver, type Harness, type Receiver } from "./helpers.ts";
import { PRIVATE_REPLY } from "../../src/notify/http-post.ts";

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(respond?: Receiver["respond"]) {
  const h = await harness();
  const r = startReceiver(respond);
  cleanup.push(() => h.close(), () => r.stop());
  const channel = await insertChannel(h.ctx.db, h.ctx.secrets, { accountId: h.accountId, changes: { name: "hook", channel_type: "webhook", url: `${r.url}/hook`, is_enabled: true }, now: Date.now() });
  const monitorId = await insertMonitorRow(h.ctx, h.accountId);
  await linkChannel(h.ctx, monitorId, channel.id);
  return { h, r, channelId: channel.id, monitorId };
}

function dispatcher(h: Harness, opts: DispatcherOptions = {}): AlertDispatcher {
  const d = new AlertDispatcher(h.ctx, { baseDelayMs: 50, jitter: 0, pollMs: 50, stopGraceMs: 100, ...opts });
  cleanup.push(() => d.stop(1000));
  return d;
}

const retryLogs = (h: Harness) => h.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "alert delivery failed; will retry");
const events = (r: Receiver) => r.requests.map((q) => q.headers.get("x-vigil-event"));

describe("alert dispatcher", () => {
  test("a receiver that fails twice: three attempts recorded with backoff 50, 100 ms, delivered once", async () => {
    const { h, r, monitorId } = await setup((_q, n) => (n <= 2 ? new Response("busy", { status: 503 }) : new Response("ok")));
    await flip(h.ctx, monitorId, "down");
    await dispatcher(h).start();
    const delivered = await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).find((a) => a.status === "delivered"));
    expect(delivered).toBeTruthy();
    expect(delivered!.attempts).toBe(3);
    const attempts = await listAttempts(h.ctx.db, delivered!.id);
    expect(attempts.map((a) => [a.ok, a.status_code, a.error])).toEqual([
      [0, 503, `HTTP 503 ${PRIVATE_REPLY}`],
      [0, 503, `HTTP 503 ${PRIVATE_REPLY}`],
      [1, 200, null],
    ]);
    expect(retryLogs(h).map((l) => l.retry_in_ms)).toEqual([50, 100]);
    expect(new Set(r.requests.map((q) => q.headers.get("x-vigil-delivery")))).toEqual(new Set([delivered!.delivery_id]));

    // Another alert goes through afterwards; the delivered one is not sent again.
    await flip(h.ctx, monitorId, "up");
    await waitFor(() => r.requests.length >= 4);
    await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).every((a) => a.status === "delivered"));
    expect(events(r)).toEqual(["monitor.down", "monitor.down", "monitor.down", "monitor.up"]);
  });

  test("a permanent 4xx is tried once and marked failed", async () => {
    const { h, r, monitorId } = await setup(() => new Response("unknown webhook", { status: 404 }));
    await flip(h.ctx, monitorId, "down");
    await dispatcher(h).start();
    const failed = await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).find((a) => a.status === "failed"));
    expect(failed!.attempts).toBe(1);
    // the receiver is on loopback: its words are not quoted (README, Security)
    expect(failed!.last_error).toBe(`HTTP 404 ${PRIVATE_REPLY}`);
    // the next alert of the same monitor and channel is not held back by the failed one
    r.respond = () => new Response("ok");
    await flip(h.ctx, monitorId, "up");
    await waitFor(() => r.requests.length >= 2);
    await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).some((a) => a.status === "delivered"));
    expect(events(r)).toEqual(["monitor.down", "monitor.up"]);
  });

  test("temporary failures stop at the end of the retry window", async () => {
    const { h, r, monitorId } = await setup(() => new Response("down for maintenance", { status: 502 }));
    await flip(h.ctx, monitorId, "down");
    await dispatcher(h, { baseDelayMs: 40, retryWindowMs: 300 }).start();
    const failed = await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).find((a) => a.status === "failed"));
    expect(failed).toBeTruthy();
    expect(failed!.last_error).toContain("giving up");
    expect(failed!.attempts).toBeGreaterThanOrEqual(2);
    expect(r.requests.length).toBe(failed!.attempts);
  });

  test("Retry-After is honoured when it asks for longer than the backoff", async () => {
    const { h, monitorId } = await setup((_q, n) => (n === 1 ? new Response("slow down", { status: 429, headers: { "retry-after": "1" } }) : new Response("ok")));
    await flip(h.ctx, monitorId, "down");
    await dispatcher(h).start();
    await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).some((a) => a.status === "delivered"), { timeoutMs: 5000 });
    expect(retryLogs(h).map((l) => l.retry_in_ms)).toEqual([1000]);
  });

  test("down is delivered before up even when down needs a retry", async () => {
    const { h, r, monitorId } = await setup((_q, n) => (n === 1 ? new Response("no", { status: 500 }) : new Response("ok")));
    await flip(h.ctx, monitorId, "down");
    await flip(h.ctx, monitorId, "up");
    await dispatcher(h).start();
    await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).every((a) => a.status === "delivered"));
    expect(events(r)).toEqual(["monitor.down", "monitor.down", "monitor.up"]);
  });

  test("two dispatchers on one outbox never send the same alert twice", async () => {
    const { h, r, channelId } = await setup(async () => {
      await Bun.sleep(5);
      return new Response("ok");
    });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      const id = await insertMonitorRow(h.ctx, h.accountId, { name: `m${i}` });
      await linkChannel(h.ctx, id, channelId);
      await flip(h.ctx, id, "down");
      ids.push(id);
    }
    await Promise.all([dispatcher(h, { batchSize: 3 }).start(), dispatcher(h, { batchSize: 3 }).start()]);
    await waitFor(async () => {
      const rows = await h.ctx.db.selectFrom("alerts").select("status").execute();
      return rows.length === 12 && rows.every((a) => a.status === "delivered");
    });
    const deliveries = r.requests.map((q) => q.headers.get("x-vigil-delivery"));
    expect(deliveries.length).toBe(12);
    expect(new Set(deliveries).size).toBe(12);
  });

  test("rows a crashed process left in 'sending' are sent on the next start, with the same delivery id", async () => {
    const { h, r, monitorId } = await setup();
    await flip(h.ctx, monitorId, "down");
    const [claimed] = await claimDueAlerts(h.ctx.db, Date.now(), 10); // a dispatcher took it, then the process died
    expect(claimed!.status).toBe("sending");
    await dispatcher(h).start();
    await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId))[0]!.status === "delivered");
    expect(r.requests.map((q) => q.headers.get("x-vigil-delivery"))).toEqual([claimed!.delivery_id]);
  });

  test("an alert queued for a channel that is disabled before delivery is dropped, not sent", async () => {
    const { h, r, monitorId, channelId } = await setup();
    await flip(h.ctx, monitorId, "down");
    await h.ctx.db.updateTable("notification_channels").set({ is_enabled: 0 }).where("id", "=", channelId).execute();
    await dispatcher(h).start();
    const failed = await waitFor(async () => (await alertsForMonitor(h.ctx.db, monitorId)).find((a) => a.status === "failed"));
    expect(failed!.last_error).toBe("the channel was disabled");
    expect(r.requests.length).toBe(0);
    // and a disabled channel gets no new outbox rows at all
    await flip(h.ctx, monitorId, "up");
    expect((await alertsForMonitor(h.ctx.db, monitorId)).length).toBe(1);
  });
});
