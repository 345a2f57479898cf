import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bucketStart, DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { DAILY_WATERMARK, HOURLY_WATERMARK, setWatermark } from "../../src/store/rollups.ts";
import { createMonitor, createStatusPage, httpAttrs, VALID_BY_TYPE } from "../api/fixtures.ts";
import { createHeartbeat, ping } from "../helpers/heartbeat.ts";
import { makeAccount, startTestServer, startupMaintenanceDone, waitFor, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, unescape, WebClient } from "./helpers.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { startDomainDns, verifyDomain, type DomainDns } from "../helpers/custom-domains.ts";

let s: TestServer;
let dns: DomainDns;
beforeAll(async () => {
  dns = await startDomainDns();
  s = await startTestServer(dns.flags);
  // the server's maintenance runs once at start, on SQLite on its worker once that has started:
  // rollups seeded while it runs are recomputed from the raw checks, which these tests do not have
  expect(await startupMaintenanceDone(s)).toBe(true);
});
afterAll(async () => {
  await s.stop();
  await dns.close();
});

/** Seeds a monitor's shown state without running checks: paused at creation, then unpaused in the row. */
async function seedState(id: number, state: string): Promise<void> {
  // not due for an hour: a scheduler that reloads the monitors (the instances' share on PostgreSQL)
  // must not check it and replace the state the test set
  await s.ctx.db.updateTable("monitors").set({ is_paused: 0, last_status: state, next_run_at: Date.now() + 3_600_000 }).where("id", "=", id).execute();
}

async function page(attrs: Record<string, unknown>): Promise<{ id: number; slug: string; token: string | null }> {
  const res = await s.api("POST", "/api/v1/status-pages", attrs);
  expect(res.status).toBe(201);
  return { id: Number(res.json.data.id), slug: res.json.data.attributes.slug, token: res.json.data.attributes.access_token };
}

const get = (path: string, headers: Record<string, string> = {}) => fetch(s.url + path, { redirect: "manual", headers });

