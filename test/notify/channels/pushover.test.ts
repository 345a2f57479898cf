import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_TEXT, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("form fields token, user, title, message, url, priority on the overridden API base", async () => {
  const r = receiver(() => Response.json({ status: 1 }));
  expect((await send(DOWN, channel("pushover", { url: r.url, pushover_token: "aToken", pushover_user: "uKey" }, ["aToken", "uKey"]))).ok).toBe(true);
  const req = r.requests[0]!;
  expect(req.path).toBe("/1/messages.json");
  expect(req.headers.get("content-type")).toStartWith("application/x-www-form-urlencoded");
  expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
    token: "aToken",
    user: "uKey",
    title: "🔴 DOWN: Checkout API",
    message: DOWN_TEXT,
    url: "https://vigil.example.com/monitors/7",
    url_title: "Open in Vigil",
    priority: "1",
  });
});
