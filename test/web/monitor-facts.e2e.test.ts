/**
 * The monitor page's certificate and DNS panels in headless Chromium (Debian's `chromium`, as in
 * browser.e2e.test.ts), on a desktop and on a phone: the facts are visible and the panels fit the
 * screen's width. Screenshots go to VIGIL_SCREENSHOTS_DIR, else a temp directory.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Locator } from "playwright-core";
import { createMonitor } from "../api/fixtures.ts";
import { issueLeaf, makeCerts, TEST_CA_ORGANISATION, type TestCerts } from "../helpers/certs.ts";
import { startRenewableHttpsServer, type RenewableHttpsServer } from "../helpers/renewable-https-server.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startDnsTarget, type DnsTarget } from "../helpers/targets.ts";
import { addUser } from "./helpers.ts";
import { launchChromium, signIn } from "./browser.ts";

const T = 30_000;

let certs: TestCerts;
let https: RenewableHttpsServer;
let dns: DnsTarget;
let s: TestServer;
let browser: Browser;
const shotsDir = process.env.VIGIL_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), "vigil-shots-"));

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  certs = makeCerts(tempDir("vigil-facts-e2e-certs-"));
  https = await startRenewableHttpsServer(issueLeaf(certs, "nine-days", 9), certs.keyPath);
  dns = await startDnsTarget({
    "mail.shop.test": { answers: [{ type: "TXT", name: "mail.shop.test", ttl: 60, data: "v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 include:_spf.mail-provider-with-a-long-name.example -all" }] },
  });
  s = await startTestServer(["--extra-ca", certs.caPath]);
  await addUser(s, "admin");
  browser = await launchChromium();
}, T);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await Promise.all([https?.stop(), dns?.close()]);
  if (certs) rmSync(certs.dir, { recursive: true, force: true });
  if (!process.env.VIGIL_SCREENSHOTS_DIR) rmSync(shotsDir, { recursive: true, force: true });
});

/** The panel lies within the viewport's width and nothing in it is cut or scrolls sideways. */
async function fitsIn(panel: Locator, width: number): Promise<boolean> {
  const box = await panel.boundingBox();
  const inside = await panel.evaluate((el) => el.scrollWidth <= el.clientWidth);
  return box !== null && box.x >= 0 && box.x + box.width <= width && inside;
}

const checked = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_checked_at;

test("the certificate and DNS panels read well at 1280 and at 390 pixels", async () => {
  const ssl = await createMonitor(s, { name: "Shop certificate", monitor_type: "ssl", target: `localhost:${https.port}`, interval_sec: 3600, timeout_ms: 5000 });
  const txt = await createMonitor(s, { name: "Shop SPF record", monitor_type: "dns", target: "mail.shop.test", dns_record_type: "TXT", dns_resolver: dns.resolver, interval_sec: 3600, timeout_ms: 2000 });
  expect(await waitFor(async () => (await checked(ssl)) && (await checked(txt)))).toBeTruthy();

  for (const [width, height] of [[1280, 860], [390, 844]] as const) {
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    await signIn(page, s.url);

    await page.goto(`${s.url}/monitors/${ssl}`);
    const cert = page.getByRole("region", { name: "Certificate" });
    expect(await cert.isVisible()).toBe(true);
    expect(await cert.textContent()).toContain("8 days");
    expect(await cert.textContent()).toContain(TEST_CA_ORGANISATION);
    expect(await cert.textContent()).toContain("Expires soon");
    expect(await fitsIn(cert, width)).toBe(true);
    await page.screenshot({ path: join(shotsDir, `certificate-${width}.png`), fullPage: true });

    await page.goto(`${s.url}/monitors/${txt}`);
    const answer = page.getByRole("region", { name: "DNS answer" });
    expect(await answer.textContent()).toContain("include:_spf.mail-provider-with-a-long-name.example");
    expect(await fitsIn(answer, width)).toBe(true);
    await page.screenshot({ path: join(shotsDir, `dns-answer-${width}.png`), fullPage: true });
    await context.close();
  }
}, T);
