/**
 * What a status page tells anonymous visitors beyond the states: per-monitor badges (status,
 * uptime, response time, certificate days), no response-time figures for heartbeat monitors, the
 * 90-day bar's figures in words, and never an internal address from a real failing check.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bucketStart, DAY_MS } from "../../src/domain/uptime.ts";
import { DAILY_WATERMARK, HOURLY_WATERMARK, setWatermark } from "../../src/store/rollups.ts";
import { BADGE_COLOURS, BADGE_LABEL_COLOUR } from "../../src/web/status/badge.ts";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { createHeartbeat, ping } from "../helpers/heartbeat.ts";
import { startTestServer, startupMaintenanceDone, waitFor, type TestServer } from "../helpers/server.ts";
import { closedPort } from "../helpers/targets.ts";
import { startDomainDns, verifyDomain, type DomainDns } from "../helpers/custom-domains.ts";

let s: TestServer;
let dns: DomainDns;
beforeAll(async () => {
  dns = await startDomainDns();
  s = await startTestServer(["--confirmations", "1", ...dns.flags]);
  // rollups seeded below while the start-up maintenance runs would be recomputed from no checks
  expect(await startupMaintenanceDone(s)).toBe(true);
});
afterAll(async () => {
  await s.stop();
  await dns.close();
});

async function page(attrs: Record<string, unknown>): Promise<{ id: number; slug: string; token: string | null }> {
  const res = await s.api("POST", "/api/v1/status-pages", attrs);
  expect(res.status).toBe(201);
  return { id: Number(res.json.data.id), slug: res.json.data.attributes.slug, token: res.json.data.attributes.access_token };
}

const get = (path: string, headers: Record<string, string> = {}) => fetch(s.url + path, { redirect: "manual", headers });
const title = (svg: string) => /<title>([^<]*)<\/title>/.exec(svg)?.[1];
const valueFill = (svg: string) => [...svg.matchAll(/<rect (?:x="\d+" )?width="\d+" height="20" fill="(#[0-9a-f]{3,6})"\/>/g)].map((m) => m[1]);

/** Paused at creation and unpaused in the row, not due for an hour: the state stays as set. */
async function seed(id: number, set: Record<string, unknown>): Promise<void> {
  await s.ctx.db.updateTable("monitors").set({ is_paused: 0, next_run_at: Date.now() + 3_600_000, ...set }).where("id", "=", id).execute();
}

