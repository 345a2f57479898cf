/**
 * PagerDuty and Opsgenie through the real alert pipeline: an http monitor checks a target on
 * loopback that turns from 200 to 500 and back; the scheduler, the engine, the outbox and the
 * dispatcher do the rest. Each pager receiver hears one open and one close under the same key, the
 * incident's id. Real time: the monitor runs every 10 s, one failed check is enough (--confirmations 1).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { startReceiver, type Receiver } from "./helpers.ts";

const ROUTING_KEY = "R0UT1NGK3Yabcdef0123456789ABCDEF";
const GENIE_KEY = "eb243592-faa2-4ba2-a551-1afdf565c889";

let s: TestServer;
let target: HttpTarget;
let healthy = true;
let pagerduty: Receiver;
let opsgenie: Receiver;

beforeAll(async () => {
  target = await startHttpTarget({ "/health": () => new Response(healthy ? "fine" : "broken", { status: healthy ? 200 : 500 }) });
  pagerduty = startReceiver((req) => Response.json({ status: "success", message: "Event processed", dedup_key: JSON.parse(req.body).dedup_key }, { status: 202 }));
  opsgenie = startReceiver(() => Response.json({ result: "Request will be processed", took: 0.01, requestId: "r" }, { status: 202 }));
  s = await startTestServer(["--confirmations", "1"]);
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([target?.close(), pagerduty?.stop(), opsgenie?.stop()]);
});

const status = async (id: string) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status as string;

test("down then up: PagerDuty trigger then resolve, Opsgenie create then close, under the incident's id", async () => {
  const channel = async (body: Record<string, unknown>) => {
    const res = await s.api("POST", "/api/v1/notification-channels", body);
    expect(res.status).toBe(201);
    // write-only keys never come back
    expect(res.text).not.toContain(ROUTING_KEY);
    expect(res.text).not.toContain(GENIE_KEY);
    return Number(res.json.data.id);
  };
  const pd = await channel({ name: "pager", channel_type: "pagerduty", url: `${pagerduty.url}/v2/enqueue`, pagerduty_routing_key: ROUTING_KEY });
  const og = await channel({ name: "genie", channel_type: "opsgenie", url: opsgenie.url, opsgenie_api_key: GENIE_KEY });
  const m = await s.api("POST", "/api/v1/monitors", { name: "Checkout API", monitor_type: "http", target: `${target.url}/health`, interval_sec: 10, timeout_ms: 2000, notification_channel_ids: [pd, og] });
  expect(m.status).toBe(201);
  const id = m.json.data.id as string;
  expect(await waitFor(async () => (await status(id)) === "up", { timeoutMs: 30_000 })).toBe(true);

  healthy = false;
  expect(await waitFor(() => pagerduty.requests.length >= 1 && opsgenie.requests.length >= 1, { timeoutMs: 40_000 })).toBe(true);
  expect(await status(id)).toBe("down");
  healthy = true;
  expect(await waitFor(() => pagerduty.requests.length >= 2 && opsgenie.requests.length >= 2, { timeoutMs: 40_000 })).toBe(true);

  const incidents = (await s.api("GET", `/api/v1/incidents?monitor_id=${id}`)).json.data;
  expect(incidents.length).toBe(1);
  const incidentId = incidents[0].id as string;
  expect(incidents[0].attributes.resolved_at).not.toBeNull();

  const events = pagerduty.requests.map((q) => ({ method: q.method, path: q.path, body: JSON.parse(q.body) }));
  expect(events.map((e) => [e.method, e.path, e.body.routing_key, e.body.event_action, e.body.dedup_key])).toEqual([
    ["POST", "/v2/enqueue", ROUTING_KEY, "trigger", incidentId],
    ["POST", "/v2/enqueue", ROUTING_KEY, "resolve", incidentId],
  ]);
  expect(events[0]!.body.payload).toMatchObject({ summary: expect.stringContaining("Checkout API is down"), source: `${target.url}/health`, severity: "critical", component: "Checkout API" });
  expect(events[1]!.body.payload.summary).toStartWith("Checkout API is up again");

  const [create, close] = opsgenie.requests;
  expect([create!.method, create!.path, create!.headers.get("authorization")]).toEqual(["POST", "/v2/alerts", `GenieKey ${GENIE_KEY}`]);
  expect(JSON.parse(create!.body)).toMatchObject({ alias: incidentId, message: "DOWN: Checkout API", priority: "P1" });
  expect([close!.method, close!.path, close!.search.get("identifierType"), close!.headers.get("authorization")]).toEqual(["POST", `/v2/alerts/${incidentId}/close`, "alias", `GenieKey ${GENIE_KEY}`]);

  // both deliveries are recorded as delivered, and nothing queued leaks a key
  const rows = await s.ctx.db.selectFrom("alerts").select(["event", "status", "payload_json", "last_error"]).where("monitor_id", "=", Number(id)).orderBy("id").execute();
  expect(rows.map((r) => [r.event, r.status])).toEqual([
    ["monitor.down", "delivered"],
    ["monitor.down", "delivered"],
    ["monitor.up", "delivered"],
    ["monitor.up", "delivered"],
  ]);
  expect(JSON.stringify(rows)).not.toContain(ROUTING_KEY);
  expect(s.logText()).not.toContain(GENIE_KEY);
}, 120_000);
