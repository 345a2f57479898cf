/**
 * Groups, tags and status page updates in headless Chromium (Debian's `chromium`, driven by
 * playwright-core, as browser.e2e.test.ts): the list's sections stay as the person left them while
 * the list refreshes live, tag chips and the filter form drive the list, and the status page shows
 * its updates and groups. Pictures at 1280 and 390 px wide go to a temp directory, or to
 * VIGIL_SCREENSHOTS_DIR when set.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createMonitor, createStatusPage, httpAttrs } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signedInContext } from "./browser.ts";

const T = 30_000;
const WIDTHS = [1280, 390] as const;

let s: TestServer;
let browser: Browser;
const contexts = new Map<number, BrowserContext>();
const shotsDir = process.env.VIGIL_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), "vigil-shots-"));
let pageId = 0;
const groups: Record<string, number> = {};

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  s = await startTestServer(["--base-url", "http://vigil.home.arpa:8080"]);
  await addUser(s, "admin");
  for (const [name, sort_order] of [["Web front", 1], ["Databases", 2]] as const) groups[name] = Number((await s.api("POST", "/api/v1/groups", { name, sort_order, description: `${name} of the shop` })).json.data.id);
  const ids: number[] = [];
  for (const [name, group, tags] of [
    ["Shop", "Web front", ["env:prod", "critical"]],
    ["Payments API", "Web front", ["env:prod", "team/payments"]],
    ["Postgres primary", "Databases", ["env:prod", "critical"]],
    ["Postgres replica", "Databases", ["env:prod"]],
    ["Mail relay", null, ["env:prod"]],
  ] as const) {
    ids.push(await createMonitor(s, httpAttrs({ name, group_id: group ? groups[group] : null, tags: [...tags] })));
  }
  pageId = await createStatusPage(s, { name: "Acme Status", slug: "acme", headline: "Live status of Acme's services", monitor_ids: ids });
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, { title: "Card payments failing for some customers", kind: "incident", status: "identified", body: "Payments with some cards are refused.\nWe found the cause: an expired certificate at the payment provider.\n\nNext update within the hour.", affected_monitor_ids: [ids[1]], published_at: iso(now - 40 * 60_000) });
  await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, { title: "Database upgrade on Saturday", kind: "maintenance", body: "Saturday 02:00 to 03:00 UTC: the shop is read-only.", affected_monitor_ids: [ids[2], ids[3]], published_at: iso(now - 2 * 86_400_000) });
  await s.api("POST", `/api/v1/status-pages/${pageId}/updates`, { title: "Slow logins", kind: "incident", status: "resolved", body: "Resolved: a full disk.", published_at: iso(now - 5 * 86_400_000) });
  browser = await launchChromium();
  for (const width of WIDTHS) contexts.set(width, await signedInContext(browser, s.url, { viewport: { width, height: 860 } }));
}, T);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  if (!process.env.VIGIL_SCREENSHOTS_DIR) rmSync(shotsDir, { recursive: true, force: true });
});

const shot = (page: Page, name: string) => page.screenshot({ path: join(shotsDir, name), fullPage: true });
const open = async (width: number, path: string) => {
  const page = await contexts.get(width)!.newPage();
  await page.goto(s.url + path);
  return page;
};

test("a closed group section stays closed while the list refreshes live", async () => {
  const page = await open(1280, "/");
  const dbs = page.locator(`details[data-section="g${groups.Databases}"]`);
  expect(await dbs.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
  await dbs.locator("summary").click();
  expect(await dbs.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
  // a monitor created elsewhere: the list fetches its rows again, the new one appears in its section
  const id = await createMonitor(s, httpAttrs({ name: "Redis cache", group_id: groups.Databases, tags: ["env:prod"] }));
  await page.locator(`tr[data-monitor="${id}"]`).waitFor({ state: "attached", timeout: 15_000 });
  expect(await page.locator(`details[data-section="g${groups.Databases}"]`).evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
  expect(await page.locator(`details[data-section="g${groups["Web front"]}"]`).evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
  await page.close();
}, T);

test("a tag chip filters the list; the filter form narrows it to a group", async () => {
  const page = await open(1280, "/");
  await page.locator(`tr:has-text("Shop")`).getByRole("link", { name: "critical" }).click();
  await page.waitForURL(`${s.url}/?tag=critical`);
  const names = async () => page.locator("tr[data-monitor] td:nth-child(3) > a").allTextContents();
  expect(await names()).toEqual(["Shop", "Postgres primary"]);
  await page.getByLabel("Group").selectOption({ label: "Databases" });
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/group_id=/);
  expect(await names()).toEqual(["Postgres primary"]);
  await page.getByRole("link", { name: "Clear" }).click();
  await page.waitForURL(`${s.url}/`);
  expect((await names()).length).toBe(6);
  await page.close();
}, T);

test("the groups page: at 390 px each group is a card whose order box, monitor count and the rest are labelled, at 1280 px the columns' headers say it", async () => {
  /** each row's shown cells: the label a phone shows beside it (CSS data-label), and its text or its box's value */
  const cells = (page: Page) =>
    page.evaluate(() =>
      [...document.querySelectorAll("main tbody tr")].map((tr) =>
        [...tr.querySelectorAll("td")]
          .filter((td) => getComputedStyle(td).display !== "none")
          .map((td) => {
            const label = getComputedStyle(td, "::before").content;
            return [label === "none" || label === "normal" ? null : JSON.parse(label), td.querySelector("input")?.value ?? (td as HTMLElement).innerText.trim()];
          }),
      ),
    );
  const phone = await open(390, "/groups");
  const rows = await cells(phone);
  expect(rows[0]).toEqual([["Order", "1"], ["Name", "Web front"], ["Monitors", "2"], ["Actions", "Rename · Delete"]]);
  expect(rows.every((r) => r.every(([label]) => label !== null))).toBe(true);
  // the label sits beside its value, inside the card, and nothing scrolls sideways
  const fit = await phone.evaluate(() => {
    const td = document.querySelector("main tbody tr td.num") as HTMLElement;
    return { grid: getComputedStyle(td).display, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, cardRight: td.closest("tr")!.getBoundingClientRect().right };
  });
  expect(fit.grid).toBe("grid");
  expect(fit.scrollWidth).toBeLessThanOrEqual(fit.innerWidth);
  expect(fit.cardRight).toBeLessThanOrEqual(fit.innerWidth);
  // the label names the box for the eye; its accessible name stays the group's own
  expect(await phone.getByLabel("Order of Web front").inputValue()).toBe("1");
  await phone.close();

  const desk = await open(1280, "/groups");
  expect(await desk.locator("main thead th").allTextContents()).toEqual(["Order", "Name", "Description", "Monitors", "Actions"]);
  expect((await cells(desk))[0]).toEqual([[null, "1"], [null, "Web front"], [null, "Web front of the shop"], [null, "2"], [null, "Rename · Delete"]]);
  await desk.close();
}, T);

