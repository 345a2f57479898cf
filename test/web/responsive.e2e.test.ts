/**
 * The dashboard and the status pages as a person on a desktop (1280 px) and on a phone (390 px)
 * uses them, in headless Chromium (Debian's `chromium`, as in browser.e2e.test.ts): no page scrolls
 * sideways or logs an error, the monitor page follows a state change without a reload, "Send test"
 * and "Create token" survive a reload without doing it again, focus goes to the error summary
 * after a failed submit, and axe-core finds no serious or critical accessibility violation.
 * Screenshots go to VIGIL_SCREENSHOTS_DIR, else a temp directory.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { bucketStart, DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { DAILY_WATERMARK, HOURLY_WATERMARK, setWatermark } from "../../src/store/rollups.ts";
import { createHeartbeat, ping } from "../helpers/heartbeat.ts";
import { startTestServer, startupMaintenanceDone, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signedInContext } from "./browser.ts";

const T = 60_000;
const AXE = readFileSync(join(import.meta.dir, "../../node_modules/axe-core/axe.min.js"), "utf8");
const WIDTHS = [1280, 390] as const;

let s: TestServer;
let target: HttpTarget;
let browser: Browser;
let healthy = true;
const ids = { http: 0, heartbeat: 0, page: 0, locked: 0, channel: 0 };
let slug = "";
/** read from the database: polling the API this often would meet its rate limit */
const stateOf = async (id: number) => (await s.ctx.db.selectFrom("monitors").select("last_status").where("id", "=", id).executeTakeFirstOrThrow()).last_status;
const shotsDir = process.env.VIGIL_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), "vigil-shots-"));

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  target = await startHttpTarget({
    "/health": () => new Response(healthy ? "ok" : "broken", { status: healthy ? 200 : 500 }),
    "/hook": () => new Response("thanks"),
  });
  // one failed check makes a monitor down here, so the state change comes with the next check
  s = await startTestServer(["--confirmations", "1"]);
  // rollups seeded below while the start-up maintenance runs would be recomputed from no checks
  expect(await startupMaintenanceDone(s)).toBe(true);
  await addUser(s, "admin");
  const http = await s.api("POST", "/api/v1/monitors", { monitor_type: "http", name: "Shop API with a rather long name", target: `${target.url}/health?with=a-long-query-string-that-does-not-fit`, interval_sec: 10, timeout_ms: 2000 });
  ids.http = Number(http.json.data.id);
  const hb = await createHeartbeat(s, { name: "Nightly backup", periodSec: 86_400, graceSec: 600 });
  ids.heartbeat = hb.id;
  for (const suffix of ["/start", ""]) await ping(s.url, hb.token, { suffix });
  const channel = await s.api("POST", "/api/v1/notification-channels", { channel_type: "webhook", name: "Team hook", url: `${target.url}/hook`, is_enabled: true });
  ids.channel = Number(channel.json.data.id);
  const page = await s.api("POST", "/api/v1/status-pages", { name: "Acme Status", slug: "acme", headline: "Our services", monitor_ids: [ids.http, ids.heartbeat] });
  ids.page = Number(page.json.data.id);
  slug = page.json.data.attributes.slug;
  // a group, so the groups page has a row to fit (no monitor in it: the list stays one table)
  await s.api("POST", "/api/v1/groups", { name: "Nightly jobs with a long group name", description: "Backups and reports", sort_order: 10 });
  const locked = await s.api("POST", "/api/v1/status-pages", { name: "Internal", slug: "internal", is_token_protected: true });
  ids.locked = Number(locked.json.data.id);
  await seedHistory(ids.http);
  // an hour of checks with a down spell, so the chart and the tables have rows to fit
  const now = Date.now();
  await s.ctx.db.insertInto("checks").values(Array.from({ length: 40 }, (_, i) => ({ monitor_id: ids.http, region: "local", status: i >= 12 && i < 16 ? "down" : "up", checked_at: now - (i + 1) * 90_000, latency_ms: i >= 12 && i < 16 ? null : 40 + (i % 7) * 9, http_code: i >= 12 && i < 16 ? 503 : 200, error_code: i >= 12 && i < 16 ? "http_error" : null, error_message: i >= 12 && i < 16 ? `HTTP 503 from ${target.url}/health?with=a-long-query-string-that-does-not-fit` : null }))).execute();
  expect(await waitFor(async () => (await stateOf(ids.http)) === "up", { timeoutMs: 20_000 })).toBe(true);
  browser = await launchChromium();
}, T);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await target?.close();
  if (!process.env.VIGIL_SCREENSHOTS_DIR) rmSync(shotsDir, { recursive: true, force: true });
});

