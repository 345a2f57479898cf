import { expect, test } from "bun:test";
import { sampleAlert } from "../../../src/notify/sample-alert.ts";
import type { ReceivedRequest } from "../helpers.ts";
import { channel, DOWN, DOWN_TEXT, receivers, send, UP } from "./fixtures.ts";

const receiver = receivers();
const KEY = "eb243592-faa2-4ba2-a551-1afdf565c889";

/**
 * The Alert API as Opsgenie answers it: 202 {result, took, requestId} for a create or a close, 401 for
 * an unknown key, and 403 when the key may create but not update (close) alerts.
 */
function alertApi(canClose = true) {
  return receiver((req: ReceivedRequest) => {
    const auth = req.headers.get("authorization");
    if (auth !== `GenieKey ${KEY}`) return Response.json({ message: "Could not authenticate", took: 0, requestId: "r0" }, { status: 401 });
    if (req.path.endsWith("/close") && !canClose) return Response.json({ message: "You are not authorized to take this action", took: 0, requestId: "r1" }, { status: 403 });
    return Response.json({ result: "Request will be processed", took: 0.01, requestId: "r2" }, { status: 202 });
  });
}

test("create on down with the incident id as alias; close by alias on up; GenieKey authorisation", async () => {
  const r = alertApi();
  const c = channel("opsgenie", { url: `${r.url}/`, opsgenie_api_key: KEY }, [KEY]);
  expect(await send(DOWN, c)).toMatchObject({ ok: true, statusCode: 202 });
  expect(await send(UP, c)).toMatchObject({ ok: true, statusCode: 202 });
  const [create, close] = r.requests as [ReceivedRequest, ReceivedRequest];
  expect([create.method, create.path, create.headers.get("authorization"), create.headers.get("content-type")]).toEqual(["POST", "/v2/alerts", `GenieKey ${KEY}`, "application/json"]);
  expect(JSON.parse(create.body)).toEqual({
    message: "DOWN: Checkout API",
    alias: "3",
    description: DOWN_TEXT,
    priority: "P1",
    source: "Vigil",
    entity: "Checkout API",
    tags: ["vigil", "http"],
    details: { monitor_id: "7", monitor_type: "http", state: "down", previous_state: "up", dashboard_url: "https://vigil.example.com/monitors/7", target: "https://shop.example.com/health", incident_id: "3", error_code: "http_error" },
  });
  expect([close.method, close.path, close.search.get("identifierType"), close.headers.get("authorization")]).toEqual(["POST", "/v2/alerts/3/close", "alias", `GenieKey ${KEY}`]);
  expect(JSON.parse(close.body)).toEqual({ source: "Vigil", note: "Checkout API is up again (was down) after 2 min 5 s of downtime." });
});

test("a test send creates and closes one alert of its own; a key that cannot close says so", async () => {
  const test = sampleAlert("https://vigil.example.com", Date.parse("2026-11-21T10:00:00Z"));
  const r = alertApi();
  expect(await send(test, channel("opsgenie", { url: r.url, opsgenie_api_key: KEY }, [KEY]))).toMatchObject({ ok: true, statusCode: 202 });
  expect(r.requests.map((q) => q.path)).toEqual(["/v2/alerts", "/v2/alerts/vigil-test-d-1/close"]);
  expect(JSON.parse(r.requests[0]!.body)).toMatchObject({ alias: "vigil-test-d-1", priority: "P5", message: "TEST: Vigil test notification" });

  const createOnly = alertApi(false);
  const half = await send(test, channel("opsgenie", { url: createOnly.url, opsgenie_api_key: KEY }, [KEY]));
  expect(half).toMatchObject({ ok: false, statusCode: 403, permanent: true });
  expect(half.error).toStartWith("the test alert was opened, but closing it failed: HTTP 403");

  const unknown = await send(test, channel("opsgenie", { url: r.url, opsgenie_api_key: "00000000-0000-0000-0000-000000000000" }, ["00000000-0000-0000-0000-000000000000"]));
  expect(unknown).toMatchObject({ ok: false, statusCode: 401, permanent: true });
  expect(unknown.error).not.toContain("00000000-0000");
});
