import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_LINES, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("an Adaptive Card in a message attachment", async () => {
  const r = receiver(() => new Response(null, { status: 202 }));
  const out = await send(DOWN, channel("teams", { url: `${r.url}/workflows/xyz` }));
  expect(out).toEqual({ ok: true, statusCode: 202, error: null, permanent: false });
  expect(JSON.parse(r.requests[0]!.body)).toEqual({
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body: [
            { type: "TextBlock", text: "🔴 DOWN: Checkout API", weight: "Bolder", size: "Medium", color: "Attention", wrap: true },
            { type: "TextBlock", text: "Checkout API is down (was up).", wrap: true },
            {
              type: "FactSet",
              facts: DOWN_LINES.map((l) => {
                const [title, ...rest] = l.split(": ");
                return { title, value: rest.join(": ") };
              }),
            },
          ],
          actions: [{ type: "Action.OpenUrl", title: "Open in Vigil", url: "https://vigil.example.com/monitors/7" }],
        },
      },
    ],
  });
});
