import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_TEXT, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("text body with Title, Priority, Tags and Click headers", async () => {
  const r = receiver();
  expect((await send(DOWN, channel("ntfy", { url: `${r.url}/vigil-alerts` }))).ok).toBe(true);
  const req = r.requests[0]!;
  expect(req.path).toBe("/vigil-alerts");
  expect(req.headers.get("title")).toBe("DOWN: Checkout API");
  expect(req.headers.get("priority")).toBe("5");
  expect(req.headers.get("tags")).toBe("rotating_light");
  expect(req.headers.get("click")).toBe("https://vigil.example.com/monitors/7");
  expect(req.body).toBe(DOWN_TEXT);
});

test("a non-ASCII title is sent RFC 2047 encoded", async () => {
  const r = receiver();
  await send({ ...DOWN, monitor: { ...DOWN.monitor, name: "Kassé" } }, channel("ntfy", { url: r.url }));
  expect(r.requests[0]!.headers.get("title")).toBe("=?UTF-8?B?" + Buffer.from("DOWN: Kassé").toString("base64") + "?=");
});