test("pictures at 1280 and 390 px: the list, the groups page, the editor's updates, the status page", async () => {
  for (const width of WIDTHS) {
    let page = await open(width, "/");
    await shot(page, `list-${width}.png`);
    await page.goto(`${s.url}/?tag=env:prod&group_id=${groups["Web front"]}`);
    await shot(page, `list-filtered-${width}.png`);
    await page.goto(`${s.url}/groups`);
    expect(await page.getByRole("heading", { name: "Groups" }).isVisible()).toBe(true);
    await shot(page, `groups-${width}.png`);
    await page.goto(`${s.url}/status-pages/${pageId}/edit`);
    expect(await page.getByRole("heading", { name: "Updates" }).isVisible()).toBe(true);
    // Edit and Delete stay on one line beside their label on a phone's card
    expect(await page.locator('#updates td[data-label="Actions"]').first().evaluate((td) => (td as HTMLElement).innerText.trim())).toBe("Edit · Delete");
    await page.locator("#updates").screenshot({ path: join(shotsDir, `editor-updates-${width}.png`) });
    await page.close();
    const visitor = await browser.newContext({ viewport: { width, height: 860 } });
    page = await visitor.newPage();
    await page.goto(`${s.url}/s/acme`);
    expect(await page.getByRole("heading", { name: "Card payments failing for some customers" }).isVisible()).toBe(true);
    expect(await page.locator("details.group .gname").allTextContents()).toEqual(["Web front", "Databases", "Other services"]);
    await shot(page, `status-page-${width}.png`);
    await visitor.close();
  }
}, 60_000);
