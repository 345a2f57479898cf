/**
 * The monitor form's dependencies in headless Chromium (Debian's `chromium`, driven by
 * playwright-core, as in browser.e2e.test.ts): the filter box narrows a long list of monitors to
 * pick a parent from, the choice and the reminder are saved, and the monitor page links to the
 * parent. Without /usr/bin/chromium the test fails saying how to install it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signIn } from "./browser.ts";

const T = 30_000;

let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "admin");
  browser = await launchChromium();
}, T);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

test("the filter box narrows the monitors to depend on; the pick and the reminder are saved; the page links to the parent", async () => {
  for (let i = 0; i < 10; i++) await createMonitor(s, httpAttrs({ name: `service ${i}` }));
  const parent = await createMonitor(s, httpAttrs({ name: "Core switch" }));
  const page = await (await browser.newContext()).newPage();
  await signIn(page, s.url);

  await page.goto(`${s.url}/monitors/new?type=heartbeat`);
  const filter = page.getByLabel("Find a monitor");
  expect(await filter.isVisible()).toBe(true); // shown by the script
  const choices = page.locator("#dep-pick .check");
  expect(await choices.count()).toBe(11);
  await filter.fill("core");
  expect(await page.locator("#dep-pick .check:visible").count()).toBe(1);
  await page.getByLabel("Core switch (http)").check();
  await filter.fill("");
  expect(await page.locator("#dep-pick .check:visible").count()).toBe(11);

  await page.getByLabel("Name", { exact: true }).fill("Backup job");
  await page.getByLabel("Expected every (seconds)").fill("3600");
  await page.getByLabel("Remind every (minutes)").fill("30");
  await page.getByRole("button", { name: "Create monitor" }).click();
  await page.waitForURL(/\/monitors\/\d+\?msg=created$/);
  const id = Number(/\/monitors\/(\d+)/.exec(page.url())![1]);
  expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes).toMatchObject({ depends_on_ids: [parent], alert_repeat_minutes: 30 });

  const deps = page.getByRole("region", { name: "Dependencies and alerting" });
  expect(await deps.getByRole("link", { name: "Core switch" }).getAttribute("href")).toBe(`/monitors/${parent}`);
  expect(await deps.textContent()).toContain("every 30 min while an incident is open");
}, T);

test("a form that asks before it acts (rotating a ping URL) asks once, not once per script that bound it", async () => {
  const created = await s.api("POST", "/api/v1/monitors", { name: "nightly", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000 });
  const id = created.json.data.id as string;
  const page = await (await browser.newContext()).newPage();
  await signIn(page, s.url);
  await page.goto(`${s.url}/monitors/${id}`);
  let asked = 0;
  page.on("dialog", (d) => {
    asked++;
    void d.accept();
  });
  await page.getByRole("button", { name: "Rotate ping URL" }).click();
  await page.waitForURL(/msg=/);
  expect(asked).toBe(1);
}, T);
