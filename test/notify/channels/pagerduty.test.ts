import { expect, test } from "bun:test";
import { sampleAlert } from "../../../src/notify/sample-alert.ts";
import { channel, DOWN, DOWN_LINES, receivers, send, UP } from "./fixtures.ts";

const receiver = receivers();
const KEY = "R0UT1NGK3Y0123456789abcdefABCDEF";

/** The Events API v2 as PagerDuty answers it: 202 with the dedup key, 400 for a bad routing key. */
const eventsApi = () =>
  receiver((req) => {
    const e = JSON.parse(req.body);
    if (e.routing_key !== KEY) return Response.json({ status: "invalid event", message: "Event object is invalid", errors: ["Invalid routing key"] }, { status: 400 });
    return Response.json({ status: "success", message: "Event processed", dedup_key: e.dedup_key }, { status: 202 });
  });

test("trigger on down, resolve on up, the incident id as dedup_key, on the channel's url", async () => {
  const r = eventsApi();
  const c = channel("pagerduty", { url: `${r.url}/v2/enqueue`, pagerduty_routing_key: KEY }, [KEY]);
  expect(await send(DOWN, c)).toMatchObject({ ok: true, statusCode: 202 });
  expect(await send(UP, c)).toMatchObject({ ok: true, statusCode: 202 });
  const [trigger, resolve] = r.requests.map((q) => ({ method: q.method, path: q.path, type: q.headers.get("content-type"), event: JSON.parse(q.body) }));
  expect(trigger).toEqual({
    method: "POST",
    path: "/v2/enqueue",
    type: "application/json",
    event: {
      routing_key: KEY,
      event_action: "trigger",
      dedup_key: "3",
      payload: {
        summary: "Checkout API is down (was up). http_error: expected 200-299, got 503",
        source: "https://shop.example.com/health",
        severity: "critical",
        timestamp: "2026-11-21T10:00:00.000Z",
        component: "Checkout API",
        group: "http",
        class: "http_error",
        custom_details: Object.fromEntries(DOWN_LINES.map((l) => [l.slice(0, l.indexOf(": ")), l.slice(l.indexOf(": ") + 2)])),
      },
      client: "Vigil",
      client_url: "https://vigil.example.com/monitors/7",
      links: [{ href: "https://vigil.example.com/monitors/7", text: "Open in Vigil" }],
    },
  });
  expect(resolve!.event).toMatchObject({ routing_key: KEY, event_action: "resolve", dedup_key: "3", payload: { summary: "Checkout API is up again (was down) after 2 min 5 s of downtime.", severity: "info", source: "https://shop.example.com/health" } });
});

test("a degraded alert without an incident and its recovery share a key per monitor", async () => {
  const r = eventsApi();
  const c = channel("pagerduty", { url: r.url, pagerduty_routing_key: KEY }, [KEY]);
  const degraded = { ...DOWN, event: "monitor.degraded" as const, state: "degraded", incident: null, error_code: null, error_message: null };
  const recovered = { ...UP, previous_state: "degraded", incident: null };
  await send(degraded, c);
  await send(recovered, c);
  expect(r.requests.map((q) => JSON.parse(q.body)).map((e) => [e.event_action, e.dedup_key, e.payload.severity])).toEqual([
    ["trigger", "monitor-7-degraded", "warning"],
    ["resolve", "monitor-7-degraded", "info"],
  ]);
});

test("a test send triggers and resolves one event of its own; a bad routing key is a permanent failure", async () => {
  const r = eventsApi();
  const test = sampleAlert("https://vigil.example.com", Date.parse("2026-11-21T10:00:00Z"));
  const ok = await send(test, channel("pagerduty", { url: r.url, pagerduty_routing_key: KEY }, [KEY]));
  expect(ok).toMatchObject({ ok: true, statusCode: 202 });
  const events = r.requests.map((q) => JSON.parse(q.body));
  expect(events.map((e) => [e.event_action, e.dedup_key, e.payload.severity, e.payload.summary])).toEqual([
    ["trigger", "vigil-test-d-1", "info", "This is a test notification from Vigil: this channel works."],
    ["resolve", "vigil-test-d-1", "info", "This is a test notification from Vigil: this channel works."],
  ]);
  const bad = await send(test, channel("pagerduty", { url: r.url, pagerduty_routing_key: "not-the-key-000" }, ["not-the-key-000"]));
  expect(bad).toMatchObject({ ok: false, statusCode: 400, permanent: true });
  expect(r.requests.length).toBe(3); // no resolve after a refused trigger
});
