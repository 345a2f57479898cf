/**
 * End to end in headless Chromium (Debian's `chromium` package) driven by playwright-core.
 * Without /usr/bin/chromium every test here fails with a message saying how to install it: a
 * missing browser must not look like a green run. `.ci/run` installs it with apt-get.
 *
 * Screenshots go to a temp directory; set VIGIL_SCREENSHOTS_DIR=docs/screenshots to refresh the
 * README's pictures.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { bucketStart, DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { DAILY_WATERMARK, HOURLY_WATERMARK, setWatermark } from "../../src/store/rollups.ts";
import { startTestServer, startupMaintenanceDone, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { launchChromium } from "./browser.ts";

const PASSWORD = "a-long-test-password";
const T = 30_000;

let s: TestServer;
let target: HttpTarget;
let browser: Browser;
let admin: BrowserContext;
const shotsDir = process.env.VIGIL_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), "vigil-shots-"));

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  // a realistic public address for the pictures; the browser itself talks to the loopback URL
  s = await startTestServer(["--base-url", "http://vigil.home.arpa:8080"]);
  // rollups seeded below while the start-up maintenance runs would be recomputed from no checks
  expect(await startupMaintenanceDone(s)).toBe(true);
  target = await startHttpTarget({ "/health": () => new Response("ok") });
  browser = await launchChromium();
  admin = await browser.newContext({ viewport: { width: 1280, height: 860 } });
}, T);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await target?.close();
  if (!process.env.VIGIL_SCREENSHOTS_DIR) rmSync(shotsDir, { recursive: true, force: true });
});

const shot = (page: Page, name: string, fullPage = false) => page.screenshot({ path: join(shotsDir, name), fullPage });

async function createMonitorInForm(page: Page, type: string, fields: Record<string, string>): Promise<number> {
  await page.goto(`${s.url}/monitors/new`);
  await page.getByRole("link", { name: new RegExp(`^${type}`, "i") }).click();
  for (const [label, value] of Object.entries(fields)) await page.getByLabel(label, { exact: true }).fill(value);
  await page.getByRole("button", { name: "Create monitor" }).click();
  await page.waitForURL(/\/monitors\/\d+\?msg=created$/);
  return Number(/\/monitors\/(\d+)/.exec(page.url())![1]);
}

/** History for the status page pictures: 90 days of rollups with a few bad days, a day of hourly latency. */
async function seedHistory(ids: number[]): Promise<void> {
  const today = bucketStart(Date.now(), "d");
  const hour = bucketStart(Date.now(), "h");
  for (const [n, id] of ids.entries()) {
    const days = Array.from({ length: 89 }, (_, d) => {
      const down = (d * 7 + n * 13) % 41 === 0 ? 40 : (d + n) % 17 === 0 ? 3 : 0;
      return { monitor_id: id, granularity: "d" as const, bucket_start: today - (d + 1) * DAY_MS, up_count: 1440 - down, degraded_count: 0, down_count: down, latency_count: 1440, latency_sum: 1440 * 80 };
    });
    const hours = Array.from({ length: 23 }, (_, h) => ({ monitor_id: id, granularity: "h" as const, bucket_start: hour - (h + 1) * HOUR_MS, up_count: 60, degraded_count: 0, down_count: 0, latency_count: 60, latency_sum: 60 * Math.round(60 + 40 * Math.sin((h + n) / 3) + n * 15) }));
    await s.ctx.db.insertInto("check_rollups").values([...days, ...hours]).execute();
  }
  await setWatermark(s.ctx.db, DAILY_WATERMARK, today);
  await setWatermark(s.ctx.db, HOURLY_WATERMARK, hour);
}

function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? ["255", "255", "255"]).map(Number);
  return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
}

