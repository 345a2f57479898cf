/**
 * An open incident's reminder (monitor.still_down) and escalation (monitor.escalated) through every
 * channel type, as the dispatcher sends them (deliverOnce to a real receiver on loopback, a real
 * SMTP server for email): each says STILL DOWN or ESCALATED and for how long, and the pager services
 * keep the incident's key open rather than closing or opening another.
 */
import { afterAll, expect, test } from "bun:test";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import type { AlertPayload } from "../../../src/domain/alert-payload.ts";
import { alertSummary, alertTitle } from "../../../src/notify/format.ts";
import type { ChannelConfig } from "../../../src/store/notification-channels.ts";
import { channel, DOWN, receivers, send } from "./fixtures.ts";

const receiver = receivers();

/** 25 minutes into incident #3, the down alert again as a reminder, and as an escalation. */
const LATER = "2026-11-21T10:25:00.000Z";
const STILL_DOWN: AlertPayload = { ...DOWN, event: "monitor.still_down", occurred_at: LATER };
const ESCALATED: AlertPayload = { ...DOWN, event: "monitor.escalated", occurred_at: LATER };
const STILL_SENTENCE = "Checkout API is still down, for 25 min now. This reminder repeats until it recovers.";
const ESCALATED_SENTENCE = "Checkout API has been down for 25 min and is escalated to you: you will hear when it recovers.";

test("the title and the sentence every human-readable channel shows", () => {
  expect(alertTitle(STILL_DOWN)).toBe("🔴 STILL DOWN: Checkout API");
  expect(alertSummary(STILL_DOWN)).toBe(STILL_SENTENCE);
  expect(alertTitle(ESCALATED)).toBe("🔴 ESCALATED: Checkout API");
  expect(alertSummary(ESCALATED)).toBe(ESCALATED_SENTENCE);
  // the down alert itself reads as before
  expect(alertTitle(DOWN)).toBe("🔴 DOWN: Checkout API");
});

test("webhook: the down alert's body under its own event, the incident still open", async () => {
  const r = receiver();
  for (const p of [STILL_DOWN, ESCALATED]) expect((await send(p, channel("webhook", { url: `${r.url}/hook` }))).ok).toBe(true);
  expect(r.requests.map((q) => q.headers.get("x-vigil-event"))).toEqual(["monitor.still_down", "monitor.escalated"]);
  for (const [i, q] of r.requests.entries()) {
    const event = i === 0 ? "monitor.still_down" : "monitor.escalated";
    const { dashboard_url: _link, ...rest } = DOWN;
    expect(JSON.parse(q.body)).toEqual({ ...rest, event, occurred_at: LATER });
  }
});

/** Every other channel type with the settings its own test uses, and a receiver answering as its service does. */
function chatChannels(url: string): [string, ChannelConfig][] {
  return [
    ["slack", channel("slack", { url: `${url}/slack` })],
    ["discord", channel("discord", { url: `${url}/discord` })],
    ["teams", channel("teams", { url: `${url}/teams` })],
    ["telegram", channel("telegram", { url, telegram_chat_id: "1", telegram_bot_token: "123:abc" }, ["123:abc"])],
    ["ntfy", channel("ntfy", { url: `${url}/topic` })],
    ["gotify", channel("gotify", { url, gotify_token: "tok-123" }, ["tok-123"])],
    ["pushover", channel("pushover", { url, pushover_token: "aToken", pushover_user: "uKey" }, ["aToken", "uKey"])],
    ["matrix", channel("matrix", { url, matrix_room_id: "!room:example.org", matrix_access_token: "syt_token_1" }, ["syt_token_1"])],
    ["mattermost", channel("mattermost", { url: `${url}/mattermost` })],
    ["rocketchat", channel("rocketchat", { url: `${url}/rocketchat` })],
    ["google_chat", channel("google_chat", { url: `${url}/gchat` })],
    ["homeassistant", channel("homeassistant", { url, homeassistant_token: "ha-token-1", homeassistant_service: "notify.notify" }, ["ha-token-1"])],
    ["signal", channel("signal", { url, signal_number: "+4915100000001", signal_recipients: ["+4917600000002"] })],
    ["apprise", channel("apprise", { url: `${url}/apprise`, apprise_urls: "json://127.0.0.1:9/x" }, ["json://127.0.0.1:9/x"])],
  ];
}