function contrast(a: string, b: string): number {
  const lum = (hex: string) => {
    const h = hex.length === 4 ? hex.slice(1).split("").map((c) => c + c).join("") : hex.slice(1);
    const [r, g, bl] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

describe("per-monitor badges", () => {
  test("status, uptime (with ?days=), response time and certificate days of a monitor on the page, cacheable", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "badged", is_paused: true }));
    await seed(m, { last_status: "up", ssl_expiry_last_not_after: Date.now() + 20 * DAY_MS + 3_600_000, ssl_expiry_warn_days: 14 });
    const today = bucketStart(Date.now(), "d");
    const day = (ago: number, up: number, down: number) => ({ monitor_id: m, granularity: "d" as const, bucket_start: today - ago * DAY_MS, up_count: up, degraded_count: 0, down_count: down, latency_count: up, latency_sum: up * 80 });
    await s.ctx.db.insertInto("check_rollups").values([day(1, 100, 0), day(2, 100, 0), day(10, 50, 50)]).execute();
    await setWatermark(s.ctx.db, DAILY_WATERMARK, today);
    await setWatermark(s.ctx.db, HOURLY_WATERMARK, today);
    await s.ctx.db.insertInto("checks").values({ monitor_id: m, region: "local", status: "up", checked_at: Date.now() - 60_000, latency_ms: 120 }).execute();
    const p = await page({ name: "Badges", monitor_ids: [m] });

    const status = await get(`/s/${p.slug}/badge/${m}/status.svg`);
    expect(status.status).toBe(200);
    expect(status.headers.get("content-type")).toBe("image/svg+xml");
    expect(status.headers.get("cache-control")).toBe("public, max-age=30");
    expect(status.headers.get("etag")).toBeTruthy();
    const statusSvg = await status.text();
    expect(title(statusSvg)).toBe("status: up");
    expect(valueFill(statusSvg)).toEqual([BADGE_LABEL_COLOUR, BADGE_COLOURS.up]);

    // 30 days by default: the bad day 10 days ago counts; over 7 days it does not
    expect(title(await (await get(`/s/${p.slug}/badge/${m}/uptime.svg`)).text())).toBe("uptime 30d: 83.38%"); // 251 of 301: the rollups and the raw check of today
    const week = await (await get(`/s/${p.slug}/badge/${m}/uptime.svg?days=7`)).text();
    expect(title(week)).toBe("uptime 7d: 100%");
    expect(valueFill(week)).toContain(BADGE_COLOURS.up);
    expect(title(await (await get(`/s/${p.slug}/badge/${m}/uptime.svg?days=1000`)).text())).toBe("uptime 90d: 83.38%"); // the page's 90 days at most
    expect(title(await (await get(`/s/${p.slug}/badge/${m}/response.svg`)).text())).toBe("response: 120 ms");
    const cert = await (await get(`/s/${p.slug}/badge/${m}/cert.svg?label=tls`)).text();
    expect(title(cert)).toBe("tls: 20 days");
    expect(valueFill(cert)).toContain(BADGE_COLOURS.up);
    await seed(m, { ssl_expiry_last_not_after: Date.now() + 5 * DAY_MS + 3_600_000 });
    const soon = await (await get(`/s/${p.slug}/badge/${m}/cert.svg`)).text();
    expect(title(soon)).toBe("certificate: 5 days");
    expect(valueFill(soon)).toContain(BADGE_COLOURS.down);
  });

  test("only monitors the page shows; unknown kinds, ids and pages are 404; a protected page's badges need its token", async () => {
    const shown = await createMonitor(s, httpAttrs({ name: "shown" }));
    const other = await createMonitor(s, httpAttrs({ name: "not on the page" }));
    const p = await page({ name: "Only shown", monitor_ids: [shown] });
    expect((await get(`/s/${p.slug}/badge/${shown}/status.svg`)).status).toBe(200);
    for (const path of [`/s/${p.slug}/badge/${other}/status.svg`, `/s/${p.slug}/badge/${shown}/latency.svg`, `/s/${p.slug}/badge/0${shown}/status.svg`, `/s/no-such-page/badge/${shown}/status.svg`]) {
      const res = await get(path);
      expect({ path, status: res.status, type: res.headers.get("content-type") }).toEqual({ path, status: 404, type: "image/svg+xml" });
    }
    const locked = await page({ name: "Locked badges", monitor_ids: [shown], is_token_protected: true });
    expect((await get(`/s/${locked.slug}/badge/${shown}/status.svg`)).status).toBe(401);
    const ok = await get(`/s/${locked.slug}/badge/${shown}/status.svg?token=${locked.token}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("cache-control")).toBe("private, no-store");
  });

  test("on a page's custom domain at /badge/<id>/<kind>.svg", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "custom badge", is_paused: true }));
    await seed(m, { last_status: "down" });
    await verifyDomain(s, dns, (await page({ name: "Custom badges", custom_domain: "status.badges.test", monitor_ids: [m] })).id);
    expect(title(await (await get(`/badge/${m}/status.svg`, { host: "status.badges.test" })).text())).toBe("status: down");
    expect((await get(`/badge/${m}/status.svg`)).status).toBe(404); // the instance's own host has no page at /
  });

  test("white text reads at 4.5:1 or more on every badge colour (WCAG AA)", () => {
    for (const [tone, colour] of Object.entries({ ...BADGE_COLOURS, label: BADGE_LABEL_COLOUR })) expect({ tone, enough: contrast("#fff", colour) >= 4.5 }).toEqual({ tone, enough: true });
  });
});

describe("heartbeat monitors", () => {
  test("show no response time: no average, no sparkline, and its response badge says n/a", async () => {
    const hb = await createHeartbeat(s, { name: "nightly job", periodSec: 600, graceSec: 60 });
    for (const suffix of ["/start", ""]) expect((await ping(s.url, hb.token, { suffix })).json).toEqual({ result: "accepted" });
    const web = await createMonitor(s, httpAttrs({ name: "website" }));
    const p = await page({ name: "Jobs and site", monitor_ids: [hb.id, web] });
    const html = await (await get(`/s/${p.slug}`)).text();
    const items = html.split('<li class="mon">').slice(1);
    expect(items[0]).toContain("<h3>nightly job</h3>");
    expect(items[0]).not.toContain('class="spark"');
    expect(items[0]).not.toMatch(/avg \d+ ms|no response times/);
    expect(items[1]).toContain('class="spark"');
    expect(title(await (await get(`/s/${p.slug}/badge/${hb.id}/response.svg`)).text())).toBe("response: n/a");
  });
});

describe("the 90-day bar in words", () => {
  test("each day below 100% on its own, runs of perfect days and of days without checks as ranges, behind a disclosure", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "days" }));
    const today = bucketStart(Date.now(), "d");
    const day = (ago: number, up: number, down: number) => ({ monitor_id: m, granularity: "d" as const, bucket_start: today - ago * DAY_MS, up_count: up, degraded_count: 0, down_count: down, latency_count: 0, latency_sum: 0 });
    await s.ctx.db.insertInto("check_rollups").values([day(1, 100, 0), day(2, 100, 0), day(3, 98, 2), day(4, 100, 0)]).execute();
    await setWatermark(s.ctx.db, DAILY_WATERMARK, today);
    const p = await page({ name: "Days", monitor_ids: [m] });
    const html = await (await get(`/s/${p.slug}`)).text();
    const iso = (ago: number) => new Date(today - ago * DAY_MS).toISOString().slice(0, 10);
    const list = /<details class="days"><summary>Daily uptime<span class="sr-only"> of days<\/span><\/summary><ul>(.*?)<\/ul><\/details>/.exec(html)![1]!;
    expect([...list.matchAll(/<li>([^<]*)<\/li>/g)].map((x) => x[1])).toEqual([`${iso(89)} to ${iso(5)}: no checks`, `${iso(4)}: 100%`, `${iso(3)}: 98.00%`, `${iso(2)} to ${iso(1)}: 100%`, `${iso(0)}: no checks`]);
  });
});

describe("a real failing check", () => {
  test("its internal address reaches no page, JSON, badge or tooltip an anonymous visitor gets", async () => {
    const port = await closedPort();
    const m = await createMonitor(s, { monitor_type: "tcp", name: "database", target: `127.0.0.1:${port}`, interval_sec: 30, timeout_ms: 2000 });
    expect(await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${m}`)).json.data.attributes.last_status === "down")).toBe(true);
    const check = (await s.api("GET", `/api/v1/monitors/${m}/checks`)).json.data[0].attributes;
    expect(check.error_message).toContain("127.0.0.1"); // the dashboard keeps it
    const p = await page({ name: "Leak-free", monitor_ids: [m] });
    const bodies = await Promise.all([`/s/${p.slug}`, `/s/${p.slug}.json`, `/s/${p.slug}/badge.svg`, ...["status", "uptime", "response", "cert"].map((k) => `/s/${p.slug}/badge/${m}/${k}.svg`)].map(async (path) => ({ path, body: await (await get(path)).text() })));
    for (const { path, body } of bodies) expect({ path, leaks: body.includes("127.0.0.1") || body.includes(`:${port}`) }).toEqual({ path, leaks: false });
    expect(bodies[0]!.body).toContain("Connection refused");
  });
});