describe("dashboard in a browser", () => {
  test("first-run setup signs the first user in", async () => {
    const page = await admin.newPage();
    await page.goto(s.url + "/");
    await page.waitForURL(/\/setup$/);
    await expect(page.getByRole("heading", { name: "Welcome to Vigil" }).isVisible()).resolves.toBe(true);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("Password again").fill(PASSWORD);
    await page.getByRole("button", { name: "Create user and sign in" }).click();
    await page.waitForURL(s.url + "/");
    expect(await page.getByRole("heading", { name: "Monitors" }).isVisible()).toBe(true);
    const cookies = await admin.cookies();
    const session = cookies.find((c) => c.name === "vigil_session")!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite).toBe("Lax");
    await page.close();
  }, T);

  test("a monitor created in one tab turns up, then turns up, live in the list of another; its detail opens", async () => {
    const list = await admin.newPage();
    await list.goto(s.url + "/");
    await list.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    const form = await admin.newPage();
    const id = await createMonitorInForm(form, "http", { Name: "Local API", Target: `${target.url}/health`, "Check every (seconds)": "10", "Give up after (milliseconds)": "2000" });
    const row = list.locator(`tr[data-monitor="${id}"]`);
    await row.locator(".st-up").waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain("Local API");
    expect(await row.textContent()).toContain("Up"); // text, not only colour
    expect(await list.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42); // no reload
    expect(await list.locator("[data-live-summary]").textContent()).toBe("1 monitor: 1 up, 0 degraded, 0 down, 0 other.");
    await shot(list, "dashboard.png");

    // an hour of earlier checks, so the detail's chart and table have something to show
    const now = Date.now();
    await s.ctx.db.insertInto("checks").values(Array.from({ length: 40 }, (_, i) => ({ monitor_id: id, region: "local", status: "up", checked_at: now - (i + 1) * 90_000, latency_ms: Math.round(40 + 25 * Math.sin(i / 4) + (i % 7) * 3), http_code: 200 }))).execute();
    await row.getByRole("link", { name: "Local API" }).click();
    await list.waitForURL(`${s.url}/monitors/${id}`);
    expect(await list.getByRole("heading", { name: "Local API" }).isVisible()).toBe(true);
    expect(await list.locator("svg.chart").count()).toBe(1);
    expect(await list.getByRole("table", { name: "Recent checks" }).locator("tbody tr").count()).toBeGreaterThan(0);
    await shot(list, "monitor-detail.png", true);
    await list.close();
    await form.close();
  }, T);

  test("the form shows the API's validation messages next to the fields", async () => {
    const page = await admin.newPage();
    await page.goto(`${s.url}/monitors/new?type=http`);
    await page.getByLabel("Name", { exact: true }).fill("Broken");
    await page.getByLabel("Target", { exact: true }).fill("ftp://example.com");
    await page.getByLabel("Check every (seconds)").fill("5");
    await page.getByRole("button", { name: "Create monitor" }).click();
    await page.locator("#form-errors").waitFor();
    const err = await page.locator("#f-target-err").textContent();
    const api = await s.api("POST", "/api/v1/monitors", { monitor_type: "http", name: "Broken", target: "ftp://example.com", interval_sec: 5, timeout_ms: 10000 });
    expect(err).toBe(`Target ${api.json.error.details.target[0]}`);
    expect(await page.locator("#f-target").getAttribute("aria-invalid")).toBe("true");
    await shot(page, "monitor-form.png", true);
    await page.close();
  }, T);

  test("a redis monitor's form asks for its password and user name, not an HTTP method; the password is never filled in again", async () => {
    const page = await admin.newPage();
    const id = await createMonitorInForm(page, "redis", { Name: "Cache", Target: "redis://127.0.0.1:9/0", "Give up after (milliseconds)": "2000", "User name": "vigil", Password: "redis-pw-in-browser" });
    await page.goto(`${s.url}/monitors/${id}/edit`);
    const password = page.getByLabel("Password", { exact: true });
    expect(await password.isVisible()).toBe(true);
    expect(await password.getAttribute("type")).toBe("password");
    expect(await password.inputValue()).toBe("");
    expect(await page.getByText("stored; leave empty to keep it").isVisible()).toBe(true);
    expect(await page.getByLabel("User name", { exact: true }).inputValue()).toBe("vigil");
    expect(await page.getByLabel("HTTP method").count()).toBe(0);
    expect(await page.content()).not.toContain("redis-pw-in-browser");
    await page.close();
  }, T);

  test("a heartbeat monitor shows its ping URL and timeline", async () => {
    const page = await admin.newPage();
    const id = await createMonitorInForm(page, "heartbeat", { Name: "Nightly backup", "Expected every (seconds)": "86400", "Grace (seconds)": "600" });
    const url = await page.getByRole("textbox", { name: "Ping URL" }).inputValue();
    expect(url).toMatch(new RegExp(`^${s.ctx.config.heartbeatUrl}/h/[A-Za-z0-9_-]{20,}$`));
    expect((await fetch(url.replace(s.ctx.config.heartbeatUrl, s.url))).status).toBe(200);
    await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status === "up");
    await page.reload();
    expect(await page.getByRole("table", { name: /Pings and state transitions/ }).textContent()).toContain("accepted");
    expect(await page.getByRole("button", { name: "Copy" }).isVisible()).toBe(true); // shown by the script
    await shot(page, "heartbeat-detail.png", true);
    await page.close();
  }, T);
});

