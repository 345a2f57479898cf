/**
 * The status page editor with 300 monitors in headless Chromium: a scrolling picker with a search
 * box instead of a column of every monitor, and Up, Down and Remove moving the chosen ones in place
 * (the order saved as shown). Screenshots go to VIGIL_SCREENSHOTS_DIR, else a temp directory.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signedInContext } from "./browser.ts";

const T = 120_000;
const MONITORS = 300;
const shotsDir = process.env.VIGIL_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), "vigil-editor-shots-"));

let s: TestServer;
let browser: Browser;
const ids: number[] = [];

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  // 300 monitors are created through the API, above its default limit per minute
  s = await startTestServer(["--rate-limit", "pro=5000,enterprise=5000"]);
  await addUser(s, "admin");
  for (let i = 1; i <= MONITORS; i++) ids.push(await createMonitor(s, httpAttrs({ name: `Service ${String(i).padStart(3, "0")}` })));
  browser = await launchChromium();
}, T);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const signedIn = (width: number): Promise<BrowserContext> => signedInContext(browser, s.url, { viewport: { width, height: 860 } });

const orderOf = async (id: number) => (await s.api("GET", `/api/v1/status-pages/${id}`)).json.data.attributes.monitor_ids as number[];

describe("status page editor in a browser", () => {
  for (const width of [1280, 390]) {
    test(`${width} px, ${MONITORS} monitors: pick by searching, reorder in place, save the order shown`, async () => {
      const context = await signedIn(width);
      const page = await context.newPage();
      await page.goto(`${s.url}/status-pages/new`);
      // the picker scrolls inside itself: the page is not a column of 300 checkboxes
      const { height, scrollWidth, innerWidth } = await page.evaluate(() => ({ height: document.documentElement.scrollHeight, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
      expect(height).toBeLessThan(3000);
      expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
      await page.screenshot({ path: join(shotsDir, `status-page-editor-${width}.png`), fullPage: true });

      await page.getByLabel("Name", { exact: true }).fill(`Picked at ${width}`);
      const search = page.getByLabel("Find a monitor to add");
      for (const n of ["250", "007", "123"]) {
        await search.fill(n);
        expect(await page.locator("#pick-list .check:visible").count()).toBe(1);
        await page.getByLabel(`Service ${n}`).check();
      }
      await search.fill("");
      await page.getByRole("button", { name: "Create status page" }).click();
      await page.waitForURL(/\/status-pages\/\d+\/edit\?msg=created$/);
      const id = Number(/\/status-pages\/(\d+)\//.exec(page.url())![1]);
      // ticked ones go at the end in the list's order
      expect(await orderOf(id)).toEqual([ids[6], ids[122], ids[249]]);

      // moved in place by the script (no reload), then saved as shown
      const url = page.url();
      await page.getByRole("button", { name: "Up Service 250" }).click();
      await page.getByRole("button", { name: "Up Service 250" }).click();
      await page.getByRole("button", { name: "Remove Service 123" }).click();
      expect(page.url()).toBe(url);
      expect(await page.locator("ol.chosen li .name").allTextContents()).toEqual(["Service 250", "Service 007"]);
      await page.screenshot({ path: join(shotsDir, `status-page-editor-chosen-${width}.png`), fullPage: true });
      await page.getByRole("button", { name: "Save changes" }).click();
      await page.waitForURL(/msg=saved$/);
      expect(await orderOf(id)).toEqual([ids[249], ids[6]]);
      await context.close();
    }, T);
  }
});