describe("public page", () => {
  test("shows name, headline, description, overall state, each monitor's state, and escapes every user string", async () => {
    const evil = "<script>alert(1)</script>";
    const a = await createMonitor(s, httpAttrs({ name: `API ${evil}` }));
    const b = await createMonitor(s, httpAttrs({ name: "Website" }));
    await seedState(a, "up");
    await seedState(b, "down");
    const p = await page({ name: `Acme ${evil}`, headline: "Our services", description: `Desc ${evil}`, monitor_ids: [a, b] });
    const res = await get(`/s/${p.slug}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("<script>alert");
    expect(text).toContain("Acme &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(text).toContain("API &lt;script&gt;");
    expect(text).toContain("Our services");
    expect(text).toContain("Desc &lt;script&gt;");
    expect(text).toContain("Some systems are down");
    expect(text).toMatch(/<h3>Website<\/h3><span class="st st-down"><span aria-hidden="true">✖<\/span> Down<\/span>/);
    expect(text).toMatch(/<h3>API &lt;script&gt;alert\(1\)&lt;\/script&gt;<\/h3><span class="st st-up">/);
    // no inline script at all, and the CSP forbids it
    expect(text).not.toMatch(/<script(?![^>]*src=)/);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
  });

  test("public pages are cacheable with an ETag (304 on a match) and may be framed; the light theme is the default", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "cache" }));
    const p = await page({ name: "Cache me", monitor_ids: [m] });
    const res = await get(`/s/${p.slug}`);
    expect(res.headers.get("cache-control")).toBe("public, max-age=30");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^W\/".+"$/);
    expect(res.headers.get("x-frame-options")).toBeNull();
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors *");
    expect(await res.text()).toContain('data-theme="light"');
    const again = await get(`/s/${p.slug}`, { "if-none-match": etag });
    expect(again.status).toBe(304);
    // a change to the page changes the ETag
    await s.api("PATCH", `/api/v1/status-pages/${p.id}`, { headline: "changed" });
    expect((await get(`/s/${p.slug}`, { "if-none-match": etag })).status).toBe(200);
  });

  test("HEAD answers like GET without a body (uptime checkers probe status pages with HEAD)", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "head" }));
    const p = await page({ name: "Head me", monitor_ids: [m] });
    for (const [path, type] of [[`/s/${p.slug}`, "text/html"], [`/s/${p.slug}.json`, "application/json"], [`/s/${p.slug}/badge.svg`, "image/svg+xml"]] as const) {
      const res = await fetch(s.url + path, { method: "HEAD" });
      expect({ path, status: res.status, type: res.headers.get("content-type")?.split(";")[0], body: await res.text() }).toEqual({ path, status: 200, type, body: "" });
      expect(res.headers.get("etag")).toBeTruthy();
    }
    expect((await fetch(s.url + "/s/no-such-page", { method: "HEAD" })).status).toBe(404);
  });

  test("public_theme dark renders the dark theme", async () => {
    const p = await page({ name: "Dark one", public_theme: "dark" });
    expect(await (await get(`/s/${p.slug}`)).text()).toContain('data-theme="dark"');
  });

  test("is_enabled false answers 404 for the page, its badge and its JSON; an unknown slug too", async () => {
    const p = await page({ name: "Off", is_enabled: false });
    for (const path of [`/s/${p.slug}`, `/s/${p.slug}/badge.svg`, `/s/${p.slug}.json`, "/s/no-such-page", "/s/NOT_A_SLUG"]) expect((await get(path)).status).toBe(404);
  });

  test("the 90-day bar has one segment per day, coloured by the day's uptime from the rollups, with the date and % in a title", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "bars" }));
    const now = Date.now();
    const today = bucketStart(now, "d");
    const rollup = (daysAgo: number, up: number, down: number) => ({ monitor_id: m, granularity: "d" as const, bucket_start: today - daysAgo * DAY_MS, up_count: up, degraded_count: 0, down_count: down, latency_count: 0, latency_sum: 0 });
    await s.ctx.db.insertInto("check_rollups").values([rollup(1, 98, 2), rollup(2, 100, 0), rollup(3, 50, 50), rollup(4, 999, 1)]).execute();
    await setWatermark(s.ctx.db, DAILY_WATERMARK, today);
    await setWatermark(s.ctx.db, HOURLY_WATERMARK, today);
    const p = await page({ name: "Bars", monitor_ids: [m] });
    const text = await (await get(`/s/${p.slug}`)).text();
    const bar = /<ol class="bar"[^>]*>(.*?)<\/ol>/.exec(text)![1]!;
    const segments = [...bar.matchAll(/<li(?: class=(\w))? title="([^"]+)">/g)];
    expect(segments).toHaveLength(90);
    const day = (n: number) => new Date(today - n * DAY_MS).toISOString().slice(0, 10);
    const find = (n: number) => segments.find((x) => x[2]!.startsWith(day(n)))!;
    expect(find(1)[2]).toBe(`${day(1)}: 98.00%`);
    expect(find(1)[1]).toBe("c");
    expect(find(2)[2]).toBe(`${day(2)}: 100%`);
    expect(find(2)[1]).toBeUndefined();
    expect(find(3)[2]).toBe(`${day(3)}: 50.00%`);
    expect(find(3)[1]).toBe("d");
    expect(find(4)[2]).toBe(`${day(4)}: 99.90%`);
    expect(find(10)[2]).toBe(`${day(10)}: no data`);
    expect(find(10)[1]).toBe("n");
    expect(segments[89]![2]).toStartWith(day(0)); // today last
    // the period's figure: (98+100+50+999) of (100+100+100+1000) checks
    expect(text).toContain(`${(Math.floor(((98 + 100 + 50 + 999) / 1300) * 10000) / 100).toFixed(2)}% uptime`);
  });

  test("the sparkline draws hourly response times from rollups and raw checks", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "spark" }));
    const hour = bucketStart(Date.now(), "h");
    await setWatermark(s.ctx.db, HOURLY_WATERMARK, hour);
    await s.ctx.db.insertInto("check_rollups").values({ monitor_id: m, granularity: "h", bucket_start: hour - 2 * HOUR_MS, up_count: 2, degraded_count: 0, down_count: 0, latency_count: 2, latency_sum: 200 }).execute();
    await s.ctx.db.insertInto("checks").values({ monitor_id: m, region: "local", status: "up", checked_at: Date.now() - 1000, latency_ms: 300 }).execute();
    const p = await page({ name: "Spark", monitor_ids: [m] });
    const text = await (await get(`/s/${p.slug}`)).text();
    expect(text).toMatch(/<svg class="spark"[^>]*><path d="M[\d. ]+(h0.01)?M[\d. ]+(h0.01)?"\/><\/svg>/); // two lone hours: two dots
    expect(text).toContain("avg 167 ms, 24 h"); // (200 + 300) / 3
  });

  test("open and recent incidents are listed", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "flaky" }));
    const now = Date.now();
    const base = { account_id: 1, monitor_id: m, failure_count: 3, created_at: now, updated_at: now };
    await s.ctx.db.insertInto("incidents").values([
      { ...base, status: "open", started_at: now - 60_000, last_error_code: "connection_refused", last_error_message: "connect ECONNREFUSED" },
      { ...base, status: "resolved", started_at: now - DAY_MS, resolved_at: now - DAY_MS + 120_000, duration_ms: 120_000 },
    ]).execute();
    const p = await page({ name: "Incidents", monitor_ids: [m] });
    const text = await (await get(`/s/${p.slug}`)).text();
    expect(text).toContain("Ongoing incidents");
    expect(text).toContain("Connection refused");
    expect(text).toContain("for 2 min");
  });

  test("anonymous visitors read the plain wording of the error code, never the check's message; the dashboard keeps it", async () => {
    const leak = "got 500: <html>db-primary.internal 10.20.30.40:5432 password=hunter2</html>";
    const m = await createMonitor(s, httpAttrs({ name: "leaky" }));
    const now = Date.now();
    const base = { account_id: 1, monitor_id: m, failure_count: 2, created_at: now, updated_at: now };
    await s.ctx.db.insertInto("incidents").values([
      { ...base, status: "open", started_at: now - 60_000, last_error_code: "http_error", last_error_message: leak, last_http_code: 500 },
      { ...base, status: "resolved", started_at: now - HOUR_MS, resolved_at: now - HOUR_MS + 60_000, duration_ms: 60_000, last_error_code: "keyword_missing", last_error_message: `keyword not found in ${leak}` },
      { ...base, status: "resolved", started_at: now - 2 * HOUR_MS, resolved_at: now - 2 * HOUR_MS + 60_000, duration_ms: 60_000, last_error_code: "some_future_code", last_error_message: leak },
    ]).execute();
    const open = await page({ name: "Leak check", monitor_ids: [m] });
    const secret = await page({ name: "Leak check protected", monitor_ids: [m], is_token_protected: true });
    const bodies = [
      await (await get(`/s/${open.slug}`)).text(),
      await (await get(`/s/${open.slug}.json`)).text(),
      await (await get(`/s/${secret.slug}.json?token=${secret.token}`)).text(),
    ];
    for (const body of bodies) {
      for (const part of ["10.20.30.40", "db-primary", "hunter2", "got 500", "keyword not found"]) expect({ part, found: body.includes(part) }).toEqual({ part, found: false });
      expect(body).toContain("Unexpected HTTP response");
      expect(body).toContain("Expected content missing");
      expect(body).toContain("Check failed");
    }
    const json = JSON.parse(bodies[1]!);
    expect(json.incidents.open.map((i: { cause: string }) => i.cause)).toEqual(["Unexpected HTTP response"]);
    expect(json.incidents.recent.map((i: { cause: string }) => i.cause)).toEqual(["Expected content missing", "Check failed"]);
    // a signed-in user of the account sees the full message on the monitor's dashboard page
    await addUser(s, "leak-owner");
    const owner = await signedInClient(s, "leak-owner");
    expect(unescape((await owner.get(`/monitors/${m}`)).text)).toContain(leak);
  });
});

test("a page of the newer monitor types shows each one's state, and their failures in plain words, never the message", async () => {
  const types = ["websocket", "grpc", "smtp", "postgres", "mysql", "redis", "docker", "domain"];
  const ids: number[] = [];
  for (const [i, type] of types.entries()) {
    // run only by a probe region that does not exist here, so no check replaces the state set below
    const id = await createMonitor(s, { ...VALID_BY_TYPE[type], name: `Service ${type}`, is_paused: false, regions: ["elsewhere"] });
    await s.ctx.db.updateTable("monitors").set({ last_status: i % 2 === 0 ? "up" : "down" }).where("id", "=", id).execute();
    ids.push(id);
  }
  const leak = 'password authentication failed for user "monitor" at db-primary.internal:5432';
  const now = Date.now();
  const base = { account_id: 1, failure_count: 2, created_at: now, updated_at: now };
  await s.ctx.db.insertInto("incidents").values([
    { ...base, monitor_id: ids[3]!, status: "open", started_at: now - 60_000, last_error_code: "db_auth_failed", last_error_message: leak },
    { ...base, monitor_id: ids[6]!, status: "resolved", started_at: now - HOUR_MS, resolved_at: now - HOUR_MS + 60_000, duration_ms: 60_000, last_error_code: "container_not_running", last_error_message: "container nextcloud is exited (137)" },
  ]).execute();
  const p = await page({ name: "Homelab", monitor_ids: ids });
  const html = await (await get(`/s/${p.slug}`)).text();
  const json = await (await get(`/s/${p.slug}.json`)).json();
  for (const [i, type] of types.entries()) {
    expect(html).toMatch(new RegExp(`<h3>Service ${type}</h3><span class="st st-${i % 2 === 0 ? "up" : "down"}">`));
  }
  expect(json.monitors.map((m: { name: string; status: string }) => `${m.name} ${m.status}`)).toEqual(types.map((t, i) => `Service ${t} ${i % 2 === 0 ? "up" : "down"}`));
  for (const body of [html, JSON.stringify(json)]) {
    expect(body).toContain("Database login failed");
    expect(body).toContain("Container not running");
    for (const part of ["db-primary", "password authentication", "exited (137)"]) expect({ part, found: body.includes(part) }).toEqual({ part, found: false });
  }
});

describe("a heartbeat ping just acknowledged", () => {
  test("counts at once on the public page and in the dashboard's uptime, while it still waits in the ping journal", async () => {
    const m = await createHeartbeat(s, { periodSec: 600, graceSec: 60 });
    const p = await page({ name: "Nightly jobs", monitor_ids: [m.id] });
    // a failure (a down check), a ping that brings the monitor up (written directly: it was down),
    // then a run: /start, and a plain ping on an up monitor, which goes to the ping journal with
    // the run's time as its check's latency
    for (const suffix of ["/fail", "", "/start", ""]) expect((await ping(s.url, m.token, { suffix })).json).toEqual({ result: "accepted" });
    // acknowledged, not folded yet (SQLite's ping journal; PostgreSQL writes each batch directly)
    if (TEST_ENGINE === "sqlite") expect(s.ctx.pings.lastPingAt(m.id)).toBeDefined();

    const json = await (await get(`/s/${p.slug}.json`)).json();
    // two up checks of three, and the journaled one's latency: not one of two, and no latency
    // a heartbeat has no response time: the page shows none (its checks' latency is a run's length)
    expect(json.monitors).toEqual([{ name: "job", status: "up", uptime_90d: 66.6666, avg_latency_ms_24h: null, maintenance_until: null }]);
    expect(s.ctx.pings.lastPingAt(m.id)).toBeUndefined(); // reading it folded it

    const m2 = await createHeartbeat(s, { name: "job 2", periodSec: 600, graceSec: 60 });
    for (const suffix of ["/fail", "", ""]) expect((await ping(s.url, m2.token, { suffix })).json).toEqual({ result: "accepted" });
    if (TEST_ENGINE === "sqlite") expect(s.ctx.pings.lastPingAt(m2.id)).toBeDefined();
    await addUser(s, "uptime-reader");
    const reader = await signedInClient(s, "uptime-reader");
    expect((await reader.get(`/monitors/${m2.id}`)).text).toContain("<dt>Uptime 24 h</dt><dd>66.66%</dd>");
  });
});

describe("badge and JSON", () => {
  test.each([
    ["up", "#1a7f37"],
    ["degraded", "#8a5a00"],
    ["down", "#c62828"],
  ])("badge.svg says 'status | %s' in its colour", async (state, colour) => {
    const m = await createMonitor(s, httpAttrs({ name: `badge-${state}` }));
    await seedState(m, state);
    const p = await page({ name: `Badge ${state}`, monitor_ids: [m] });
    const res = await get(`/s/${p.slug}/badge.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml");
    expect(res.headers.get("cache-control")).toBe("public, max-age=30");
    const svg = await res.text();
    expect(svg).toContain(`<title>status: ${state}</title>`);
    expect(svg).toContain(`fill="${colour}"`);
    const labelled = await (await get(`/s/${p.slug}/badge.svg?label=<b>api</b>`)).text();
    expect(labelled).toContain("&lt;b&gt;api&lt;/b&gt;: " + state);
  });

  test(".json summarises the page for machines, with CORS for public pages", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "json-mon" }));
    await seedState(m, "degraded");
    const p = await page({ name: "Json", headline: "h", monitor_ids: [m] });
    const res = await get(`/s/${p.slug}.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = await res.json();
    expect(body.page).toEqual({ name: "Json", slug: p.slug, headline: "h", description: null });
    expect(body.status).toBe("degraded");
    expect(body.monitors).toEqual([{ name: "json-mon", status: "degraded", uptime_90d: null, avg_latency_ms_24h: null, maintenance_until: null }]);
    expect(body.incidents).toEqual({ open: [], recent: [] });
    expect(body.maintenance).toEqual([]);
  });
});

describe("maintenance windows", () => {
  const iso = (t: number) => new Date(t).toISOString();
  const win = async (attrs: Record<string, unknown>) => {
    const r = await s.api("POST", "/api/v1/maintenance-windows", attrs);
    expect(r.status).toBe(201);
    return r.json.data.attributes;
  };

  test("a monitor in an active window shows under maintenance, even down; windows of the next 7 days are listed, others not", async () => {
    const evil = "<b>now</b>";
    const a = await createMonitor(s, httpAttrs({ name: "Database" }));
    const b = await createMonitor(s, httpAttrs({ name: "Website" }));
    const elsewhere = await createMonitor(s, httpAttrs({ name: "Not on the page" }));
    await seedState(a, "down");
    await seedState(b, "up");
    const p = await page({ name: "Maint page", monitor_ids: [a, b] });
    const now = Date.now();
    const active = await win({ name: `Upgrade ${evil}`, description: "Postgres 17\nexpect a short outage", monitor_ids: [a, elsewhere], starts_at: iso(now - 60_000), ends_at: iso(now + 3_600_000) });
    const nightly = await win({ name: "Nightly backup", monitor_ids: [b], schedule: `${new Date(now + 2 * 3_600_000).getUTCMinutes()} ${new Date(now + 2 * 3_600_000).getUTCHours()} * * *`, duration_sec: 900 });
    await win({ name: "Far away", monitor_ids: [b], starts_at: iso(now + 8 * 86_400_000), ends_at: iso(now + 8 * 86_400_000 + 3_600_000) });
    await win({ name: "Only elsewhere", monitor_ids: [elsewhere], starts_at: iso(now + 3_600_000), ends_at: iso(now + 7_200_000) });
    await win({ name: "Switched off", is_enabled: false, monitor_ids: [b], starts_at: iso(now + 3_600_000), ends_at: iso(now + 7_200_000) });

    const text = await (await get(`/s/${p.slug}`)).text();
    expect(text).toMatch(/<h3>Database<\/h3><span class="st st-paused"><span aria-hidden="true">⚙<\/span> Maintenance<\/span>/);
    const until = new Date(Date.parse(active.ends_at)).toISOString().slice(0, 16).replace("T", " ") + " UTC";
    // a <time> the page's script shows in the visitor's zone; UTC without it
    expect(text).toMatch(new RegExp(`<p class="maint">Under maintenance until <time datetime="${new Date(Date.parse(active.ends_at)).toISOString()}"[^>]*>${until}</time></p>`));
    // planned and announced: no alarm for the service under maintenance
    expect(text).toContain("All systems operational");
    expect(text).toContain('<h2 id="maint-h">Maintenance</h2>');
    expect(text).toContain("Upgrade &lt;b&gt;now&lt;/b&gt;</strong> — ");
    expect(text).toMatch(new RegExp(`under way, until <time [^>]*>${until}</time>`));
    expect(text).toContain("Affects Database<"); // the page's monitors only
    expect(text).toContain("Postgres 17\nexpect a short outage");
    const from = nightly.next_starts_at.slice(0, 16).replace("T", " ") + " UTC";
    expect(text).toMatch(new RegExp(`<strong>Nightly backup</strong> — from <time [^>]*>${from}</time> to `));
    for (const hidden of ["Far away", "Only elsewhere", "Switched off", "Not on the page"]) expect(text).not.toContain(hidden);

    const json = await (await get(`/s/${p.slug}.json`)).json();
    expect(json.status).toBe("up");
    expect(json.monitors.map((m: Record<string, unknown>) => [m.name, m.status, m.maintenance_until])).toEqual([
      ["Database", "maintenance", active.ends_at],
      ["Website", "up", null],
    ]);
    expect(json.maintenance).toEqual([
      { name: `Upgrade ${evil}`, description: "Postgres 17\nexpect a short outage", starts_at: active.starts_at, ends_at: active.ends_at, active: true, monitors: ["Database"] },
      { name: "Nightly backup", description: null, starts_at: nightly.next_starts_at, ends_at: nightly.next_ends_at, active: false, monitors: ["Website"] },
    ]);
  });
});

describe("token-protected pages", () => {
  test("refused without the token (401), with a wrong one (401); ?token= sets a scoped HttpOnly cookie and redirects to the clean URL", async () => {
    const p = await page({ name: "Secret ops", is_token_protected: true });
    expect(p.token).toBeTruthy();
    const none = await get(`/s/${p.slug}`);
    expect(none.status).toBe(401);
    expect(none.headers.get("cache-control")).toBe("private, no-store");
    const noneText = await none.text();
    expect(noneText).toContain("Access token required");
    expect(noneText).not.toContain(p.token!);
    expect((await get(`/s/${p.slug}?token=wrong-token-123`)).status).toBe(401);
    expect((await get(`/s/${p.slug}.json`)).status).toBe(401);
    expect((await get(`/s/${p.slug}/badge.svg`)).status).toBe(401);

    const ok = await get(`/s/${p.slug}?token=${p.token}`);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe(`/s/${p.slug}`);
    const cookie = ok.headers.getSetCookie()[0]!;
    expect(cookie).toContain(`Path=/s/${p.slug}`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).not.toContain(p.token!); // the cookie holds a hash, not the token
    const pair = cookie.split(";")[0]!;
    const withCookie = await get(`/s/${p.slug}`, { cookie: pair });
    expect(withCookie.status).toBe(200);
    expect(withCookie.headers.get("cache-control")).toBe("private, no-store");
    expect(withCookie.headers.get("x-frame-options")).toBe("DENY");
    expect(await withCookie.text()).toContain("<h1>Secret ops</h1>");
    // embeds: the token in the query, or the cookie under the page's path
    expect((await get(`/s/${p.slug}.json?token=${p.token}`)).status).toBe(200);
    expect((await get(`/s/${p.slug}/badge.svg`, { cookie: pair })).status).toBe(200);

    // a new token makes the old cookie worthless
    await s.api("PATCH", `/api/v1/status-pages/${p.id}`, { access_token: "a-brand-new-token" });
    expect((await get(`/s/${p.slug}`, { cookie: pair })).status).toBe(401);
  });
});

describe("access token guesses", () => {
  // behind a trusted proxy on loopback, X-Forwarded-For names the client, so one test plays many
  let p: TestServer;
  beforeAll(async () => {
    p = await startTestServer(["--trusted-proxy", "127.0.0.1"]);
  });
  afterAll(() => p.stop());

  const protectedPage = async (name: string) => {
    const res = await p.api("POST", "/api/v1/status-pages", { name, is_token_protected: true });
    return { id: Number(res.json.data.id), slug: res.json.data.attributes.slug as string, token: res.json.data.attributes.access_token as string };
  };
  const from = (ip: string, path: string) => fetch(p.url + path, { redirect: "manual", headers: { "x-forwarded-for": ip } });

  test("10 wrong guesses from one client IP in 5 minutes: the next is 429 with Retry-After, even with the right token; other clients are not affected", async () => {
    const page = await protectedPage("Guarded");
    for (let i = 0; i < 10; i++) expect((await from("203.0.113.7", `/s/${page.slug}?token=wrong-guess-${i}-xxxxxxxx`)).status).toBe(401);
    for (const path of [`/s/${page.slug}?token=wrong-again-xxxxxxxxxx`, `/s/${page.slug}?token=${page.token}`, `/s/${page.slug}.json?token=${page.token}`, `/s/${page.slug}/badge.svg?token=${page.token}`]) {
      const res = await from("203.0.113.7", path);
      expect({ path, status: res.status }).toEqual({ path, status: 429 });
      const retry = Number(res.headers.get("retry-after"));
      expect(retry >= 1 && retry <= 300).toBe(true);
    }
    const page429 = await (await from("203.0.113.7", `/s/${page.slug}?token=${page.token}`)).text();
    expect(page429).toContain("Too many wrong access tokens");
    // another client, and the cookie of a visitor who already got in, still work
    const other = await from("203.0.113.8", `/s/${page.slug}?token=${page.token}`);
    expect(other.status).toBe(303);
    const cookie = other.headers.getSetCookie()[0]!.split(";")[0]!;
    expect((await fetch(p.url + `/s/${page.slug}`, { headers: { cookie, "x-forwarded-for": "203.0.113.7" } })).status).toBe(200);
    // the limit is on wrong guesses: right tokens never count
    for (let i = 0; i < 12; i++) expect((await from("203.0.113.9", `/s/${page.slug}.json?token=${page.token}`)).status).toBe(200);
  });

  test("wrong guesses from many addresses never refuse the right token from another: each guesser is limited, not the page", async () => {
    const page = await protectedPage("Targeted");
    for (let i = 0; i < 100; i++) expect((await from(`198.51.100.${Math.floor(i / 10) + 1}`, `/s/${page.slug}.json?token=guess-${i}-xxxxxxxxxx`)).status).toBe(401);
    const guesser = await from("198.51.100.1", `/s/${page.slug}.json?token=guess-again-xxxxxxxxxx`);
    expect(guesser.status).toBe(429);
    expect(((await guesser.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    expect((await from("198.51.100.200", `/s/${page.slug}.json?token=${page.token}`)).status).toBe(200);
    expect((await from("198.51.100.200", `/s/${page.slug}?token=${page.token}`)).status).toBe(303);
  });

  test("an IPv6 client is limited by its /64: another address of it is refused, another /64 is not", async () => {
    const page = await protectedPage("Walked");
    for (let i = 0; i < 10; i++) expect((await from(`2001:db8:5:6::${i + 1}`, `/s/${page.slug}.json?token=guess-${i}-xxxxxxxxxx`)).status).toBe(401);
    expect((await from("2001:db8:5:6:ffff::1", `/s/${page.slug}.json?token=guess-x-xxxxxxxxxx`)).status).toBe(429);
    expect((await from("2001:db8:5:6::99", `/s/${page.slug}.json?token=${page.token}`)).status).toBe(429);
    expect((await from("2001:db8:5:7::1", `/s/${page.slug}.json?token=${page.token}`)).status).toBe(200);
  });

  test("a token shorter than 16 characters set before that rule still opens its page; the editor says to replace it", async () => {
    const page = await protectedPage("Old short token");
    await p.ctx.db.updateTable("status_pages").set({ access_token: "old-8chr" }).where("id", "=", page.id).execute();
    expect((await from("192.0.2.50", `/s/${page.slug}.json?token=old-8chr`)).status).toBe(200);
    await addUser(p, "editor");
    const c = await signedInClient(p, "editor");
    expect((await c.get(`/status-pages/${page.id}/edit`)).text).toContain("shorter than 16 characters");
    const fresh = await protectedPage("New token");
    expect((await c.get(`/status-pages/${fresh.id}/edit`)).text).not.toContain("shorter than 16 characters");
  });
});

describe("private pages (is_public false)", () => {
  test("only signed-in users of the page's account see it: anonymous 401, another account's user 404", async () => {
    const p = await page({ name: "Internal", is_public: false });
    const anon = await get(`/s/${p.slug}`);
    expect(anon.status).toBe(401);
    expect(await anon.text()).toContain(`/login?next=%2Fs%2F${p.slug}`);
    await addUser(s, "owner");
    await makeAccount(s.ctx, "other-co");
    await addUser(s, "stranger", "other-co");
    const owner = await signedInClient(s, "owner");
    const mine = await owner.get(`/s/${p.slug}`);
    expect(mine.res.status).toBe(200);
    expect(mine.res.headers.get("cache-control")).toBe("private, no-store");
    expect(mine.text).toContain("<h1>Internal</h1>");
    expect((await owner.get(`/s/${p.slug}.json`)).res.status).toBe(200);
    const stranger = await signedInClient(s, "stranger");
    expect((await stranger.get(`/s/${p.slug}`)).res.status).toBe(404);
  });
});

describe("custom domain", () => {
  test("a request whose Host is the page's custom_domain gets the page at /, its badge and JSON", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "cd" }));
    await seedState(m, "up");
    await verifyDomain(s, dns, (await page({ name: "Custom", custom_domain: "status.acme.test", monitor_ids: [m] })).id);
    const res = await get("/", { host: "status.acme.test" });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("<h1>Custom</h1>");
    const head = await fetch(s.url + "/", { method: "HEAD", headers: { host: "status.acme.test" } });
    expect({ status: head.status, type: head.headers.get("content-type")?.split(";")[0] }).toEqual({ status: 200, type: "text/html" });
    expect(text).toContain('href="/status.json"');
    expect((await (await get("/badge.svg", { host: "status.acme.test:8080" })).text())).toContain("status: up");
    expect((await (await get("/status.json", { host: "STATUS.acme.test" })).json()).page.name).toBe("Custom");
    // the instance's own host still gets the dashboard (here: the sign-in redirect)
    expect((await get("/")).status).toBe(303);
  });
});

describe("size budget", () => {
  test("a page of 50 monitors with 90 days of history each stays under 100 KB on the wire", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push(await createMonitor(s, httpAttrs({ name: `Service number ${i} with a longish name` })));
    const today = bucketStart(Date.now(), "d");
    const rows = ids.flatMap((id) =>
      Array.from({ length: 89 }, (_, d) => ({ monitor_id: id, granularity: "d" as const, bucket_start: today - (d + 1) * DAY_MS, up_count: 1430 - (d % 7), degraded_count: 3, down_count: d % 7, latency_count: 1440, latency_sum: 1440 * 123 })),
    );
    for (let i = 0; i < rows.length; i += 500) await s.ctx.db.insertInto("check_rollups").values(rows.slice(i, i + 500)).execute();
    const hour = bucketStart(Date.now(), "h");
    const hourly = ids.flatMap((id) => Array.from({ length: 23 }, (_, h) => ({ monitor_id: id, granularity: "h" as const, bucket_start: hour - (h + 1) * HOUR_MS, up_count: 60, degraded_count: 0, down_count: 0, latency_count: 60, latency_sum: 60 * (100 + h * 7) })));
    for (let i = 0; i < hourly.length; i += 500) await s.ctx.db.insertInto("check_rollups").values(hourly.slice(i, i + 500)).execute();
    await setWatermark(s.ctx.db, DAILY_WATERMARK, today);
    await setWatermark(s.ctx.db, HOURLY_WATERMARK, hour);
    const p = await page({ name: "Big", monitor_ids: ids });
    const res = await fetch(`${s.url}/s/${p.slug}`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const wire = (await res.arrayBuffer()).byteLength;
    const html = await (await get(`/s/${p.slug}`, { "accept-encoding": "identity" })).text();
    console.log(`status page with 50 monitors: ${wire} bytes gzip, ${html.length} bytes uncompressed`);
    expect(wire).toBeLessThan(100 * 1024);
    expect([...html.matchAll(/<li class="mon">/g)]).toHaveLength(50);
    expect([...html.matchAll(/<li(?: class=\w)? title="/g)]).toHaveLength(50 * 90);
  });
});

test("unescape helper round-trips what the views escape", () => {
  expect(unescape("&lt;a href=&quot;x&quot;&gt;&#39;&amp;")).toBe(`<a href="x">'&`);
  expect(new WebClient("http://x").cookieHeader()).toBe("");
});