const answer = (path: string) =>
  path.endsWith("/sendMessage") ? Response.json({ ok: true }) : path.startsWith("/1/") ? Response.json({ status: 1 }) : path.includes("/_matrix/") ? Response.json({ event_id: "$e" }) : path.startsWith("/v2/send") ? Response.json({ timestamp: "1" }, { status: 201 }) : new Response("ok");

test.each([
  ["monitor.still_down", STILL_DOWN, "STILL DOWN: Checkout API", STILL_SENTENCE],
  ["monitor.escalated", ESCALATED, "ESCALATED: Checkout API", ESCALATED_SENTENCE],
] as const)("%s: every chat and push channel names it and says for how long", async (_event, payload, title, sentence) => {
  const r = receiver((req) => answer(req.path));
  for (const [type, c] of chatChannels(r.url)) {
    const out = await send(payload, c);
    expect({ type, ok: out.ok, error: out.error }).toEqual({ type, ok: true, error: null });
  }
  for (const [i, req] of r.requests.entries()) {
    const type = chatChannels(r.url)[i]![0];
    // ntfy carries the title in a header, pushover a form, the others JSON (which escapes nothing of these words)
    const form = req.headers.get("content-type")?.startsWith("application/x-www-form-urlencoded");
    const body = form ? [...new URLSearchParams(req.body).values()].join("\n") : req.body;
    const text = `${req.headers.get("title") ?? ""}\n${body}`;
    expect({ type, title: text.includes(title) }).toEqual({ type, title: true });
    expect({ type, sentence: text.includes(sentence) }).toEqual({ type, sentence: true });
    expect({ type, wasDown: text.includes("is down (was") }).toEqual({ type, wasDown: false });
  }
});

test("pagerduty and opsgenie: a reminder or an escalation triggers (creates) under the incident's id again, never resolves", async () => {
  const r = receiver((req) => (req.path.startsWith("/v2/enqueue") ? Response.json({ status: "success" }, { status: 202 }) : Response.json({ result: "Request will be processed" }, { status: 202 })));
  for (const p of [STILL_DOWN, ESCALATED]) {
    expect((await send(p, channel("pagerduty", { url: `${r.url}/v2/enqueue`, pagerduty_routing_key: "R0UTINGKEY00000000000000000000AB" }, ["R0UTINGKEY00000000000000000000AB"]))).ok).toBe(true);
    expect((await send(p, channel("opsgenie", { url: r.url, opsgenie_api_key: "11111111-2222-3333-4444-555555555555" }, ["11111111-2222-3333-4444-555555555555"]))).ok).toBe(true);
  }
  const pd = r.requests.filter((q) => q.path === "/v2/enqueue").map((q) => JSON.parse(q.body));
  expect(pd.map((b) => [b.event_action, b.dedup_key])).toEqual([["trigger", "3"], ["trigger", "3"]]);
  expect(pd[0].payload.summary).toStartWith(STILL_SENTENCE);
  expect(pd[1].payload.summary).toStartWith(ESCALATED_SENTENCE);
  const og = r.requests.filter((q) => q.path.startsWith("/v2/alerts")).map((q) => [q.path, JSON.parse(q.body).alias]);
  expect(og).toEqual([["/v2/alerts", "3"], ["/v2/alerts", "3"]]);
});

let smtp: SMTPServer | null = null;
afterAll(async () => void (smtp && (await new Promise<void>((r) => smtp!.close(() => r())))));

test("email: the subject and the text say STILL DOWN or ESCALATED and for how long", async () => {
  const mails: string[] = [];
  smtp = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push(Buffer.concat(chunks).toString("utf8"));
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => smtp!.listen(0, "127.0.0.1", () => resolve()));
  const port = (smtp.server.address() as AddressInfo).port;
  const email = channel("email", { email_to: "ops@example.com", smtp_host: "127.0.0.1", smtp_port: port, smtp_security: "none", smtp_from: "vigil@example.com" });
  for (const p of [STILL_DOWN, ESCALATED]) expect((await send(p, email)).ok).toBe(true);
  const [still, escalated] = mails.map((m) => m.replace(/=\r?\n/g, ""));
  expect(still).toContain("STILL DOWN: Checkout API");
  expect(still).toContain(STILL_SENTENCE);
  expect(still).toContain("X-Vigil-Event: monitor.still_down");
  expect(escalated).toContain("ESCALATED: Checkout API");
  expect(escalated).toContain(ESCALATED_SENTENCE);
});
