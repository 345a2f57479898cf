import { expect, test } from "bun:test";
import { channel, receivers, send, UP } from "./fixtures.ts";

const receiver = receivers();

test("{content, embeds:[{title, description, color, fields, url}]}", async () => {
  const r = receiver(() => new Response(null, { status: 204 }));
  expect((await send(UP, channel("discord", { url: `${r.url}/api/webhooks/1/abc` }))).ok).toBe(true);
  expect(JSON.parse(r.requests[0]!.body)).toEqual({
    content: "🟢 UP: Checkout API",
    embeds: [
      {
        title: "🟢 UP: Checkout API",
        description: "Checkout API is up again (was down) after 2 min 5 s of downtime.",
        color: 0x1e8e3e,
        url: "https://vigil.example.com/monitors/7",
        fields: [
          { name: "Monitor", value: "Checkout API", inline: true },
          { name: "Type", value: "http", inline: true },
          { name: "Target", value: "https://shop.example.com/health", inline: true },
          { name: "State", value: "up (was down)", inline: true },
          { name: "Regions", value: "0/1 down — eu: up", inline: true },
          { name: "Incident", value: "#3 resolved after 2 min 5 s (started 2026-11-21T10:00:00.000Z)", inline: false },
          { name: "Time", value: "2026-11-21T10:02:05.000Z", inline: true },
        ],
        timestamp: "2026-11-21T10:02:05.000Z",
        footer: { text: "Vigil" },
      },
    ],
  });
});
