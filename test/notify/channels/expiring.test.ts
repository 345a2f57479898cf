/**
 * A monitor.expiring alert through every channel type, as the dispatcher sends it (deliverOnce to a
 * real receiver on loopback, a real SMTP server for email): each names what expires, the date and
 * the days left in its own format.
 */
import { afterAll, expect, test } from "bun:test";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { channel, EXPIRING, EXPIRING_TEXT, receivers, send } from "./fixtures.ts";

const receiver = receivers();
const WHEN = "expires on 2026-12-04 09:30 UTC (10 days left)";

test("webhook: the usual body plus `expiry`, with X-Vigil-Event monitor.expiring", async () => {
  const r = receiver();
  expect((await send(EXPIRING, channel("webhook", { url: `${r.url}/hook` }))).ok).toBe(true);
  const req = r.requests[0]!;
  expect(req.headers.get("x-vigil-event")).toBe("monitor.expiring");
  expect(JSON.parse(req.body)).toEqual({
    event: "monitor.expiring",
    occurred_at: "2026-11-24T10:00:00.000Z",
    monitor: EXPIRING.monitor,
    state: "degraded",
    previous_state: "degraded",
    incident: null,
    error_code: null,
    error_message: null,
    regions: EXPIRING.regions,
    expiry: { kind: "certificate", expires_at: "2026-12-04T09:30:00.000Z", days_left: 10 },
  });
});

test("ntfy, gotify and pushover: an EXPIRING title and the plain text naming the date", async () => {
  const r = receiver((req) => (req.path.startsWith("/1/") ? Response.json({ status: 1 }) : new Response("ok")));
  await send(EXPIRING, channel("ntfy", { url: `${r.url}/topic` }));
  await send(EXPIRING, channel("gotify", { url: r.url, gotify_token: "tok-123" }, ["tok-123"]));
  await send(EXPIRING, channel("pushover", { url: r.url, pushover_token: "aToken", pushover_user: "uKey" }, ["aToken", "uKey"]));
  const [ntfy, gotify, pushover] = r.requests;
  expect(ntfy!.headers.get("title")).toBe("EXPIRING: Checkout API");
  expect(ntfy!.headers.get("tags")).toBe("hourglass_flowing_sand");
  expect(ntfy!.body).toBe(EXPIRING_TEXT);
  expect(JSON.parse(gotify!.body)).toMatchObject({ title: "⏳ EXPIRING: Checkout API", message: EXPIRING_TEXT });
  expect(Object.fromEntries(new URLSearchParams(pushover!.body))).toMatchObject({ title: "⏳ EXPIRING: Checkout API", message: EXPIRING_TEXT });
});

test("slack, discord, teams and telegram: the title, the sentence and an Expires field", async () => {
  const r = receiver((req) => (req.path.endsWith("/sendMessage") ? Response.json({ ok: true }) : new Response("ok")));
  for (const type of ["slack", "discord", "teams"] as const) expect((await send(EXPIRING, channel(type, { url: `${r.url}/${type}` }))).ok).toBe(true);
  expect((await send(EXPIRING, channel("telegram", { url: r.url, telegram_chat_id: "1", telegram_bot_token: "123:abc" }, ["123:abc"]))).ok).toBe(true);
  expect(r.requests.length).toBe(4);
  for (const req of r.requests) {
    expect(req.body).toContain("EXPIRING: Checkout API");
    expect(req.body).toContain(`The certificate of Checkout API ${WHEN}: renew it before then.`);
    expect(req.body).toContain("Expires");
    expect(req.body).toContain("2026-12-04 09:30 UTC (10 days left)");
    // nothing reads as a state change
    expect(req.body).not.toContain("was degraded");
  }
});

let smtp: SMTPServer | null = null;
afterAll(async () => void (smtp && (await new Promise<void>((r) => smtp!.close(() => r())))));

test("email: the subject and both parts name the date", async () => {
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
  const out = await send(EXPIRING, channel("email", { email_to: "ops@example.com", smtp_host: "127.0.0.1", smtp_port: port, smtp_security: "none", smtp_from: "vigil@example.com" }));
  expect(out.ok).toBe(true);
  const raw = mails[0]!.replace(/=\r?\n/g, "");
  expect(raw).toContain("EXPIRING: Checkout API");
  expect(raw).toContain(`The certificate of Checkout API ${WHEN}: renew it before then.`);
  expect(raw).toContain("Expires: 2026-12-04 09:30 UTC (10 days left)");
  expect(raw).toContain(">Expires</th>");
});
