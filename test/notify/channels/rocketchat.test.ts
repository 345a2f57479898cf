import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_LINES, receivers, send, UP } from "./fixtures.ts";

const receiver = receivers();

test("incoming webhook: bold title and summary in text, an attachment with the details and the link", async () => {
  // Rocket.Chat's integration endpoint answers {"success": true}
  const r = receiver(() => Response.json({ success: true }));
  const url = `${r.url}/hooks/6543210fedcba/AbCdEfGhIjKlMnOpQrStUvWx`;
  expect((await send(DOWN, channel("rocketchat", { url }))).ok).toBe(true);
  const req = r.requests[0]!;
  expect([req.method, req.path, req.headers.get("content-type")]).toEqual(["POST", "/hooks/6543210fedcba/AbCdEfGhIjKlMnOpQrStUvWx", "application/json"]);
  expect(JSON.parse(req.body)).toEqual({
    text: "*🔴 DOWN: Checkout API*\nCheckout API is down (was up).",
    attachments: [
      {
        title: "Open in Vigil",
        title_link: "https://vigil.example.com/monitors/7",
        color: "#d93025",
        fields: DOWN_LINES.map((l) => {
          const [title, ...rest] = l.split(": ");
          const value = rest.join(": ");
          return { short: value.length <= 40, title, value };
        }),
      },
    ],
  });
  await send(UP, channel("rocketchat", { url }));
  expect(JSON.parse(r.requests[1]!.body).attachments[0].color).toBe("#1e8e3e");
});

test("a 5xx is temporary, a 404 (a deleted integration) permanent", async () => {
  const r = receiver((_q, n) => new Response("", { status: n === 1 ? 503 : 404 }));
  expect(await send(DOWN, channel("rocketchat", { url: `${r.url}/hooks/a/b` }))).toMatchObject({ ok: false, statusCode: 503, permanent: false });
  expect(await send(DOWN, channel("rocketchat", { url: `${r.url}/hooks/a/b` }))).toMatchObject({ ok: false, statusCode: 404, permanent: true });
});
