import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_LINES, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("{text, blocks} with header, summary, fields and a link button", async () => {
  const r = receiver();
  expect((await send(DOWN, channel("slack", { url: `${r.url}/services/T/B/X` }))).ok).toBe(true);
  expect(r.requests[0]!.path).toBe("/services/T/B/X");
  expect(r.requests[0]!.headers.get("content-type")).toBe("application/json");
  expect(JSON.parse(r.requests[0]!.body)).toEqual({
    text: "🔴 DOWN: Checkout API: Checkout API is down (was up).",
    blocks: [
      { type: "header", text: { type: "plain_text", text: "🔴 DOWN: Checkout API", emoji: true } },
      { type: "section", text: { type: "mrkdwn", text: "Checkout API is down (was up)." } },
      {
        type: "section",
        fields: DOWN_LINES.map((l) => {
          const [label, ...rest] = l.split(": ");
          return { type: "mrkdwn", text: `*${label}*\n${rest.join(": ")}` };
        }),
      },
      { type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: "Open in Vigil" }, url: "https://vigil.example.com/monitors/7" }] },
    ],
  });
});
