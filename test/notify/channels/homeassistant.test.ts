import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_TEXT, receivers, send } from "./fixtures.ts";

const receiver = receivers();
const TOKEN = "eyJhbGciOiJIUzI1NiJ9.long-lived-token.sig";

test("POST /api/services/{domain}/{service} with the Bearer token and {title, message}", async () => {
  // Home Assistant answers a service call with the states it changed (a JSON array), 401 without a valid token
  const r = receiver((req) => (req.headers.get("authorization") === `Bearer ${TOKEN}` ? Response.json([]) : new Response("401: Unauthorized", { status: 401 })));
  const ok = await send(DOWN, channel("homeassistant", { url: `${r.url}/`, homeassistant_token: TOKEN, homeassistant_service: "notify.mobile_app_pixel_8" }, [TOKEN]));
  expect(ok).toMatchObject({ ok: true, statusCode: 200 });
  const req = r.requests[0]!;
  expect([req.method, req.path, req.headers.get("authorization"), req.headers.get("content-type")]).toEqual(["POST", "/api/services/notify/mobile_app_pixel_8", `Bearer ${TOKEN}`, "application/json"]);
  expect(JSON.parse(req.body)).toEqual({ title: "🔴 DOWN: Checkout API", message: DOWN_TEXT });

  await send(DOWN, channel("homeassistant", { url: r.url, homeassistant_token: TOKEN, homeassistant_service: "persistent_notification.create" }, [TOKEN]));
  expect(r.requests[1]!.path).toBe("/api/services/persistent_notification/create");

  const refused = await send(DOWN, channel("homeassistant", { url: r.url, homeassistant_token: "wrong-token-123", homeassistant_service: "notify.notify" }, ["wrong-token-123"]));
  expect(refused).toMatchObject({ ok: false, statusCode: 401, permanent: true });
});
