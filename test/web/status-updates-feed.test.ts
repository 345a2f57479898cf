/**
 * Status pages that talk (README "Groups, tags and status page updates"): updates written by people
 * on the public page (open incidents at the top, the last 14 days below, text never read as HTML),
 * monitors in sections by group, and the page's Atom feed, read by a real feed parser (feedparser,
 * strict XML, stopping at the first XML error).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY_MS } from "../../src/domain/uptime.ts";
import { insertIncident, resolveIncidentRow } from "../../src/store/incidents.ts";
import { createMonitor, createStatusPage, httpAttrs } from "../api/fixtures.ts";
import { startDomainDns, verifyDomain, type DomainDns } from "../helpers/custom-domains.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, unescape } from "./helpers.ts";
import { parseFeed, type ParsedFeed } from "../helpers/feed.ts";

const BASE_URL = "https://status.acme.test";
const EVIL = `<script>alert("x")</script> & 'quotes'`;
let s: TestServer;
let dns: DomainDns;
let accountId: number;
const m: Record<string, number> = {};
let pageId: number;
const slug = "acme";
const u: Record<string, number> = {};

beforeAll(async () => {
  dns = await startDomainDns();
  s = await startTestServer(["--base-url", BASE_URL, ...dns.flags]);
  const group = async (name: string, sort_order: number) => Number((await s.api("POST", "/api/v1/groups", { name, sort_order })).json.data.id);
  const web = await group("Web front", 1);
  const data = await group("Databases", 0);
  m.shop = await createMonitor(s, httpAttrs({ name: "Shop", group_id: web }));
  m.db = await createMonitor(s, httpAttrs({ name: "Postgres", group_id: data }));
  m.api = await createMonitor(s, httpAttrs({ name: "API", group_id: web }));
  m.misc = await createMonitor(s, httpAttrs({ name: "Mail relay" }));
  pageId = await createStatusPage(s, { name: "Acme", slug, headline: "How we are doing", monitor_ids: [m.shop, m.db, m.api, m.misc] });
  accountId = (await s.ctx.db.selectFrom("monitors").select("account_id").where("id", "=", m.shop).executeTakeFirstOrThrow()).account_id;

  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const write = async (key: string, body: Record<string, unknown>) => {
    const res = await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, body);
    if (res.status !== 201) throw new Error(`${key}: ${res.status} ${res.text}`);
    u[key] = Number(res.json.data.id);
  };
  await write("open", { title: EVIL, kind: "incident", status: "identified", body: `First line\nSecond <b>line</b>\n\n  indented`, affected_monitor_ids: [m.shop, m.api], published_at: iso(now - 3_600_000) });
  await write("resolved", { title: "Slow checkout", kind: "incident", status: "resolved", body: "Fixed.", published_at: iso(now - 2 * DAY_MS) });
  await write("maintenance", { title: "Database upgrade", kind: "maintenance", body: "Saturday 02:00 UTC", affected_monitor_ids: [m.db], published_at: iso(now - 3 * DAY_MS) });
  await write("old", { title: "Old news", kind: "info", published_at: iso(now - 20 * DAY_MS) });
  await write("oldOpen", { title: "Still investigating", kind: "incident", published_at: iso(now - 30 * DAY_MS) });
  await write("future", { title: "Not yet", kind: "info", published_at: iso(now + DAY_MS) });
  // an incident Vigil opened and resolved on one of the page's monitors, and one still open
  const resolved = await insertIncident(s.ctx.db, { accountId, monitorId: m.db, startedAt: now - 5 * 3_600_000, rootCheckId: null, errorCode: "connection_refused", errorMessage: "connect ECONNREFUSED 10.0.0.5:5432", httpCode: null, failureCount: 3 });
  await resolveIncidentRow(s.ctx.db, resolved, now - 4 * 3_600_000, null);
  u.incidentResolved = resolved.id;
  u.incidentOpen = (await insertIncident(s.ctx.db, { accountId, monitorId: m.misc, startedAt: now - 60_000, rootCheckId: null, errorCode: "connection_timeout", errorMessage: "timeout after 5000 ms to 10.0.0.9", httpCode: null, failureCount: 2 })).id;
});
afterAll(async () => {
  await s.stop();
  await dns.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(s.url + path, { redirect: "manual", headers });

describe("the public page", () => {
  let html = "";
  beforeAll(async () => {
    const res = await get(`/s/${slug}`);
    expect(res.status).toBe(200);
    html = await res.text();
  });
  const at = (needle: string) => {
    const i = html.indexOf(needle);
    expect(i, `${needle} is on the page`).toBeGreaterThanOrEqual(0);
    return i;
  };

  test("open incident updates are at the top, before the services; the last 14 days' updates below them", () => {
    const open = at(`id="update-${u.open}"`);
    expect(open).toBeLessThan(at('id="mon-h"'));
    expect(at(`id="update-${u.oldOpen}"`)).toBeLessThan(at('id="mon-h"')); // open, however old
    for (const k of ["resolved", "maintenance"]) expect(at(`id="update-${u[k]}"`)).toBeGreaterThan(at('id="mon-h"'));
    expect(html).not.toContain(`id="update-${u.old}"`); // 20 days old and not an open incident
    expect(html).not.toContain(`id="update-${u.future}"`); // not published yet
    expect(html).not.toContain("Not yet");
  });

  test("an update's text is text: escaped, with its line breaks kept, never HTML", () => {
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("<b>line</b>");
    expect(html).toContain(`<h3>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</h3>`);
    expect(html).toContain(`<div class="ubody">First line\nSecond &lt;b&gt;line&lt;/b&gt;\n\n  indented</div>`);
    const item = html.slice(at(`id="update-${u.open}"`), html.indexOf("</li>", at(`id="update-${u.open}"`)));
    expect(item).toContain("Identified");
    expect(item).toContain("Affects: Shop, API"); // in page order
  });

  test("monitors are in collapsible sections by group, by sort_order; the ungrouped last", () => {
    const sections = [...html.matchAll(/<details class="group" open><summary><span class="gname">([^<]+)<\/span>/g)].map((x) => unescape(x[1]!));
    expect(sections).toEqual(["Databases", "Web front", "Other services"]);
    const web = html.slice(at('<span class="gname">Web front'), at('<span class="gname">Other services'));
    expect(web.indexOf("<h3>Shop</h3>")).toBeLessThan(web.indexOf("<h3>API</h3>")); // page order within a group
    expect(web).not.toContain("<h3>Postgres</h3>");
  });

  test("the page offers its feed: <link rel=alternate> in the head and a link in the footer", () => {
    expect(html).toMatch(new RegExp(`<link rel="alternate" type="application/atom\\+xml" title="Acme" href="/s/${slug}/feed.atom">`));
    expect(html).toContain(`<a href="/s/${slug}/feed.atom">Atom feed</a>`);
  });

  test("the page's JSON carries the updates too", async () => {
    const json = await (await get(`/s/${slug}.json`)).json();
    expect(json.updates.open.map((x: { title: string }) => x.title)).toEqual([EVIL, "Still investigating"]);
    expect(json.updates.recent.map((x: { title: string }) => x.title)).toEqual(["Slow checkout", "Database upgrade"]);
  });

  test("a page whose monitors are in no group shows one plain list, as before", async () => {
    const plain = await createMonitor(s, httpAttrs({ name: "Plain" }));
    await createStatusPage(s, { name: "Plain", slug: "plain", monitor_ids: [plain] });
    const text = await (await get("/s/plain")).text();
    expect(text).toContain("<h3>Plain</h3>");
    expect(text).not.toContain('class="group"');
  });
});

describe("the Atom feed", () => {
  let xml = "";
  let feed: ParsedFeed;
  beforeAll(async () => {
    const res = await get(`/s/${slug}/feed.atom`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=30");
    xml = await res.text();
    feed = await parseFeed(xml, `${BASE_URL}/s/${slug}/feed.atom`);
  });

  test("is valid Atom: the feed's id, title, updated, links and author", () => {
    expect(feed.meta["#type"]).toBe("atom");
    expect(feed.meta.title).toBe("Acme");
    expect(feed.meta.description).toBe("How we are doing");
    expect(feed.meta.link).toBe(`${BASE_URL}/s/${slug}`);
    expect(feed.meta["atom:id"]["#"]).toBe(`tag:status.acme.test,${new Date().toISOString().slice(0, 10)}:vigil/status-page/${pageId}`);
    expect(feed.meta.date).toBeInstanceOf(Date);
    expect(feed.meta.author).toBe("Acme");
    const self = feed.meta["atom:link"].find((l: any) => l["@"].rel === "self");
    expect(self["@"].href).toBe(`${BASE_URL}/s/${slug}/feed.atom`);
  });

  test("holds the published updates and Vigil's incidents, newest first, each with a unique id, dates and a link", () => {
    const ids = feed.items.map((i) => i.guid);
    expect(new Set(ids).size).toBe(ids.length);
    const titles = feed.items.map((i) => i["atom:title"]["#"]);
    // every published update (old ones too), none from the future, both incidents
    expect(titles.sort()).toEqual([EVIL, "Database upgrade", "Mail relay is down", "Old news", "Postgres is back up", "Slow checkout", "Still investigating"].map((t, i) => (i === 0 ? `${t} [Identified]` : t)).map((t) => (t === "Slow checkout" ? "Slow checkout [Resolved]" : t === "Still investigating" ? "Still investigating [Investigating]" : t)).sort());
    const dates = feed.items.map((i) => (i.date as Date).getTime());
    expect(dates).toEqual([...dates].sort((a, b) => b - a));
    for (const item of feed.items) {
      expect(item.pubdate).toBeInstanceOf(Date);
      expect(item.link).toMatch(new RegExp(`^${BASE_URL}/s/${slug}#(update|incident)-\\d+$`));
      expect(item.guid).toMatch(new RegExp(`^tag:status\\.acme\\.test,\\d{4}-\\d{2}-\\d{2}:vigil/status-page/${pageId}/(update|incident)/\\d+$`));
    }
    const byLink = (key: string) => feed.items.find((i) => i.link.endsWith(`#${key}`))!;
    expect(byLink(`update-${u.maintenance}`)["atom:content"]["#"]).toBe("Saturday 02:00 UTC\n\nAffects: Postgres");
    expect(byLink(`update-${u.maintenance}`).categories).toEqual(["maintenance"]);
    // incidents say what visitors may read: the wording of the error code, never the check's message
    const incident = byLink(`incident-${u.incidentResolved}`)["atom:content"]["#"] as string;
    expect(incident).toContain("Connection refused");
    // plain text, as type="text" promises: times in words, no <time> markup shown as characters
    expect(incident).toMatch(/^Down from \d{4}-\d\d-\d\d \d\d:\d\d UTC for 1 h 0 min; back up at \d{4}-\d\d-\d\d \d\d:\d\d UTC\. Connection refused\.$/);
    expect(byLink(`incident-${u.incidentOpen}`)["atom:content"]["#"]).toMatch(/^Down since \d{4}-\d\d-\d\d \d\d:\d\d UTC\. Timed out\.$/);
    expect(xml).not.toContain("&lt;time");
    expect(xml).not.toContain("10.0.0.5");
    expect(xml).not.toContain("10.0.0.9");
  });

  test("a title with <script> is escaped in the XML and reads back as the same characters", () => {
    expect(xml).not.toContain("<script>");
    expect(xml).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;quotes&apos; [Identified]");
    const item = feed.items.find((i) => i.link.endsWith(`#update-${u.open}`))!;
    expect(item["atom:title"]["#"]).toBe(`${EVIL} [Identified]`);
    expect(item["atom:title"]["@"].type).toBe("text");
    expect(item["atom:content"]["#"]).toBe("First line\nSecond <b>line</b>\n\n  indented\n\nAffects: Shop, API");
  });

  test("characters XML cannot carry become U+FFFD instead of breaking the feed", async () => {
    // a title is one line and refuses control characters (422); a body may hold them
    expect((await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, { title: "bell \u0007 here", kind: "info" })).status).toBe(422);
    const id = Number((await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, { title: "bell here", kind: "info", body: "bell \u0007 form\u000cfeed" })).json.data.id);
    const text = await (await get(`/s/${slug}/feed.atom`)).text();
    const parsed = await parseFeed(text, `${BASE_URL}/s/${slug}/feed.atom`);
    const item = parsed.items.find((i) => i.link.endsWith(`#update-${id}`))!;
    expect(item["atom:content"]["#"]).toBe("bell \uFFFD form\uFFFDfeed");
    await s.api("DELETE", `/api/v1/status-pages/${pageId}/updates/${id}`);
  });

  test("50 entries at most, the newest", async () => {
    const mon = await createMonitor(s, httpAttrs({ name: "busy" }));
    const busy = await createStatusPage(s, { name: "Busy", slug: "busy", monitor_ids: [mon] });
    const start = Date.now() - 60 * 60_000;
    for (let i = 0; i < 55; i++) {
      const res = await s.api("POST", `/api/v1/status-pages/${busy}/updates`, { title: `note ${i}`, kind: "info", published_at: new Date(start + i * 60_000).toISOString() });
      expect(res.status).toBe(201);
    }
    const parsed = await parseFeed(await (await get("/s/busy/feed.atom")).text(), `${BASE_URL}/s/busy/feed.atom`);
    expect(parsed.items).toHaveLength(50);
    expect(parsed.items[0]!.title).toBe("note 54");
    expect(parsed.items[49]!.title).toBe("note 5");
  });

  test("a custom domain serves the feed at /feed.atom", async () => {
    const mon = await createMonitor(s, httpAttrs({ name: "custom" }));
    await verifyDomain(s, dns, await createStatusPage(s, { name: "Custom", slug: "custom-feed", custom_domain: "status.custom.test", monitor_ids: [mon] }));
    const res = await get("/feed.atom", { host: "status.custom.test" });
    expect(res.status).toBe(200);
    expect((await parseFeed(await res.text(), `${BASE_URL}/s/custom-feed/feed.atom`)).meta.title).toBe("Custom");
    const page = await (await get("/", { host: "status.custom.test" })).text();
    expect(page).toContain('<link rel="alternate" type="application/atom+xml" title="Custom" href="/feed.atom">');
  });
});

describe("private and token-protected pages offer no feed", () => {
  test("their feed answers 404 (even with the token, even to their owners) and their page has no alternate link", async () => {
    const mon = await createMonitor(s, httpAttrs({ name: "hidden" }));
    const secret = await createStatusPage(s, { name: "Secret", slug: "secret", is_token_protected: true, access_token: "a-long-access-token-1234", monitor_ids: [mon] });
    const priv = await createStatusPage(s, { name: "Private", slug: "private", is_public: false, monitor_ids: [mon] });
    await s.api("POST", `/api/v1/status-pages/${secret}/updates`, { title: "secret news", kind: "info" });
    await s.api("POST", `/api/v1/status-pages/${priv}/updates`, { title: "private news", kind: "info" });
    for (const path of ["/s/secret/feed.atom", "/s/secret/feed.atom?token=a-long-access-token-1234", "/s/private/feed.atom", "/s/no-such-page/feed.atom"]) {
      const res = await get(path);
      const text = await res.text();
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(text).not.toContain("news");
    }
    await addUser(s, "owner");
    const owner = await signedInClient(s, "owner");
    expect((await owner.get("/s/private/feed.atom")).res.status).toBe(404);
    const own = await owner.get("/s/private");
    expect(own.res.status).toBe(200);
    expect(own.text).toContain("private news");
    expect(own.text).not.toContain("application/atom+xml");
    expect(own.text).not.toContain("Atom feed");
    const withToken = await get("/s/secret?token=a-long-access-token-1234");
    const cookie = withToken.headers.get("set-cookie")!.split(";")[0]!;
    const viaCookie = await (await get("/s/secret", { cookie })).text();
    expect(viaCookie).toContain("secret news");
    expect(viaCookie).not.toContain("application/atom+xml");
  });
});
