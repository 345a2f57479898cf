/**
 * The dashboard's monitor list in headless Chromium (Debian's `chromium`, as in browser.e2e.test.ts)
 * at 1280 px and 390 px: it fits without scrolling sideways, and two rows ticked by clicking are
 * paused by clicking "Pause", with the result said and the others left running. Screenshots go to
 * VIGIL_SCREENSHOTS_DIR when it is set.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { startTestServer, startupMaintenanceDone, type TestServer } from "../helpers/server.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signedInContext } from "./browser.ts";

const T = 60_000;

let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  s = await startTestServer();
  // checks seeded below while the start-up maintenance runs would be rolled up and packed under the tests
  expect(await startupMaintenanceDone(s)).toBe(true);
  await addUser(s, "admin");
  browser = await launchChromium();
}, T);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const paused = async (id: number) => (await s.ctx.db.selectFrom("monitors").select("is_paused").where("id", "=", id).executeTakeFirstOrThrow()).is_paused === 1;

describe("the monitor list in Chromium", () => {
  for (const width of [1280, 390]) {
    test(`at ${width} px: fits, and two rows ticked by clicking are paused by clicking`, async () => {
      // created paused (no real checks), then running as far as the list is concerned
      const ids: number[] = [];
      for (const name of [`first ${width}`, `second ${width}`, `third ${width} with a long name that has to wrap somewhere`]) {
        const id = await createMonitor(s, httpAttrs({ name, target: `https://a-rather-long-host-name-${width}.example.test/with/a/long/path?and=query` }));
        await s.ctx.db.updateTable("monitors").set({ is_paused: 0, last_status: "up", last_checked_at: Date.now() }).where("id", "=", id).execute();
        await s.ctx.db.insertInto("checks").values(Array.from({ length: 20 }, (_, i) => ({ monitor_id: id, region: "local", status: i % 7 === 0 ? "down" : "up", checked_at: Date.now() - (i + 1) * 60_000, latency_ms: 20, http_code: 200 }))).execute();
        ids.push(id);
      }
      const context = await signedInContext(browser, s.url, { viewport: { width, height: 860 } });
      const page = await context.newPage();
      await page.goto(`${s.url}/?q=${width}`);
      await page.locator("[data-select-all-box]:not([hidden])").first().waitFor(); // the script ran
      if (process.env.VIGIL_SCREENSHOTS_DIR) await page.screenshot({ path: join(process.env.VIGIL_SCREENSHOTS_DIR, `monitor-list-${width}.png`), fullPage: true });
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
      expect(scrollWidth).toBeLessThanOrEqual(innerWidth);

      await page.getByLabel(`Select first ${width}`).check();
      await page.getByLabel(`Select second ${width}`).check();
      await page.getByRole("button", { name: "Pause", exact: true }).click();
      await page.waitForURL(/done=pause/);
      expect(await page.getByRole("status").textContent()).toBe("2 monitors paused.");
      expect(page.url()).toContain(`q=${width}`);
      expect(await paused(ids[0]!)).toBe(true);
      expect(await paused(ids[1]!)).toBe(true);
      expect(await paused(ids[2]!)).toBe(false);
      expect(await page.locator(`tr[data-monitor="${ids[0]}"] .st-paused`).count()).toBe(1);

      // select-all ticks every row of the page
      await page.getByLabel("Select every monitor on this page").check();
      expect(await page.locator('tbody input[form="bulk"]:checked').count()).toBe(3);
      await context.close();
    }, T);
  }
});
