/**
 * Each channel's sender against a real receiver on loopback, asserting the exact request: path,
 * headers and body as the channel's own API expects them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import type { AlertPayload } from "../../src/engine/alerts.ts";
import { deliverOnce } from "../../src/notify/deliver.ts";
import { humanDuration } from "../../src/notify/format.ts";
import type { ChannelConfig } from "../../src/store/notification-channels.ts";
import { startReceiver, type Receiver } from "./helpers.ts";
import { PRIVATE_REPLY } from "../../src/notify/http-post.ts";

const DOWN: AlertPayload = {
  event: "monitor.down",
  occurred_at: "2026-11-21T10:00:00.000Z",
  monitor: { id: "7", name: "Checkout API", monitor_type: "http", target: "https://shop.example.com/health" },
  state: "down",
  previous_state: "up",
  incident: { id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: null, duration_ms: null },
  error_code: "http_error",
  error_message: "expected 200-299, got 503",
  regions: [
    { region: "eu", status: "down", last_checked_at: "2026-11-21T09:59:58.000Z" },
    { region: "us", status: "up", last_checked_at: "2026-11-21T09:59:59.000Z" },
  ],
  dashboard_url: "https://vigil.example.com/monitors/7",
};

const UP: AlertPayload = {
  ...DOWN,
  event: "monitor.up",
  occurred_at: "2026-11-21T10:02:05.000Z",
  state: "up",
  previous_state: "down",
  incident: { id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: "2026-11-21T10:02:05.000Z", duration_ms: 125000 },
  error_code: null,
  error_message: null,
  regions: [{ region: "eu", status: "up", last_checked_at: "2026-11-21T10:02:05.000Z" }],
};

const DOWN_LINES = [
  "Monitor: Checkout API",
  "Type: http",
  "Target: https://shop.example.com/health",
  "State: down (was up)",
  "Regions: 1/2 down — eu: down, us: up",
  "Error: http_error: expected 200-299, got 503",
  "Incident: #3 opened 2026-11-21T10:00:00.000Z",
  "Time: 2026-11-21T10:00:00.000Z",
];

const receivers: Receiver[] = [];
afterAll(async () => Promise.all(receivers.map((r) => r.stop())));

function receiver(respond?: Receiver["respond"]): Receiver {
  const r = startReceiver(respond);
  receivers.push(r);
  return r;
}

function channel(type: ChannelConfig["type"], settings: Record<string, unknown>, secretValues: string[] = []): ChannelConfig {
  return { id: 1, accountId: 1, name: "c", type, isEnabled: true, settings, secretValues };
}

const send = (p: AlertPayload, c: ChannelConfig) => deliverOnce(p, c, new AbortController().signal, { deliveryId: "d-1", timeoutMs: 5000 });

describe("webhook", () => {
  test("posts decisions.md's exact JSON with event, delivery and HMAC signature headers", async () => {
    const r = receiver();
    const out = await send(DOWN, channel("webhook", { url: `${r.url}/hooks/vigil`, secret: "s3cret-key" }, ["s3cret-key"]));
    expect(out).toEqual({ ok: true, statusCode: 200, error: null, permanent: false });
    const req = r.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/hooks/vigil");
    expect(req.headers.get("content-type")).toBe("application/json");
    expect(req.headers.get("x-vigil-event")).toBe("monitor.down");
    expect(req.headers.get("x-vigil-delivery")).toBe("d-1");
    expect(req.headers.get("x-vigil-signature")).toBe("sha256=" + createHmac("sha256", "s3cret-key").update(req.body).digest("hex"));
    expect(JSON.parse(req.body)).toEqual({
      event: "monitor.down",
      occurred_at: "2026-11-21T10:00:00.000Z",
      monitor: { id: "7", name: "Checkout API", monitor_type: "http", target: "https://shop.example.com/health" },
      state: "down",
      previous_state: "up",
      incident: { id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: null, duration_ms: null },
      error_code: "http_error",
      error_message: "expected 200-299, got 503",
      regions: [
        { region: "eu", status: "down", last_checked_at: "2026-11-21T09:59:58.000Z" },
        { region: "us", status: "up", last_checked_at: "2026-11-21T09:59:59.000Z" },
      ],
    });
  });

  test("without a secret there is no signature header", async () => {
    const r = receiver(() => new Response(null, { status: 204 }));
    const out = await send(UP, channel("webhook", { url: r.url }));
    expect(out.ok).toBe(true);
    expect(out.statusCode).toBe(204);
    expect(r.requests[0]!.headers.has("x-vigil-signature")).toBe(false);
    expect(JSON.parse(r.requests[0]!.body).incident).toEqual({ id: "3", started_at: "2026-11-21T10:00:00.000Z", resolved_at: "2026-11-21T10:02:05.000Z", duration_ms: 125000 });
  });

  test("4xx is permanent, 5xx/408/429 temporary with Retry-After, 3xx not followed, refused connection temporary", async () => {
    const codes: [number, Record<string, string>, boolean, number | undefined][] = [
      [400, {}, true, undefined],
      [410, {}, true, undefined],
      [404, {}, true, undefined],
      [408, {}, false, undefined],
      [429, { "retry-after": "7" }, false, 7000],
      [503, { "retry-after": "2" }, false, 2000],
      [500, {}, false, undefined],
      [302, { location: "http://127.0.0.1:1/" }, true, undefined],
    ];
    for (const [status, headers, permanent, retryAfter] of codes) {
      const r = receiver(() => new Response("nope", { status, headers }));
      const out = await send(DOWN, channel("webhook", { url: r.url }));
      expect({ status, ok: out.ok, code: out.statusCode, permanent: out.permanent, retryAfter: out.retryAfterMs }).toEqual({ status, ok: false, code: status, permanent, retryAfter });
      expect(out.error).toStartWith(`HTTP ${status} ${PRIVATE_REPLY}`);
    }
    const closed = receiver();
    const url = closed.url;
    await closed.stop();
    const out = await send(DOWN, channel("webhook", { url }));
    expect(out.ok).toBe(false);
    expect(out.permanent).toBe(false);
    expect(out.error).toStartWith("could not connect");
  });
});

describe("chat channels", () => {
  test("slack: {text, blocks} with header, summary, fields and a link button", async () => {
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

  test("discord: {content, embeds:[{title, description, color, fields, url}]}", async () => {
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

  test("teams: an Adaptive Card in a message attachment", async () => {
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

  test("telegram: sendMessage on the overridden API base, HTML text; the token never appears in an error", async () => {
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
});

describe("push channels", () => {
  const body = (p: AlertPayload, lines: string[]) => [p === DOWN ? "Checkout API is down (was up)." : "", "", ...lines, "", "Dashboard: https://vigil.example.com/monitors/7"].join("\n");

  test("ntfy: text body with Title, Priority, Tags and Click headers", async () => {
    const r = receiver();
    expect((await send(DOWN, channel("ntfy", { url: `${r.url}/vigil-alerts` }))).ok).toBe(true);
    const req = r.requests[0]!;
    expect(req.path).toBe("/vigil-alerts");
    expect(req.headers.get("title")).toBe("DOWN: Checkout API");
    expect(req.headers.get("priority")).toBe("5");
    expect(req.headers.get("tags")).toBe("rotating_light");
    expect(req.headers.get("click")).toBe("https://vigil.example.com/monitors/7");
    expect(req.body).toBe(body(DOWN, DOWN_LINES));
  });

  test("ntfy: a non-ASCII title is sent RFC 2047 encoded", async () => {
    const r = receiver();
    await send({ ...DOWN, monitor: { ...DOWN.monitor, name: "Kassé" } }, channel("ntfy", { url: r.url }));
    expect(r.requests[0]!.headers.get("title")).toBe("=?UTF-8?B?" + Buffer.from("DOWN: Kassé").toString("base64") + "?=");
  });

  test("gotify: POST {url}/message?token=… with {title, message, priority}", async () => {
    const r = receiver();
    expect((await send(DOWN, channel("gotify", { url: `${r.url}/gotify/`, gotify_token: "AppTok.1" }, ["AppTok.1"]))).ok).toBe(true);
    const req = r.requests[0]!;
    expect(req.path).toBe("/gotify/message");
    expect(req.search.get("token")).toBe("AppTok.1");
    expect(JSON.parse(req.body)).toEqual({ title: "🔴 DOWN: Checkout API", message: body(DOWN, DOWN_LINES), priority: 8 });
  });

  test("pushover: form fields token, user, title, message, url, priority on the overridden API base", async () => {
    const r = receiver(() => Response.json({ status: 1 }));
    expect((await send(DOWN, channel("pushover", { url: r.url, pushover_token: "aToken", pushover_user: "uKey" }, ["aToken", "uKey"]))).ok).toBe(true);
    const req = r.requests[0]!;
    expect(req.path).toBe("/1/messages.json");
    expect(req.headers.get("content-type")).toStartWith("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
      token: "aToken",
      user: "uKey",
      title: "🔴 DOWN: Checkout API",
      message: body(DOWN, DOWN_LINES),
      url: "https://vigil.example.com/monitors/7",
      url_title: "Open in Vigil",
      priority: "1",
    });
  });
});

test("humanDuration keeps the two largest units", () => {
  const cases: [number, string][] = [[0, "0 s"], [45_000, "45 s"], [125_000, "2 min 5 s"], [3_600_000, "1 h"], [3_725_000, "1 h 2 min"], [90_061_000, "1 d 1 h"]];
  for (const [ms, text] of cases) expect(humanDuration(ms)).toBe(text);
});
