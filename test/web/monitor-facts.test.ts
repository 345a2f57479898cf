/**
 * The monitor page through the real server: a certificate's expiry date, issuer and days left (a
 * loopback HTTPS server with an openssl-made certificate), and a dns monitor's last answer (a
 * loopback DNS responder). The same server's alert and timeline API say the same date.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createMonitor } from "../api/fixtures.ts";
import { certNotAfterOf, issueLeaf, makeCerts, TEST_CA_ORGANISATION, type TestCerts } from "../helpers/certs.ts";
import { startRenewableHttpsServer, type RenewableHttpsServer } from "../helpers/renewable-https-server.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startDnsTarget, type DnsTarget } from "../helpers/targets.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";
import { addUser, signedInClient, unescape, type WebClient } from "./helpers.ts";

let certs: TestCerts;
let tenDays: string;
let https: RenewableHttpsServer;
let dns: DnsTarget;
let r: Receiver;
let s: TestServer;
let c: WebClient;

beforeAll(async () => {
  certs = makeCerts(tempDir("vigil-facts-certs-"));
  tenDays = issueLeaf(certs, "ten-days", 10);
  https = await startRenewableHttpsServer(tenDays, certs.keyPath);
  dns = await startDnsTarget({ "shop.test": { answers: [{ type: "A", name: "shop.test", ttl: 60, data: "10.0.0.7" }, { type: "A", name: "shop.test", ttl: 60, data: "10.0.0.8" }] } });
  r = startReceiver();
  s = await startTestServer(["--extra-ca", certs.caPath]);
  await addUser(s, "admin");
  c = await signedInClient(s, "admin");
});
afterAll(async () => {
  await s.stop();
  await Promise.all([https.stop(), dns.close(), r.stop()]);
  rmSync(certs.dir, { recursive: true, force: true });
});

const lastChecked = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_checked_at;

test("an ssl monitor's page shows the expiry date, the days left and the issuer; the webhook and the timeline name the same date", async () => {
  const channel = (await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${r.url}/hook` })).json.data.id;
  const id = await createMonitor(s, { name: "Shop certificate", monitor_type: "ssl", target: `localhost:${https.port}`, interval_sec: 3600, timeout_ms: 5000, notification_channel_ids: [Number(channel)] });
  expect(await waitFor(() => lastChecked(id))).toBeTruthy();
  const notAfter = certNotAfterOf(tenDays);
  const date = new Date(notAfter).toISOString().slice(0, 16).replace("T", " ") + " UTC";

  const m = (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes;
  expect(m).toMatchObject({ ssl_expiry_last_not_after: new Date(notAfter).toISOString(), ssl_last_issuer: TEST_CA_ORGANISATION, last_status: "degraded" });

  const { res, text } = await c.get(`/monitors/${id}`);
  expect(res.status).toBe(200);
  const page = unescape(text);
  const panel = /<section class="panel" aria-labelledby="expiry-h">[\s\S]*?<\/section>/.exec(page)?.[0] ?? "";
  expect(panel).toContain(">Certificate</h2>");
  expect(panel).toContain(`<dt>Expires</dt><dd>${date} <span class="st st-degraded"><span aria-hidden="true">▲</span> Expires soon</span></dd>`);
  expect(panel).toContain("<dt>Days left</dt><dd>9 days</dd>");
  expect(panel).toContain(`<dt>Issuer</dt><dd>${TEST_CA_ORGANISATION}</dd>`);
  expect(panel).toContain("on entering the 14-day window, then at 7 and at 1 day left");

  // the alert reached the webhook, and the monitor's timeline lists it
  expect(await waitFor(() => r.requests.length === 1)).toBe(true);
  expect(JSON.parse(r.requests[0]!.body)).toMatchObject({ event: "monitor.expiring", expiry: { kind: "certificate", expires_at: new Date(notAfter).toISOString(), days_left: 9 } });
  const events = (await s.api("GET", `/api/v1/monitors/${id}/events?kind=expiring`)).json;
  expect(events.pagination.total).toBe(1);
  expect(events.data[0].attributes).toEqual({
    monitor_id: id,
    kind: "expiring",
    at: events.data[0].attributes.at,
    reason: `certificate expires on ${date} (9 days left)`,
    expires_at: new Date(notAfter).toISOString(),
    days_left: 9,
  });
});

test("a monitor without a certificate has no certificate panel", async () => {
  const id = await createMonitor(s, { name: "Resolver", monitor_type: "dns", target: "shop.test", dns_resolver: dns.resolver, interval_sec: 3600, timeout_ms: 2000 });
  expect(await waitFor(() => lastChecked(id))).toBeTruthy();
  const page = unescape((await c.get(`/monitors/${id}`)).text);
  expect(page).not.toContain('aria-labelledby="expiry-h"');
});

test("a dns monitor's page shows its last answer, the record type and what is expected", async () => {
  const id = await createMonitor(s, { name: "Shop DNS", monitor_type: "dns", target: "shop.test", dns_resolver: dns.resolver, dns_expected_answer: "10.0.0.8", interval_sec: 3600, timeout_ms: 2000 });
  expect(await waitFor(() => lastChecked(id))).toBeTruthy();
  const page = unescape((await c.get(`/monitors/${id}`)).text);
  const panel = /<section class="panel" aria-labelledby="dns-h">[\s\S]*?<\/section>/.exec(page)?.[0] ?? "";
  expect(panel).toContain(">DNS answer</h2>");
  expect(panel).toContain('<dt>Last answer</dt><dd class="mono answer">10.0.0.7<br>10.0.0.8</dd>');
  expect(panel).toContain("<dt>Record type</dt><dd>A</dd>");
  expect(panel).toContain('<dt>Expected</dt><dd class="mono answer">10.0.0.8</dd>');
});
