import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHeartbeat, ping } from "../helpers/heartbeat.ts";
import { freePort } from "../helpers/process.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startSmtpServer } from "../helpers/smtp-server.ts";
import { startSmtpSink, type SmtpSink, type SunkMessage } from "../helpers/smtp-sink.ts";
import { addUser, signedInClient } from "./helpers.ts";
import { parseFeed } from "../helpers/feed.ts";

let s: TestServer;
let sink: SmtpSink;
let heartbeat: { id: number; token: string };
let pageId = 0;

/**
 * Flags for a server whose --base-url is its own loopback address, so the links in its mail work as
 * they come (mail carries --base-url only: README "Email subscriptions").
 */
async function ownBaseUrl(port?: number): Promise<string[]> {
  const p = port ?? (await freePort());
  return ["--port", String(p), "--base-url", `http://127.0.0.1:${p}`];
}

beforeAll(async () => {
  sink = await startSmtpSink();
  // incidents gathered for a second only: the tests below of the period start their own servers
  s = await startTestServer(["--smtp-url", sink.url, "--status-mail-period", "1", ...(await ownBaseUrl())]);
  // a day between pings: only /fail and a ping change its state, never a deadline
  heartbeat = await createHeartbeat(s, { name: "Backups", periodSec: 86_400, graceSec: 3600 });
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
/** a link of ours in a mail: it starts with the server's --base-url, its own address, and is used as it is */
const ourLink = (text: string, kind: "confirm" | "unsubscribe", server: TestServer = s, slug = "acme") => {
  const m = new RegExp(`https?://[^\\s]+/s/${slug}/${kind}\\?token=[A-Za-z0-9_-]+`).exec(text);
  expect(m).not.toBeNull();
  expect(m![0]).toStartWith(`${server.url}/s/${slug}/${kind}?token=`);
  return m![0];
};
/** a confirmed subscriber of the page */
async function subscribed(server: TestServer, slug: string, email: string): Promise<void> {
  const r = await fetch(`${server.url}/s/${slug}/subscribe`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ email }) });
  expect(r.status).toBe(303);
  expect((await fetch(ourLink((await mailTo(email)).body, "confirm", server, slug))).status).toBe(200);
}
const mailsTo = (to: string, match: (m: SunkMessage) => boolean) => sink.messages.filter((m) => m.to.includes(to) && match(m));
const about = (name: string) => (m: SunkMessage) => m.body.includes(`${name} is down`) || m.body.includes(`${name} works again`);

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
    await ping(s.url, heartbeat.token, { suffix: "/fail" });
    const down = await mailTo("bob@example.com", (m) => m.headers.subject === "[Acme Status] Backups is down");
    expect(down.body).toMatch(/^Backups is down since \d{4}-\d\d-\d\d \d\d:\d\d UTC\.\n/);
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

