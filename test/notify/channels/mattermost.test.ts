import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_LINES, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("incoming webhook: Markdown text and an attachment coloured by state with the details", async () => {
  // Mattermost answers a good webhook post with 200 "ok", a bad hook with 400 and a JSON error
  const r = receiver((req) => (req.path === "/hooks/xyz123" ? new Response("ok") : Response.json({ id: "web.incoming_webhook.invalid.app_error" }, { status: 400 })));
  expect((await send(DOWN, channel("mattermost", { url: `${r.url}/hooks/xyz123` }))).ok).toBe(true);
  const req = r.requests[0]!;
  expect([req.method, req.path, req.headers.get("content-type")]).toEqual(["POST", "/hooks/xyz123", "application/json"]);
  expect(JSON.parse(req.body)).toEqual({
    text: "#### 🔴 DOWN: Checkout API\nCheckout API is down (was up).",
    attachments: [
      {
        fallback: "🔴 DOWN: Checkout API: Checkout API is down (was up).",
        color: "#d93025",
        fields: DOWN_LINES.map((l) => {
          const [title, ...rest] = l.split(": ");
          const value = rest.join(": ");
          return { short: value.length <= 40, title, value };
        }),
        title: "Open in Vigil",
        title_link: "https://vigil.example.com/monitors/7",
      },
    ],
  });
  const bad = await send(DOWN, channel("mattermost", { url: `${r.url}/hooks/revoked` }));
  expect(bad).toMatchObject({ ok: false, statusCode: 400, permanent: true });
});