async function seedHistory(id: number): Promise<void> {
  const today = bucketStart(Date.now(), "d");
  const hour = bucketStart(Date.now(), "h");
  const days = Array.from({ length: 60 }, (_, d) => {
    const down = d % 13 === 0 ? 30 : d % 5 === 0 ? 2 : 0;
    return { monitor_id: id, granularity: "d" as const, bucket_start: today - (d + 1) * DAY_MS, up_count: 1440 - down, degraded_count: 0, down_count: down, latency_count: 1440, latency_sum: 1440 * 60 };
  });
  const hours = Array.from({ length: 23 }, (_, h) => ({ monitor_id: id, granularity: "h" as const, bucket_start: hour - (h + 1) * HOUR_MS, up_count: 60, degraded_count: 0, down_count: 0, latency_count: 60, latency_sum: 60 * (50 + h) }));
  await s.ctx.db.insertInto("check_rollups").values([...days, ...hours]).execute();
  await setWatermark(s.ctx.db, DAILY_WATERMARK, today);
  await setWatermark(s.ctx.db, HOURLY_WATERMARK, hour);
}

const signedIn = (width: number, o: { bypassCSP?: boolean } = {}): Promise<BrowserContext> => signedInContext(browser, s.url, { viewport: { width, height: 860 }, bypassCSP: o.bypassCSP });

/** Every address a person reaches in the dashboard, and the status page's answers. */
function dashboardPaths(): string[] {
  return [
    "/",
    "/monitors/new",
    "/monitors/new?type=http",
    "/monitors/new?type=heartbeat",
    `/monitors/${ids.http}`,
    `/monitors/${ids.heartbeat}`,
    `/monitors/${ids.http}/edit`,
    `/monitors/${ids.http}/delete`,
    "/groups",
    "/status-pages",
    "/status-pages/new",
    `/status-pages/${ids.page}/edit`,
    `/status-pages/${ids.locked}/edit`,
    `/status-pages/${ids.page}/delete`,
    "/channels",
    "/channels/new?type=webhook",
    "/channels/new?type=email",
    `/channels/${ids.channel}/edit`,
    `/channels/${ids.channel}/delete`,
    "/tokens",
  ];
}
const publicPaths = () => ["/login", `/s/${slug}`, "/s/internal", "/s/no-such-page"];

/** Loads `path`; returns how wide the page is and what went wrong in its console or requests. */
async function visit(page: Page, path: string): Promise<{ path: string; scrollWidth: number; innerWidth: number; problems: string[] }> {
  const problems: string[] = [];
  const onConsole = (m: { type(): string; text(): string }) => {
    if (m.type() === "error" && !/status of 40[14]/.test(m.text())) problems.push(`console: ${m.text()}`);
  };
  const onResponse = (r: { status(): number; url(): string; request(): { resourceType(): string } }) => {
    if (r.status() >= 400 && r.request().resourceType() !== "document") problems.push(`${r.status()} ${r.url()}`);
  };
  page.on("console", onConsole);
  page.on("response", onResponse);
  await page.goto(s.url + path, { waitUntil: "load" });
  await page.waitForTimeout(50); // the deferred script's work: times rewritten, copy buttons shown
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  page.off("console", onConsole);
  page.off("response", onResponse);
  return { path, scrollWidth, innerWidth, problems };
}

