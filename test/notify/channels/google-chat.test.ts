import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_LINES, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("space webhook: one text message in Chat markup, the key and token in the query kept as given", async () => {
  const r = receiver((req) => (req.search.get("key") && req.search.get("token") ? Response.json({ name: "spaces/AAAA/messages/1" }) : Response.json({ error: { code: 400 } }, { status: 400 })));
  const url = `${r.url}/v1/spaces/AAAAbbbb/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token=tok%3Den`;
  expect((await send(DOWN, channel("google_chat", { url }))).ok).toBe(true);
  const req = r.requests[0]!;
  expect([req.method, req.path, req.search.get("key"), req.search.get("token")]).toEqual(["POST", "/v1/spaces/AAAAbbbb/messages", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI", "tok=en"]);
  expect(req.headers.get("content-type")).toBe("application/json; charset=UTF-8");
  expect(JSON.parse(req.body)).toEqual({
    text: ["*🔴 DOWN: Checkout API*", "Checkout API is down (was up).", "", ...DOWN_LINES.map((l) => l.replace(/^([^:]+):/, "*$1:*")), "", "<https://vigil.example.com/monitors/7|Open in Vigil>"].join("\n"),
  });
});
