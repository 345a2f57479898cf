import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_TEXT, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("POST {url}/message?token=… with {title, message, priority}", async () => {
  const r = receiver();
  expect((await send(DOWN, channel("gotify", { url: `${r.url}/gotify/`, gotify_token: "AppTok.1" }, ["AppTok.1"]))).ok).toBe(true);
  const req = r.requests[0]!;
  expect(req.path).toBe("/gotify/message");
  expect(req.search.get("token")).toBe("AppTok.1");
  expect(JSON.parse(req.body)).toEqual({ title: "🔴 DOWN: Checkout API", message: DOWN_TEXT, priority: 8 });
});
