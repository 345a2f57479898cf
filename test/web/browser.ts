/**
 * What the browser tests share: headless Chromium (Debian's `chromium` package, driven by
 * playwright-core) and a person signed in through the dashboard's own form. Without
 * /usr/bin/chromium `launchChromium` fails saying how to install it: a missing browser must not
 * look like a green run (`.ci/run` installs it with apt-get).
 */
import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { PASSWORD } from "./helpers.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-quic", "--disable-sync"];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: the browser tests cannot run. Install it with "apt-get update && apt-get install -y chromium" (.ci/run does this on CI).`);
  }
  // launch() gives Chromium a fresh temporary profile (user-data-dir) of its own and removes it on close
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 20_000 });
}

/** Signs `page` in through the dashboard's form, as a person would, and waits for the monitor list. */
export async function signIn(page: Page, baseUrl: string, username = "admin"): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${baseUrl}/`);
}

/** A browser context of its own (viewport, script, CSP as `options` say) whose session is signed in as `username`. */
export async function signedInContext(browser: Browser, baseUrl: string, options: BrowserContextOptions = {}, username = "admin"): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  await signIn(page, baseUrl, username);
  await page.close();
  return context;
}
