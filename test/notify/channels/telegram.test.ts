import { expect, test } from "bun:test";
import { PRIVATE_REPLY } from "../../../src/notify/http-post.ts";
import { channel, DOWN, DOWN_LINES, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("sendMessage on the overridden API base, HTML text; the token never appears in an error", async () => {
  const r = receiver((req) => (req.path.endsWith("/sendMessage") && req.path.includes("/bot123:ABCdef/") ? Response.json({ ok: true }) : new Response("bad", { status: 500 })));
  const out = await send(DOWN, channel("telegram", { url: `${r.url}/tg/`, telegram_chat_id: "-100200", telegram_bot_token: "123:ABCdef" }, ["123:ABCdef"]));
  expect(out.ok).toBe(true);
  expect(r.requests[0]!.path).toBe("/tg/bot123:ABCdef/sendMessage");
  expect(JSON.parse(r.requests[0]!.body)).toEqual({
    chat_id: "-100200",
    parse_mode: "HTML",
    disable_web_page_preview: true,
    text: [
      "<b>🔴 DOWN: Checkout API</b>",
      "Checkout API is down (was up).",
      "",
      ...DOWN_LINES.map((l) => l.replace(/^([^:]+):/, "<b>$1:</b>")),
      "",
      '<a href="https://vigil.example.com/monitors/7">Open in Vigil</a>',
    ].join("\n"),
  });
  const echo = receiver((req) => new Response(`no such bot at ${req.path}`, { status: 404 }));
  const bad = await send(DOWN, channel("telegram", { url: echo.url, telegram_chat_id: "1", telegram_bot_token: "123:ABCdef" }, ["123:ABCdef"]));
  expect(bad.permanent).toBe(true);
  expect(bad.error).toBe(`HTTP 404 ${PRIVATE_REPLY}`);
  expect(bad.error).not.toContain("ABCdef");
});