describe("every page at 1280 and 390 pixels", () => {
  for (const width of WIDTHS) {
    test(`${width} px: no page scrolls sideways, none logs an error or a failed request (a favicon included)`, async () => {
      const context = await signedIn(width);
      const anonymous = await browser.newContext({ viewport: { width, height: 860 } });
      const page = await context.newPage();
      const visitor = await anonymous.newPage();
      const results = [];
      for (const path of dashboardPaths()) results.push(await visit(page, path));
      for (const path of publicPaths()) results.push(await visit(visitor, path));
      for (const r of results) expect({ path: r.path, fits: r.scrollWidth <= r.innerWidth, problems: r.problems }).toEqual({ path: r.path, fits: true, problems: [] });
      if (width === 390) {
        for (const [path, name] of [["/", "dashboard-phone.png"], [`/monitors/${ids.http}`, "monitor-detail-phone.png"], ["/tokens", "tokens-phone.png"]] as const) {
          await page.goto(s.url + path);
          await page.screenshot({ path: join(shotsDir, name), fullPage: true });
        }
        await visitor.goto(`${s.url}/s/${slug}`);
        await visitor.screenshot({ path: join(shotsDir, "status-page-phone.png"), fullPage: true });
      }
      await context.close();
      await anonymous.close();
    }, T);
  }
});

describe("the status page", () => {
  test("the 90-day bar fits its card at 390 px, and each day's figure is reached by keyboard", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 860 } });
    const page = await context.newPage();
    await page.goto(`${s.url}/s/${slug}`);
    const card = page.locator("li.mon").first();
    const [cardBox, barBox] = [await card.boundingBox(), await card.locator("ol.bar").boundingBox()];
    expect(barBox!.x).toBeGreaterThanOrEqual(cardBox!.x);
    expect(barBox!.x + barBox!.width).toBeLessThanOrEqual(cardBox!.x + cardBox!.width);
    // Tab to the first "Daily uptime" disclosure and open it with the keyboard
    let focused = "";
    for (let i = 0; i < 10 && focused !== "Daily uptime of Shop API with a rather long name"; i++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate(() => document.activeElement?.textContent ?? "");
    }
    expect(focused).toBe("Daily uptime of Shop API with a rather long name");
    await page.keyboard.press("Enter");
    const figures = card.locator("details.days li");
    expect(await figures.first().isVisible()).toBe(true);
    expect(await figures.filter({ hasText: /: 9\d\.\d\d%$/ }).count()).toBeGreaterThan(0);
    // the heartbeat monitor shows no response time
    expect(await page.locator("li.mon").nth(1).locator(".rt").count()).toBe(0);
    await context.close();
  }, T);
});

describe("the monitor page, live", () => {
  test("shows a state change without a reload: state, recent checks, chart and incidents, within 5 s of the change", async () => {
    const context = await signedIn(1280);
    const page = await context.newPage();
    await page.goto(`${s.url}/monitors/${ids.http}`);
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    const head = page.locator('[data-live-part="head"]');
    expect(await head.locator(".st-up").count()).toBe(1);
    // times read as relative and local, with UTC on hover
    const firstTime = page.locator('[data-live-part="checks"] time').first();
    expect(await firstTime.textContent()).toMatch(/ago$|^just now$/);
    expect(await firstTime.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await page.locator("svg.chart rect.down").count()).toBeGreaterThan(0); // the seeded down spell
    expect(await page.locator("svg.chart text[data-time]").count()).toBe(5);

    healthy = false;
    expect(await waitFor(async () => (await stateOf(ids.http)) === "down", { timeoutMs: 30_000 })).toBe(true);
    await head.locator(".st-down").waitFor({ timeout: 5_000 });
    expect(await page.locator('[data-live-part="checks"] tbody tr').first().locator(".st-down").count()).toBe(1);
    expect(await page.locator('[data-live-part="incidents"] tbody tr').first().locator(".st-down").count()).toBe(1);
    expect(await page.locator("[data-live-announce]").textContent()).toBe("State changed to down.");
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(7); // no reload
    await page.screenshot({ path: join(shotsDir, "monitor-detail-down.png"), fullPage: true });

    healthy = true;
    expect(await waitFor(async () => (await stateOf(ids.http)) === "up", { timeoutMs: 30_000 })).toBe(true);
    await head.locator(".st-up").waitFor({ timeout: 5_000 });
    expect(await page.locator('[data-live-part="incidents"] tbody tr').first().textContent()).toContain("Resolved");
    await context.close();
  }, T);
});

