/**
 * Every monitor type's form as a person sees it in headless Chromium at 1280 and 390 px: nothing
 * scrolls sideways, the authentication section shows the chosen kind's fields alone (all of them
 * without script), and "Advanced" starts closed. Screenshots go to VIGIL_SCREENSHOTS_DIR, else a
 * temp directory (monitor-form-<type>-<width>.png).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { MONITOR_TYPES } from "../../src/domain/monitor.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signedInContext } from "./browser.ts";

const T = 120_000;
const shotsDir = process.env.VIGIL_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), "vigil-form-shots-"));

let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  s = await startTestServer();
  await addUser(s, "admin");
  browser = await launchChromium();
}, T);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const signedIn = (width: number, javaScriptEnabled = true): Promise<BrowserContext> => signedInContext(browser, s.url, { viewport: { width, height: 860 }, javaScriptEnabled });

describe("monitor forms in a browser", () => {
  for (const width of [1280, 390]) {
    test(`${width} px: every type's form fits, with "Advanced" closed`, async () => {
      const context = await signedIn(width);
      const page = await context.newPage();
      const wide: string[] = [];
      for (const type of MONITOR_TYPES) {
        await page.goto(`${s.url}/monitors/new?type=${type}`);
        const { scrollWidth, innerWidth, advancedOpen } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
          advancedOpen: [...document.querySelectorAll("details")].some((d) => d.open && d.querySelector("summary")?.textContent?.startsWith("Advanced")),
        }));
        if (scrollWidth > innerWidth || advancedOpen) wide.push(type);
        await page.screenshot({ path: join(shotsDir, `monitor-form-${type}-${width}.png`), fullPage: true });
      }
      expect(wide).toEqual([]);
      await context.close();
    }, T);
  }

  test("the authentication section shows the chosen kind's fields and names it in its heading; without script it shows every kind's, with a note", async () => {
    const context = await signedIn(1280);
    const page = await context.newPage();
    await page.goto(`${s.url}/monitors/new?type=http`);
    await page.getByText("Authentication (Nothing").click();
    const visible = async (label: string) => page.getByLabel(label, { exact: true }).isVisible();
    expect(await visible("Token")).toBe(false);
    expect(await page.getByText("Only the fields of the kind chosen above are used.").isVisible()).toBe(false);
    const heading = page.locator("details:has([data-auth-choice]) > summary");
    await page.getByLabel("Sign in with").selectOption("bearer");
    expect([await visible("Token"), await visible("User name"), await visible("Header name")]).toEqual([true, false, false]);
    // the heading follows the choice, as the fields do
    expect(await heading.textContent()).toBe("Authentication (A token (Bearer))");
    await page.getByLabel("Sign in with").selectOption("basic");
    expect([await visible("Token"), await visible("User name"), await visible("Password")]).toEqual([false, true, true]);
    expect(await heading.textContent()).toBe("Authentication (User name and password (Basic))");
    await page.screenshot({ path: join(shotsDir, "monitor-form-http-auth-basic.png"), fullPage: true });
    await context.close();

    const plain = await signedIn(390, false);
    const noScript = await plain.newPage();
    await noScript.goto(`${s.url}/monitors/new?type=http`);
    await noScript.getByText("Authentication (Nothing").click();
    expect(await noScript.getByText("Only the fields of the kind chosen above are used.").isVisible()).toBe(true);
    expect([await noScript.getByLabel("Token", { exact: true }).isVisible(), await noScript.getByLabel("User name", { exact: true }).isVisible(), await noScript.getByLabel("Header name", { exact: true }).isVisible()]).toEqual([true, true, true]);
    await plain.close();
  }, T);
});
