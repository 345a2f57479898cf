/**
 * The maintenance window pages in headless Chromium (Debian's `chromium`, driven by playwright-core),
 * by clicking: reached from the navigation, a one-off window under way, a coming one and a recurring
 * one created in the form (monitors picked in the filtered list of checkboxes), a refused form that
 * keeps what was typed, an edit and a delete; the API agrees with what the pages did. At 1280 and
 * 390 px wide nothing scrolls sideways. Screenshots go to a temp directory, or to
 * VIGIL_SCREENSHOTS_DIR to keep them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { createMonitor, createStatusPage, httpAttrs } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signIn } from "./browser.ts";

const T = 30_000;
const shotsDir = process.env.VIGIL_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), "vigil-shots-"));

let s: TestServer;
let browser: Browser;
const monitorNames = ["Website", "Public API", "Database primary", "Database replica", "Mail relay", "Nightly backup job"];
const ids = new Map<string, number>();
let slug = "";

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  s = await startTestServer();
  for (const name of monitorNames) ids.set(name, await createMonitor(s, httpAttrs({ name, target: `https://${name.toLowerCase().replace(/ /g, "-")}.example.com/health` })));
  // shown as up and running without checking anything: not due for an hour
  await s.ctx.db.updateTable("monitors").set({ is_paused: 0, last_status: "up", next_run_at: Date.now() + 3_600_000 }).execute();
  slug = (await s.api("GET", `/api/v1/status-pages/${await createStatusPage(s, { name: "Acme status", monitor_ids: [...ids.values()] })}`)).json.data.attributes.slug;
  await addUser(s, "admin");
  browser = await launchChromium();
}, T);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  if (!process.env.VIGIL_SCREENSHOTS_DIR) rmSync(shotsDir, { recursive: true, force: true });
});

async function signedInPage(width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await signIn(page, s.url);
  return page;
}

const noSidewaysScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
const shot = (page: Page, name: string) => page.screenshot({ path: join(shotsDir, name), fullPage: true });
/** "YYYY-MM-DDTHH:MM" in UTC, what a datetime-local field holds for a window in UTC. */
const wall = (t: number) => new Date(t).toISOString().slice(0, 16);

async function pick(page: Page, names: string[]): Promise<void> {
  const filter = page.getByLabel("Find a monitor");
  for (const name of names) {
    await filter.fill(name.split(" ")[0]!.toLowerCase());
    await page.getByLabel(name, { exact: false }).check();
  }
  await filter.fill("");
}