describe("forms that act, by clicking", () => {
  test("Send test sends once: the answer is shown after the redirect, and a reload sends nothing", async () => {
    const context = await signedIn(1280);
    const page = await context.newPage();
    await page.goto(`${s.url}/channels`);
    const hooks = () => target.requests.filter((r) => r.path === "/hook").length;
    const before = hooks();
    await page.getByRole("row", { name: /Team hook/ }).getByRole("button", { name: "Send test" }).click();
    await page.waitForURL(`${s.url}/channels`);
    expect(await page.getByRole("status").textContent()).toContain("Test sent to Team hook (answer 200).");
    expect(hooks()).toBe(before + 1);
    await page.reload();
    expect(await page.getByText("Test sent to Team hook").count()).toBe(0);
    expect(hooks()).toBe(before + 1);
    await context.close();
  }, T);

  test("Create token shows the token once after the redirect; a reload creates no other", async () => {
    const context = await signedIn(1280);
    const page = await context.newPage();
    await page.goto(`${s.url}/tokens`);
    const count = async () => (await s.ctx.db.selectFrom("api_tokens").select("id").where("label", "=", "backup script").execute()).length;
    await page.getByLabel("Label").fill("backup script");
    await page.getByRole("button", { name: "Create token" }).click();
    await page.waitForURL(`${s.url}/tokens`);
    const token = await page.getByRole("textbox", { name: "Value to copy" }).inputValue();
    expect(token).toMatch(/^vgl_/);
    expect(page.url()).not.toContain(token);
    expect(await count()).toBe(1);
    expect(await page.getByRole("button", { name: "Copy" }).isVisible()).toBe(true);
    await page.reload();
    expect(await page.getByRole("textbox", { name: "Value to copy" }).count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    expect(await count()).toBe(1);
    await context.close();
  }, T);

  test("after a failed submit the focus is on the error summary, whose links lead to the fields", async () => {
    const context = await signedIn(390);
    const page = await context.newPage();
    await page.goto(`${s.url}/monitors/new?type=http`);
    await page.getByLabel("Name", { exact: true }).fill("Broken");
    await page.getByLabel("Target", { exact: true }).fill("ftp://example.com");
    await page.getByRole("button", { name: "Create monitor" }).click();
    await page.locator("#form-errors").waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("form-errors");
    await page.locator("#form-errors a", { hasText: "Target" }).click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("f-target");
    await page.screenshot({ path: join(shotsDir, "monitor-form-phone.png"), fullPage: true });
    // the token form too
    await page.goto(`${s.url}/tokens`);
    for (const box of await page.getByRole("checkbox").all()) await box.uncheck();
    await page.getByRole("button", { name: "Create token" }).click();
    await page.locator("#form-errors").waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("form-errors");
    await context.close();
  }, T);
});

describe("axe-core", () => {
  test("finds no serious or critical violation on the main pages, in both widths", async () => {
    const found: { path: string; width: number; id: string; impact: string; nodes: string[] }[] = [];
    for (const width of WIDTHS) {
      // axe is injected by the test: the pages' CSP rightly refuses inline scripts
      const context = await signedIn(width, { bypassCSP: true });
      const anonymous = await browser.newContext({ viewport: { width, height: 860 }, bypassCSP: true });
      const pages: [Page, string][] = [
        [await anonymous.newPage(), "/login"],
        [await context.newPage(), "/"],
        [await context.newPage(), `/monitors/${ids.http}`],
        [await context.newPage(), `/monitors/${ids.heartbeat}`],
        [await context.newPage(), "/monitors/new?type=http"],
        [await context.newPage(), "/groups"],
        [await context.newPage(), `/status-pages/${ids.page}/edit`],
        [await context.newPage(), "/channels"],
        [await context.newPage(), "/tokens"],
        [await anonymous.newPage(), `/s/${slug}`],
      ];
      for (const [page, path] of pages) {
        await page.goto(s.url + path);
        await page.evaluate(AXE);
        const violations = await page.evaluate(async () => {
          const axe = (window as unknown as { axe: { run(o: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
          return (await axe.run({ resultTypes: ["violations"] })).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
        });
        for (const v of violations) if (v.impact === "serious" || v.impact === "critical") found.push({ path, width, ...v });
        await page.close();
      }
      await context.close();
      await anonymous.close();
    }
    expect(found).toEqual([]);
  }, T);
});
