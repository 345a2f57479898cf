import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHeartbeat, ping } from "../helpers/heartbeat.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startSmtpServer } from "../helpers/smtp-server.ts";
import { startSmtpSink, type SmtpSink, type SunkMessage } from "../helpers/smtp-sink.ts";

let s: TestServer;
let sink: SmtpSink;
let heartbeat: { id: number; token: string };
let pageId = 0;

beforeAll(async () => {
  sink = await startSmtpSink();
  s = await startTestServer(["--smtp-url", sink.url]);
  heartbeat = await createHeartbeat(s, { name: "Backups", periodSec: 1, graceSec: 0 });
  const page = await s.api("POST", "/api/v1/status-pages", { name: "Acme Status", slug: "acme", monitor_ids: [heartbeat.id] });
  pageId = Number(page.json.data.id);
});
afterAll(async () => {
  await s?.stop();
  await sink?.stop();
});

const subscribe = (email: string, slug = "acme") =>
  fetch(`${s.url}/s/${slug}/subscribe`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ email }) });
async function mailTo(to: string, match: (m: SunkMessage) => boolean = () => true): Promise<SunkMessage> {
  const found = await waitFor(() => sink.messages.find((m) => m.to.includes(to) && match(m)), { timeoutMs: 15_000 });
  if (!found) throw new Error(`no such mail to ${to}; the sink has: ${sink.messages.map((m) => `${m.to} "${m.headers.subject}"`).join(", ")}`);
  return found;
}
/** a link of ours in a mail, pointed at the test server */
const ourLink = (text: string, kind: "confirm" | "unsubscribe") => {
  const m = new RegExp(`https?://[^\\s]+/s/acme/${kind}\\?token=[A-Za-z0-9_-]+`).exec(text);
  expect(m).not.toBeNull();
  const u = new URL(m![0]);
  return `${s.url}${u.pathname}${u.search}`;
};

describe("email subscriptions to a status page", () => {
  test("a public page offers the form; the answer is the same for a new, a pending and an unknown address", async () => {
    const page = await (await fetch(`${s.url}/s/acme`)).text();
    expect(page).toContain('action="/s/acme/subscribe"');
    const first = await subscribe("alice@example.com");
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/s/acme?subscribe=sent#subscribe");
    const mail = await mailTo("alice@example.com");
    expect(mail.headers.subject).toBe("Confirm your subscription to Acme Status");
    const again = await subscribe("alice@example.com");
    expect([again.status, again.headers.get("location")]).toEqual([303, "/s/acme?subscribe=sent#subscribe"]);
    const answer = await (await fetch(`${s.url}${again.headers.get("location")}`)).text();
    expect(answer).toContain("If that address can receive mail, a link to confirm is on its way");
    expect((await subscribe("not an address")).status).toBe(422);
  });

  test("confirmed, a subscriber gets each update written by people, with a one-click unsubscribe link and headers; unsubscribed, no more", async () => {
    await waitFor(() => sink.messages.filter((m) => m.to.includes("alice@example.com")).length === 2, { timeoutMs: 15_000 });
    const latest = sink.messages.filter((m) => m.to.includes("alice@example.com")).at(-1)!;
    // the second request's link works; the first one's token was replaced
    const first = ourLink(sink.messages.find((m) => m.to.includes("alice@example.com"))!.body, "confirm");
    const confirm = ourLink(latest.body, "confirm");
    if (first !== confirm) expect((await fetch(first)).status).toBe(404);
    const confirmed = await fetch(confirm);
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("Subscribed");

    expect((await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, { title: "Backups are late", kind: "incident", status: "investigating", body: "We are looking into it." })).status).toBe(201);
    const notice = await mailTo("alice@example.com", (m) => m.headers.subject?.includes("Backups are late") ?? false);
    expect(notice.headers.subject).toBe("[Acme Status] Incident (investigating): Backups are late");
    expect(notice.body).toContain("We are looking into it.");
    const unsubscribe = ourLink(notice.body, "unsubscribe");
    expect(notice.headers["list-unsubscribe"]).toMatch(/^<https?:\/\/[^>]+\/s\/acme\/unsubscribe\?token=[A-Za-z0-9_-]+>$/);
    expect(notice.headers["list-unsubscribe-post"]).toBe("List-Unsubscribe=One-Click");

    // a second subscriber, to know when the next update's mail has gone out
    await subscribe("bob@example.com");
    expect((await fetch(ourLink((await mailTo("bob@example.com")).body, "confirm"))).status).toBe(200);

    // the mail client's one-click POST (RFC 8058); opening the link only shows a button
    expect(await (await fetch(unsubscribe)).text()).toContain(">Unsubscribe</button>");
    const done = await fetch(unsubscribe, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" });
    expect(done.status).toBe(200);
    expect((await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, { title: "Backups are back", kind: "info", body: "All done." })).status).toBe(201);
    await mailTo("bob@example.com", (m) => m.headers.subject?.includes("Backups are back") ?? false);
    expect(sink.messages.filter((m) => m.to.includes("alice@example.com") && m.headers.subject?.includes("Backups are back"))).toEqual([]);
  }, 30_000);

  test("confirmed subscribers hear of an incident opening and resolving on the page's monitors", async () => {
    await ping(s.url, heartbeat.token);
    await mailTo("bob@example.com", (m) => m.headers.subject === "[Acme Status] Backups is down");
    await ping(s.url, heartbeat.token);
    const up = await mailTo("bob@example.com", (m) => m.headers.subject === "[Acme Status] Backups is back up");
    expect(up.headers["list-unsubscribe-post"]).toBe("List-Unsubscribe=One-Click");
  }, 30_000);

  test("a token-protected page and a private one offer no subscriptions", async () => {
    await s.api("POST", "/api/v1/status-pages", { name: "Locked", slug: "locked", is_token_protected: true });
    await s.api("POST", "/api/v1/status-pages", { name: "Inside", slug: "inside", is_public: false });
    for (const slug of ["locked", "inside"]) {
      expect(await (await fetch(`${s.url}/s/${slug}`)).text()).not.toContain("/subscribe");
      expect((await subscribe("carol@example.com", slug)).status).toBe(404);
    }
  });

  test("subscription requests are limited per client address", async () => {
    const answers: number[] = [];
    for (let i = 0; i < 8; i++) answers.push((await subscribe(`many${i}@example.com`)).status);
    expect(answers).toContain(429);
    expect(answers.slice(answers.indexOf(429))).toEqual(answers.slice(answers.indexOf(429)).map(() => 429));
  });
});

describe("subscription mail across a restart", () => {
  test("mail not yet taken by the SMTP server when Vigil stops goes out after it starts again", async () => {
    // a server that never answers: the confirmation mail is still waiting when Vigil stops
    const silent = await startSmtpServer({ mode: "silent" });
    const dataDir = mkdtempSync(join(tmpdir(), "vigil-sub-restart-"));
    const first = await startTestServer(["--smtp-url", `smtp://127.0.0.1:${silent.port}`], { dataDir });
    try {
      await first.api("POST", "/api/v1/status-pages", { name: "Restart Status", slug: "restart" });
      const r = await fetch(`${first.url}/s/restart/subscribe`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "email=dave%40example.com" });
      expect(r.status).toBe(303);
    } finally {
      await first.stop();
      await silent.stop();
    }
    const second = await startTestServer(["--smtp-url", sink.url], { dataDir });
    try {
      const mail = await mailTo("dave@example.com");
      expect(mail.headers.subject).toBe("Confirm your subscription to Restart Status");
    } finally {
      await second.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