// Incidents on a page's monitors are gathered for --status-mail-period (README "Email
// subscriptions"): 8 s here, room for a few pings (which change the state at once) and a mail pass.
describe("incident mail gathered over the period", () => {
  let g: TestServer;
  const hb: Record<"flappy" | "steady" | "marker", { id: number; token: string }> = {} as never;
  const erin = "erin@example.com";
  let path = "";
  let sidePath = "";

  beforeAll(async () => {
    g = await startTestServer(["--smtp-url", sink.url, "--status-mail-period", "8", ...(await ownBaseUrl())]);
    // a day between pings: only /fail and a ping change the state, never a deadline
    for (const name of ["flappy", "steady", "marker"] as const) {
      hb[name] = await createHeartbeat(g, { name: name[0]!.toUpperCase() + name.slice(1), periodSec: 86_400, graceSec: 3600 });
      expect((await ping(g.url, hb[name].token)).status).toBe(200); // unknown → up: no incident
    }
    const page = await g.api("POST", "/api/v1/status-pages", { name: "Gather", slug: "gather", monitor_ids: [hb.flappy.id, hb.steady.id, hb.marker.id] });
    path = `/api/v1/status-pages/${page.json.data.id}/updates`;
    await subscribed(g, "gather", erin);
    // another page, whose updates show when the mailer has made a pass
    const side = await g.api("POST", "/api/v1/status-pages", { name: "Side", slug: "side" });
    sidePath = `/api/v1/status-pages/${side.json.data.id}/updates`;
    await subscribed(g, "side", "sid@example.com");
  });
  afterAll(async () => {
    await g?.stop();
  });

  /** a mail pass has run since now: an update on the other page was mailed */
  async function aPassRan(title: string): Promise<void> {
    expect((await g.api("POST", sidePath, { title, kind: "info" })).status).toBe(201);
    await mailTo("sid@example.com", (m) => m.headers.subject === `[Side] Update: ${title}`);
  }

  /** the marker monitor changes and a new mail of it arrives: every mail owed before it has been sent */
  async function markerMail(down: boolean): Promise<SunkMessage> {
    const subject = (m: SunkMessage) => m.headers.subject === `[Gather] Marker is ${down ? "down" : "back up"}`;
    const before = mailsTo(erin, subject).length;
    expect((await ping(g.url, hb.marker.token, down ? { suffix: "/fail" } : {})).status).toBe(200);
    const arrived = await waitFor(() => mailsTo(erin, subject).length > before, { timeoutMs: 15_000 });
    expect(arrived).toBe(true);
    return mailsTo(erin, subject).at(-1)!;
  }

  test("a monitor flapping within the period yields one mail, with its final state and how often it went down", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await ping(g.url, hb.flappy.token, { suffix: "/fail" })).status).toBe(200);
      expect((await ping(g.url, hb.flappy.token)).status).toBe(200);
      // a pass in the middle of the flapping: it mails none of it, the period has not ended
      if (i === 1) await aPassRan("Between flaps");
    }
    expect((await ping(g.url, hb.flappy.token, { suffix: "/fail" })).status).toBe(200);
    const mail = await mailTo(erin, (m) => m.headers.subject === "[Gather] Flappy is down");
    expect(mail.body).toMatch(/^Flappy is down since .+ UTC\. It went down 4 times since .+ UTC\.\n\nWe will write again when this changes\./);
    expect(mail.headers["list-unsubscribe-post"]).toBe("List-Unsubscribe=One-Click");
    const marker = await markerMail(true);
    expect(marker.body).not.toContain("Flappy");
    expect(mailsTo(erin, about("Flappy"))).toHaveLength(1);
  }, 60_000);

  test("a change that holds yields exactly one mail; one that comes back within the period is reported back up", async () => {
    expect((await ping(g.url, hb.steady.token, { suffix: "/fail" })).status).toBe(200);
    const mail = await mailTo(erin, (m) => m.headers.subject === "[Gather] Steady is down");
    expect(mail.body).not.toContain("went down");
    // the flapper comes back and goes down again, and the marker comes back, in one period
    expect((await ping(g.url, hb.flappy.token)).status).toBe(200);
    expect((await ping(g.url, hb.flappy.token, { suffix: "/fail" })).status).toBe(200);
    expect((await ping(g.url, hb.flappy.token)).status).toBe(200);
    expect((await ping(g.url, hb.marker.token)).status).toBe(200);
    const both = await mailTo(erin, (m) => m.headers.subject === "[Gather] Flappy back up, Marker back up");
    expect(both.body).toContain("Flappy works again since");
    expect(both.body).toContain("It went down once since");
    expect(both.body).toContain("Marker works again since");
    expect(both.body).not.toContain("Steady");
    expect(both.body).toContain("Everything named here works again.");
    await markerMail(true);
    expect(mailsTo(erin, about("Steady"))).toHaveLength(1);
    expect(mailsTo(erin, about("Flappy"))).toHaveLength(2);
    await markerMail(false);
  }, 60_000);

  test("a new update and each new status step are mailed; an edit of the text is not, nor a scheduled update before its time", async () => {
    const created = await g.api("POST", path, { title: "Slow database", kind: "incident", body: "Looking into it." });
    expect(created.status).toBe(201);
    const first = await mailTo(erin, (m) => m.headers.subject === "[Gather] Incident (investigating): Slow database");
    expect(first.body).toContain("Looking into it.");
    expect(first.body).not.toContain("Status:");

    // an edit of the words, and an update scheduled an hour ahead; then a note to know the pass ran
    expect((await g.api("PATCH", `${path}/${created.json.data.id}`, { body: "The disk is full." })).status).toBe(200);
    const later = await g.api("POST", path, { title: "Upgrade tonight", kind: "maintenance", published_at: new Date(Date.now() + 3600_000).toISOString() });
    expect(later.status).toBe(201);
    expect((await g.api("POST", path, { title: "A note", kind: "info" })).status).toBe(201);
    await mailTo(erin, (m) => m.headers.subject === "[Gather] Update: A note");
    expect(mailsTo(erin, (m) => m.headers.subject?.includes("Slow database") ?? false)).toHaveLength(1);
    expect(mailsTo(erin, (m) => m.headers.subject?.includes("Upgrade tonight") ?? false)).toHaveLength(0);

    // a new status is a step: mailed, with what it was and the edited words
    expect((await g.api("PATCH", `${path}/${created.json.data.id}`, { status: "identified" })).status).toBe(200);
    const step = await mailTo(erin, (m) => m.headers.subject === "[Gather] Incident (identified): Slow database");
    expect(step.body).toStartWith("Status: identified (was investigating)\n\n");
    expect(step.body).toContain("The disk is full.");

    // published now: mailed now
    expect((await g.api("PATCH", `${path}/${later.json.data.id}`, { published_at: new Date().toISOString() })).status).toBe(200);
    await mailTo(erin, (m) => m.headers.subject === "[Gather] Maintenance: Upgrade tonight");
    expect(mailsTo(erin, (m) => m.headers.subject?.includes("Slow database") ?? false)).toHaveLength(2);
  }, 60_000);
});