describe("maintenance windows in a browser", () => {
  test("reached from the navigation; a window under way, a coming one and a recurring one made in the form", async () => {
    const page = await signedInPage(1280);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Maintenance" }).click();
    await page.waitForURL(`${s.url}/maintenance`);
    expect(await page.getByRole("heading", { name: "Maintenance windows" }).isVisible()).toBe(true);
    expect(await page.getByText("No maintenance under way.").isVisible()).toBe(true);

    // under way: from a minute ago for an hour, on both databases
    await page.getByRole("link", { name: "New window" }).click();
    await page.waitForURL(`${s.url}/maintenance/new`);
    await page.getByLabel("Name", { exact: true }).fill("Database upgrade");
    await page.getByLabel("Description").fill("PostgreSQL 17; writes pause for a few minutes");
    await page.getByLabel("Once").check();
    // the filter hides what does not match
    await page.getByLabel("Find a monitor").fill("data");
    expect(await page.locator("#monitor-choices .check:visible").count()).toBe(2);
    await page.getByLabel("Find a monitor").fill("zzz");
    expect(await page.getByText("No monitor matches.").isVisible()).toBe(true);
    await pick(page, ["Database primary", "Database replica"]);
    await page.getByLabel("Starts", { exact: true }).fill(wall(Date.now() - 60_000));
    await page.getByLabel("Ends", { exact: true }).fill(wall(Date.now() + 3_600_000));
    await shot(page, "form-1280.png");
    await page.getByRole("button", { name: "Create window" }).click();
    await page.waitForURL(`${s.url}/maintenance?msg=created`);
    const underWay = page.getByRole("region", { name: "Under way now" });
    expect(await underWay.getByText("Database upgrade").isVisible()).toBe(true);
    expect(await underWay.textContent()).toContain("Database primary, Database replica");

    // coming: tomorrow, on the website
    await page.getByRole("link", { name: "New window" }).click();
    await page.getByLabel("Name", { exact: true }).fill("CDN switch");
    await pick(page, ["Website"]);
    await page.getByLabel("Starts", { exact: true }).fill(wall(Date.now() + 86_400_000));
    await page.getByLabel("Ends", { exact: true }).fill(wall(Date.now() + 86_400_000 + 1_800_000));
    await page.getByRole("button", { name: "Create window" }).click();
    await page.waitForURL(/\/maintenance\?msg=created$/);

    // recurring: the one-off fields go away when "Repeatedly" is chosen
    await page.getByRole("link", { name: "New window" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Sunday patching");
    await page.getByLabel("Repeatedly, on a schedule").check();
    expect(await page.getByLabel("Starts", { exact: true }).isVisible()).toBe(false);
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    await page.getByLabel("Schedule (cron)").fill("0 3 * * 0");
    await page.getByLabel("Duration (minutes)").fill("90");
    await pick(page, ["Public API", "Mail relay"]);
    await shot(page, "form-recurring-1280.png");
    await page.getByRole("button", { name: "Create window" }).click();
    await page.waitForURL(/\/maintenance\?msg=created$/);
    const coming = page.getByRole("region", { name: "Coming up" });
    expect(await coming.textContent()).toContain("0 3 * * 0 for 1 h 30 min, Europe/Berlin");
    expect(await coming.textContent()).toContain("CDN switch");
    expect(await noSidewaysScroll(page)).toBe(true);
    await shot(page, "list-1280.png");

    const api = (await s.api("GET", "/api/v1/maintenance-windows")).json.data as { attributes: Record<string, any> }[];
    const byName = new Map(api.map((w) => [w.attributes.name, w.attributes]));
    expect(byName.get("Database upgrade")).toMatchObject({ is_active: true, monitor_ids: [ids.get("Database primary"), ids.get("Database replica")], description: "PostgreSQL 17; writes pause for a few minutes" });
    expect(byName.get("Sunday patching")).toMatchObject({ schedule: "0 3 * * 0", duration_sec: 5400, timezone: "Europe/Berlin", starts_at: null, monitor_ids: [ids.get("Public API"), ids.get("Mail relay")] });
    expect(byName.get("CDN switch")).toMatchObject({ is_active: false, monitor_ids: [ids.get("Website")] });
    // the monitors list shows the ones under way in maintenance
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Monitors" }).click();
    expect(await page.locator(`tr[data-monitor="${ids.get("Database primary")}"]`).textContent()).toContain("Maintenance");
    await page.close();
  }, 60_000);

  test("a refused form says what to fix and keeps what was typed; edit and delete", async () => {
    const page = await signedInPage(1280);
    await page.goto(`${s.url}/maintenance/new`);
    await page.getByLabel("Name", { exact: true }).fill("Half done");
    await page.getByLabel("Starts", { exact: true }).fill("2030-05-01T10:00");
    await page.getByLabel("Ends", { exact: true }).fill("2030-05-01T09:00");
    await page.getByRole("button", { name: "Create window" }).click();
    const summary = page.getByRole("alert");
    expect(await summary.textContent()).toContain("Please correct these 2 problems");
    expect(await summary.textContent()).toContain("Ends must be after the start");
    expect(await summary.textContent()).toContain("must not be empty");
    expect(await page.getByLabel("Name", { exact: true }).inputValue()).toBe("Half done");
    expect(await page.getByLabel("Starts", { exact: true }).inputValue()).toBe("2030-05-01T10:00");
    await shot(page, "form-errors-1280.png");

    await page.goto(`${s.url}/maintenance`);
    const card = page.locator("li.window", { hasText: "CDN switch" });
    await card.getByRole("link", { name: "Edit" }).click();
    await page.waitForURL(/\/maintenance\/\d+\/edit$/);
    expect(await page.getByLabel("Website").isChecked()).toBe(true);
    await page.getByLabel("Name", { exact: true }).fill("CDN provider switch");
    await pick(page, ["Public API"]);
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(/\/maintenance\?msg=saved$/);
    expect(await page.locator("li.window", { hasText: "CDN provider switch" }).textContent()).toContain("Website, Public API");

    await page.locator("li.window", { hasText: "CDN provider switch" }).getByRole("link", { name: "Delete" }).click();
    expect(await page.getByRole("heading", { name: "Delete maintenance window?" }).isVisible()).toBe(true);
    await page.getByRole("button", { name: "Delete maintenance window" }).click();
    await page.waitForURL(/\/maintenance\?msg=deleted$/);
    expect(await page.getByText("CDN provider switch").count()).toBe(0);
    const names = ((await s.api("GET", "/api/v1/maintenance-windows")).json.data as { attributes: { name: string } }[]).map((w) => w.attributes.name);
    expect(names.sort()).toEqual(["Database upgrade", "Sunday patching"]);
    await page.close();
  }, 60_000);

  test("at 390 px the list, the form and the status page fit the width", async () => {
    const page = await signedInPage(390);
    await page.goto(`${s.url}/maintenance`);
    expect(await noSidewaysScroll(page)).toBe(true);
    await shot(page, "list-390.png");
    await page.goto(`${s.url}/maintenance/new`);
    await page.getByLabel("Repeatedly, on a schedule").check();
    expect(await noSidewaysScroll(page)).toBe(true);
    await shot(page, "form-390.png");
    const card = await page.goto(`${s.url}/maintenance`).then(() => page.locator("li.window", { hasText: "Sunday patching" }));
    await card.getByRole("link", { name: "Edit" }).click();
    expect(await noSidewaysScroll(page)).toBe(true);

    // the public page: the databases under maintenance, the windows listed
    await page.goto(`${s.url}/s/${slug}`);
    expect(await page.getByText("Under maintenance until").count()).toBe(2);
    expect(await page.getByRole("heading", { name: "Maintenance" }).isVisible()).toBe(true);
    expect(await page.getByText("Sunday patching").isVisible()).toBe(true);
    expect(await noSidewaysScroll(page)).toBe(true);
    await shot(page, "status-page-390.png");
    await page.setViewportSize({ width: 1280, height: 900 });
    await shot(page, "status-page-1280.png");
    await page.close();
  }, 60_000);
});
