import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { PRIVATE_REPLY } from "../../../src/notify/http-post.ts";
import { channel, DOWN, receivers, send, UP } from "./fixtures.ts";

const receiver = receivers();

test("posts the exact JSON of docs/notifications.md with event, delivery and HMAC signature headers", async () => {
  const r = receiver();
  const out = await send(DOWN, channel("webhook", { url: `${r.url}/hooks/vigil`, secret: "s3cret-key" }, ["s3cret-key"]));
  expect(out).toEqual({ ok: true, statusCode: 200, error: null, permanent: false });
  const req = r.requests[0]!;
  expect(req.method).toBe("POST");
  expect(req.path).toBe("/hooks/vigil");
  expect(req.headers.get("content-type")).toBe("application/json");
  expect(req.headers.get("x-vigil-event")).toBe("monitor.down");
  expect(req.headers.get("x-vigil-delivery")).toBe("d-1");
  expect(req.headers.get("x-vigil-signature")).toBe("sha256=" + createHmac("sha256", "s3cret-key").update(req.body).digest("hex"));
  expect(JSON.parse(req.body)).toEqual({
    event: "monitor.down",
    occurred_at: "2026-11-21T10:00:00.000Z",
    monitor: { id: "7", name: "Checkout API", monitor_type: "http", target: "https://shop.example.com/health" },
    state: "down",
    previous_state: "up",
    incident: { id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: null, duration_ms: null },
    error_code: "http_error",
    error_message: "expected 200-299, got 503",
    regions: [
      { region: "eu", status: "down", last_checked_at: "2026-11-21T09:59:58.000Z" },
      { region: "us", status: "up", last_checked_at: "2026-11-21T09:59:59.000Z" },
    ],
  });
});

test("without a secret there is no signature header", async () => {
  const r = receiver(() => new Response(null, { status: 204 }));
  const out = await send(UP, channel("webhook", { url: r.url }));
  expect(out.ok).toBe(true);
  expect(out.statusCode).toBe(204);
  expect(r.requests[0]!.headers.has("x-vigil-signature")).toBe(false);
  expect(JSON.parse(r.requests[0]!.body).incident).toEqual({ id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: "2026-11-21T10:02:05.000Z", duration_ms: 125000 });
});

describe("4xx is permanent, 5xx/408/429 temporary with Retry-After, 3xx not followed, refused connection temporary", () => {
  // [answer status, answer headers, permanent, retryAfterMs]
  test.each([
    [400, {}, true, undefined],
    [410, {}, true, undefined],
    [404, {}, true, undefined],
    [408, {}, false, undefined],
    [429, { "retry-after": "7" }, false, 7000],
    [503, { "retry-after": "2" }, false, 2000],
    [500, {}, false, undefined],
    [302, { location: "http://127.0.0.1:1/" }, true, undefined],
  ] as [number, Record<string, string>, boolean, number | undefined][])("HTTP %i", async (status, headers, permanent, retryAfter) => {
    const r = receiver(() => new Response("nope", { status, headers }));
    const out = await send(DOWN, channel("webhook", { url: r.url }));
    expect({ status, ok: out.ok, code: out.statusCode, permanent: out.permanent, retryAfter: out.retryAfterMs }).toEqual({ status, ok: false, code: status, permanent, retryAfter });
    expect(out.error).toStartWith(`HTTP ${status} ${PRIVATE_REPLY}`);
  });

  test("refused connection", async () => {
    const closed = receiver();
    const url = closed.url;
    await closed.stop();
    const out = await send(DOWN, channel("webhook", { url }));
    expect(out.ok).toBe(false);
    expect(out.permanent).toBe(false);
    expect(out.error).toStartWith("could not connect");
  });
});