describe("subscription mail across a restart", () => {
  test("an incident noted but not yet mailed when Vigil stops is mailed once after it starts again", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vigil-sub-note-"));
    const args = ["--smtp-url", sink.url, "--status-mail-period", "3", ...(await ownBaseUrl())];
    const first = await startTestServer(args, { dataDir });
    let job = { id: 0, token: "" };
    try {
      job = await createHeartbeat(first, { name: "Nightly", periodSec: 86_400, graceSec: 3600 });
      expect((await ping(first.url, job.token)).status).toBe(200);
      await first.api("POST", "/api/v1/status-pages", { name: "Noted", slug: "noted", monitor_ids: [job.id] });
      await subscribed(first, "noted", "frank@example.com");
      expect((await ping(first.url, job.token, { suffix: "/fail" })).status).toBe(200);
    } finally {
      await first.stop();
    }
    const second = await startTestServer(args, { dataDir });
    try {
      await mailTo("frank@example.com", (m) => m.headers.subject === "[Noted] Nightly is down");
      // a later change, mailed after: the first was sent once
      expect((await ping(second.url, job.token)).status).toBe(200);
      await mailTo("frank@example.com", (m) => m.headers.subject === "[Noted] Nightly is back up");
      expect(mailsTo("frank@example.com", (m) => m.headers.subject === "[Noted] Nightly is down")).toHaveLength(1);
    } finally {
      await second.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);


  test("mail not yet taken by the SMTP server when Vigil stops goes out after it starts again", async () => {
    // a server that never answers: the confirmation mail is still waiting when Vigil stops
    const silent = await startSmtpServer({ mode: "silent" });
    const dataDir = mkdtempSync(join(tmpdir(), "vigil-sub-restart-"));
    const base = await ownBaseUrl();
    const first = await startTestServer(["--smtp-url", `smtp://127.0.0.1:${silent.port}`, ...base], { dataDir });
    try {
      await first.api("POST", "/api/v1/status-pages", { name: "Restart Status", slug: "restart" });
      const r = await fetch(`${first.url}/s/restart/subscribe`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "email=dave%40example.com" });
      expect(r.status).toBe(303);
    } finally {
      await first.stop();
      await silent.stop();
    }
    const second = await startTestServer(["--smtp-url", sink.url, ...base], { dataDir });
    try {
      const mail = await mailTo("dave@example.com");
      expect(mail.headers.subject).toBe("Confirm your subscription to Restart Status");
    } finally {
      await second.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

// Links that leave the instance, in mail and in cached feeds, come from --base-url only: a request's
// Host is whatever the requester wrote (README "Links without --base-url").
describe("links in mail and feeds never come from the request's Host", () => {
  const EVIL = "evil.example";
  const asEvil = (url: string, init: RequestInit = {}) => fetch(url, { redirect: "manual", ...init, headers: { host: EVIL, ...(init.headers as Record<string, string>) } });
  const subscribeAs = (server: TestServer, email: string) =>
    asEvil(`${server.url}/s/links/subscribe`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ email }) });

  describe("without --base-url", () => {
    let bare: TestServer;
    beforeAll(async () => {
      bare = await startTestServer(["--smtp-url", sink.url, "--trusted-proxy", "127.0.0.1"]);
      const id = (await bare.api("POST", "/api/v1/status-pages", { name: "Links", slug: "links" })).json.data.id;
      expect((await bare.api("POST", `/api/v1/status-pages/${id}/updates`, { title: "Planned work", kind: "maintenance" })).status).toBe(201);
    });
    afterAll(() => bare?.stop());

    test("a page offers no subscription; a request is told the operator must set --base-url, and nothing is mailed", async () => {
      expect(await (await asEvil(`${bare.url}/s/links`)).text()).not.toContain("/subscribe");
      const answer = await subscribeAs(bare, "victim@example.com");
      expect(answer.status).toBe(503);
      expect(await answer.text()).toContain("<code>--base-url</code>");
      expect(await bare.ctx.db.selectFrom("status_page_subscribers").selectAll().execute()).toEqual([]);
      expect(await bare.ctx.db.selectFrom("status_mail_queue").selectAll().execute()).toEqual([]);
      expect(bare.logs.some((l) => l.component === "status-mail" && String(l.msg).includes("off until --base-url is set"))).toBe(true);
      // and the page's editor tells its owner
      await addUser(bare, "owner");
      const owner = await signedInClient(bare, "owner");
      const id = (await bare.api("GET", "/api/v1/status-pages")).json.data[0].id;
      expect((await owner.get(`/status-pages/${id}/edit`)).text).toContain("Email subscriptions are off: their mail links back here, and only <code>--base-url</code> says where here is.");
    });

    test("the feed, cached for everyone, has relative links and names no Host (nor a proxy's X-Forwarded-Host)", async () => {
      for (const headers of [{ host: EVIL }, { "x-forwarded-host": EVIL, "x-forwarded-proto": "https" }] as Record<string, string>[]) {
        const res = await fetch(`${bare.url}/s/links/feed.atom`, { headers });
        expect(res.headers.get("cache-control")).toBe("public, max-age=30");
        const xml = await res.text();
        expect(xml).not.toContain(EVIL);
        // a reader resolves the relative links against the address it fetched the feed from
        const feed = await parseFeed(xml, `https://status.reader.test/s/links/feed.atom`);
        expect(feed.meta.link).toBe("https://status.reader.test/s/links");
        expect(feed.items[0]!.link).toMatch(/^https:\/\/status\.reader\.test\/s\/links#update-\d+$/);
        expect(feed.items[0]!.guid).toMatch(/^tag:localhost,/);
      }
    });
  });

  test("with --base-url a request sent with Host: evil.example mails links to the base URL, and they work", async () => {
    const based = await startTestServer(["--smtp-url", sink.url, "--status-mail-period", "1", ...(await ownBaseUrl())]);
    try {
      const id = (await based.api("POST", "/api/v1/status-pages", { name: "Links", slug: "links" })).json.data.id;
      expect((await subscribeAs(based, "grace@example.com")).status).toBe(303);
      const confirm = await mailTo("grace@example.com");
      expect(confirm.body).not.toContain(EVIL);
      const link = ourLink(confirm.body, "confirm", based, "links");
      expect(await (await fetch(link)).text()).toContain("Subscribed");

      expect((await based.api("POST", `/api/v1/status-pages/${id}/updates`, { title: "Host check", kind: "info" })).status).toBe(201);
      const notice = await mailTo("grace@example.com", (m) => m.headers.subject === "[Links] Update: Host check");
      expect(`${notice.body}${notice.headers["list-unsubscribe"]}`).not.toContain(EVIL);
      const unsubscribe = ourLink(notice.body, "unsubscribe", based, "links");
      expect(notice.headers["list-unsubscribe"]).toBe(`<${unsubscribe}>`);
      const done = await fetch(unsubscribe, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" });
      expect(await done.text()).toContain("Unsubscribed");
      expect(await based.ctx.db.selectFrom("status_page_subscribers").selectAll().execute()).toEqual([]);

      const xml = await (await asEvil(`${based.url}/s/links/feed.atom`)).text();
      expect(xml).not.toContain(EVIL);
      expect(xml).toContain(`href="${based.url}/s/links/feed.atom"`);
    } finally {
      await based.stop();
    }
  }, 30_000);
});
