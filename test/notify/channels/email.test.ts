/**
 * Email through a real SMTP server on loopback (smtp-server, from the nodemailer project), with
 * STARTTLS and AUTH, implicit TLS, and plain SMTP; certificates from the system's openssl.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from "smtp-server";
import type { AlertPayload } from "../../../src/domain/alert-payload.ts";
import { deliverOnce } from "../../../src/notify/deliver.ts";
import type { ChannelConfig } from "../../../src/store/notification-channels.ts";
import { makeCerts, type TestCerts } from "../../helpers/certs.ts";
import { tempDir } from "../../helpers/server.ts";
import { DOWN } from "./fixtures.ts";

interface Received {
  raw: string;
  from: string | undefined;
  to: string[];
  secure: boolean;
  user: string | undefined;
}

let certs: TestCerts;
const servers: SMTPServer[] = [];
beforeAll(() => void (certs = makeCerts(tempDir("vigil-smtp-certs-"))));
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  rmSync(certs.dir, { recursive: true, force: true });
});

async function smtp(opts: Partial<SMTPServerOptions>): Promise<{ port: number; mails: Received[] }> {
  const mails: Received[] = [];
  const server = new SMTPServer({
    logger: false,
    key: readFileSync(certs.keyPath),
    cert: readFileSync(certs.certPath),
    ...opts,
    onData(stream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({
          raw: Buffer.concat(chunks).toString("utf8"),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          user: session.user as string | undefined,
        });
        cb();
      });
    },
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { port: (server.server.address() as AddressInfo).port, mails };
}

// a single-region monitor: the mail has no Regions line
const PAYLOAD: AlertPayload = { ...DOWN, regions: [] };

function emailChannel(settings: Record<string, unknown>): ChannelConfig {
  const s: Record<string, unknown> = { email_to: "ops@example.com, oncall@example.com", smtp_host: "127.0.0.1", smtp_from: "Vigil <vigil@example.com>", smtp_security: "starttls", ...settings };
  return { id: 1, accountId: 1, name: "mail", type: "email", isEnabled: true, settings: s, secretValues: typeof s.smtp_pass === "string" ? [s.smtp_pass] : [] };
}

const send = (c: ChannelConfig, trust = true) =>
  deliverOnce(PAYLOAD, c, new AbortController().signal, { deliveryId: "del-42", timeoutMs: 5000, extraCa: trust ? certs.caPem : undefined });

/** Just enough MIME reading for assertions: unfolded headers, RFC 2047 words, quoted-printable parts. */
function decodeWords(text: string): string {
  return text.replace(/=\?UTF-8\?([QB])\?([^?]*)\?=\s*/gi, (_, enc: string, data: string) =>
    enc.toUpperCase() === "B" ? Buffer.from(data, "base64").toString("utf8") : decodeQp(data.replace(/_/g, " ")),
  );
}
function decodeQp(text: string): string {
  const bytes = text.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}
function header(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, " ");
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(name.toLowerCase() + ":"));
  return line ? decodeWords(line.slice(name.length + 1).trim()) : undefined;
}
function part(raw: string, type: string): string {
  const i = raw.indexOf(`Content-Type: ${type}`);
  expect(i).toBeGreaterThan(-1);
  const rest = raw.slice(i);
  const body = rest.slice(rest.search(/\r?\n\r?\n/)).trim();
  return decodeQp(body.split(/\r?\n--/)[0]!);
}

describe("email over SMTP", () => {
  test("STARTTLS with AUTH: plain-text and HTML bodies, subject, recipients and delivery header", async () => {
    const { port, mails } = await smtp({
      authMethods: ["PLAIN", "LOGIN"],
      onAuth(auth, _s, cb) {
        if (auth.username === "vigil" && auth.password === "smtp-pa55") cb(null, { user: "vigil" });
        else cb(new Error("Invalid username or password"));
      },
    });
    const out = await send(emailChannel({ smtp_port: port, smtp_user: "vigil", smtp_pass: "smtp-pa55" }));
    expect(out).toEqual({ ok: true, statusCode: 250, error: null, permanent: false });
    expect(mails.length).toBe(1);
    const m = mails[0]!;
    expect(m.secure).toBe(true);
    expect(m.user).toBe("vigil");
    expect(m.from).toBe("vigil@example.com");
    expect(m.to).toEqual(["ops@example.com", "oncall@example.com"]);
    expect(header(m.raw, "Subject")).toBe("🔴 DOWN: Checkout API");
    expect(header(m.raw, "X-Vigil-Delivery")).toBe("del-42");
    expect(header(m.raw, "X-Vigil-Event")).toBe("monitor.down");
    expect(part(m.raw, "text/plain")).toBe(
      [
        "🔴 DOWN: Checkout API",
        "",
        "Checkout API is down (was up).",
        "",
        "Monitor: Checkout API",
        "Type: http",
        "Target: https://shop.example.com/health",
        "State: down (was up)",
        "Error: http_error: expected 200-299, got 503",
        "Incident: #3 opened 2026-11-21T10:00:00.000Z",
        "Time: 2026-11-21T10:00:00.000Z",
        "",
        "Dashboard: https://vigil.example.com/monitors/7",
      ].join("\r\n"),
    );
    const html = part(m.raw, "text/html");
    expect(html).toContain("Checkout API is down (was up).");
    expect(html).toContain('<a href="https://vigil.example.com/monitors/7">Open in Vigil</a>');
  });

  test("a wrong password is a permanent failure whose error does not contain the password", async () => {
    const { port, mails } = await smtp({ authMethods: ["PLAIN", "LOGIN"], onAuth: (_a, _s, cb) => cb(new Error("Invalid username or password")) });
    const out = await send(emailChannel({ smtp_port: port, smtp_user: "vigil", smtp_pass: "wrong-pa55" }));
    expect(out.ok).toBe(false);
    expect(out.permanent).toBe(true);
    expect(out.statusCode).toBe(535);
    expect(out.error).not.toContain("wrong-pa55");
    expect(mails.length).toBe(0);
  });

  test("implicit TLS (smtp_security tls)", async () => {
    const { port, mails } = await smtp({ secure: true, authOptional: true });
    const out = await send(emailChannel({ smtp_port: port, smtp_security: "tls" }));
    expect(out.ok).toBe(true);
    expect(mails.length).toBe(1);
    expect(mails[0]!.secure).toBe(true);
  });

  test("plain SMTP (smtp_security none) sends without TLS; starttls refuses a server without STARTTLS", async () => {
    const { port, mails } = await smtp({ authOptional: true, disabledCommands: ["STARTTLS"] });
    expect((await send(emailChannel({ smtp_port: port, smtp_security: "none" }))).ok).toBe(true);
    expect(mails.length).toBe(1);
    expect(mails[0]!.secure).toBe(false);
    const refused = await send(emailChannel({ smtp_port: port, smtp_security: "starttls" }));
    expect(refused.ok).toBe(false);
    expect(mails.length).toBe(1);
  });

  test("a certificate outside the trust store is refused", async () => {
    const { port, mails } = await smtp({ authOptional: true });
    const out = await send(emailChannel({ smtp_port: port }), false);
    expect(out.ok).toBe(false);
    expect(mails.length).toBe(0);
  });
});