describe("status pages in a browser", () => {
  let slug = "";
  test("a page made in the editor is seen by a signed-out visitor", async () => {
    const ids: number[] = [];
    for (const name of ["Website", "Payments API", "Search"]) {
      const r = await s.api("POST", "/api/v1/monitors", { name, monitor_type: "http", target: `${target.url}/health`, interval_sec: 60, timeout_ms: 2000 });
      ids.push(Number(r.json.data.id));
    }
    await seedHistory(ids);
    const page = await admin.newPage();
    await page.goto(`${s.url}/status-pages/new`);
    await page.getByLabel("Name", { exact: true }).fill("Acme Status");
    await page.getByLabel("Headline").fill("Live status of Acme's public services");
    for (const name of ["Local API", "Website", "Payments API", "Search"]) await page.getByLabel(name, { exact: true }).check();
    await page.getByRole("button", { name: "Create status page" }).click();
    await page.waitForURL(/\/status-pages\/\d+\/edit\?msg=created$/);
    slug = await page.getByLabel("Slug").inputValue();
    expect(slug).toBe("acme-status");
    await page.close();
    await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${ids[2]}`)).json.data.attributes.last_status === "up");

    const visitor = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const v = await visitor.newPage();
    const res = await v.goto(`${s.url}/s/${slug}`);
    expect(res!.status()).toBe(200);
    expect(await v.getByRole("heading", { name: "Acme Status" }).isVisible()).toBe(true);
    expect(await v.locator("li.mon").count()).toBe(4);
    expect(await v.locator("li.mon").first().locator("ol.bar li").count()).toBe(90);
    expect(await v.getByRole("status").textContent()).toContain("All systems operational");
    const bg = await v.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(luminance(bg)).toBeGreaterThan(0.8);
    await shot(v, "status-page-light.png", true);
    await visitor.close();
  }, T);

  test("the dark theme renders dark", async () => {
    const r = await s.api("POST", "/api/v1/status-pages", { name: "Acme Status (dark)", slug: "acme-dark", public_theme: "dark", headline: "Live status of Acme's public services", monitor_ids: (await s.api("GET", "/api/v1/monitors?per_page=100")).json.data.filter((m: any) => m.attributes.monitor_type === "http").map((m: any) => Number(m.id)) });
    expect(r.status).toBe(201);
    const visitor = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const v = await visitor.newPage();
    await v.goto(`${s.url}/s/acme-dark`);
    const bg = await v.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const text = await v.evaluate(() => getComputedStyle(document.body).color);
    expect(luminance(bg)).toBeLessThan(0.15);
    expect(luminance(text)).toBeGreaterThan(0.7);
    await shot(v, "status-page-dark.png", true);
    await visitor.close();
  }, T);

  test("a token-protected page refuses without the token and works with ?token=, then from its cookie", async () => {
    const r = await s.api("POST", "/api/v1/status-pages", { name: "Internal ops", slug: "internal-ops", is_token_protected: true });
    const token = r.json.data.attributes.access_token as string;
    const visitor = await browser.newContext();
    const v = await visitor.newPage();
    const refused = await v.goto(`${s.url}/s/internal-ops`);
    expect(refused!.status()).toBe(401);
    expect(await v.getByRole("heading", { name: "Access token required" }).isVisible()).toBe(true);
    // the form on the 401 page works without script
    await v.getByLabel("Access token").fill("not-the-token");
    await v.getByRole("button", { name: "View" }).click();
    expect(await v.getByRole("alert").textContent()).toContain("not valid");
    const ok = await v.goto(`${s.url}/s/internal-ops?token=${token}`);
    expect(ok!.status()).toBe(200);
    expect(v.url()).toBe(`${s.url}/s/internal-ops`); // the token left the address bar
    expect(await v.getByRole("heading", { name: "Internal ops" }).isVisible()).toBe(true);
    expect((await v.reload())!.status()).toBe(200);
    await visitor.close();
  }, T);

  test("the dashboard follows a dark system preference", async () => {
    const dark = await browser.newContext({ colorScheme: "dark", viewport: { width: 1280, height: 860 }, storageState: await admin.storageState() });
    const page = await dark.newPage();
    await page.goto(s.url + "/");
    const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(luminance(bg)).toBeLessThan(0.15);
    await shot(page, "dashboard-dark.png");
    await dark.close();
  }, T);
});
