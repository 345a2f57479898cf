/**
 * An expiry alert is sent once across a restart: `vigil serve` as a real child process checks a
 * loopback HTTPS server whose certificate is 10 days from expiry and alerts a webhook receiver; a
 * second process on the same data directory checks it again and sends nothing, then alerts the next
 * stage when the certificate served is 5 days from expiry.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { certNotAfterOf, issueLeaf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { spawnServer, type ChildServer } from "../helpers/process.ts";
import { startRenewableHttpsServer, type RenewableHttpsServer } from "../helpers/renewable-https-server.ts";
import { apiClient, tempDir, waitFor } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "./helpers.ts";

let certs: TestCerts;
let leaves: { days10: string; days5: string };
let https: RenewableHttpsServer;
let r: Receiver;
const dataDir = tempDir("vigil-expiry-restart-");
const children: ChildServer[] = [];

beforeAll(async () => {
  certs = makeCerts(tempDir("vigil-expiry-restart-certs-"));
  leaves = { days10: issueLeaf(certs, "days10", 10), days5: issueLeaf(certs, "days5", 5) };
  https = await startRenewableHttpsServer(leaves.days10, certs.keyPath);
  r = startReceiver();
});
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) await c.stop();
  await Promise.all([https.stop(), r.stop()]);
  rmSync(certs.dir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ child: ChildServer; api: ReturnType<typeof apiClient> }> {
  const child = await spawnServer(["--data", dataDir, "--extra-ca", certs.caPath]);
  children.push(child);
  return { child, api: apiClient(child.url, readFileSync(join(dataDir, "bootstrap-token"), "utf8").trim()) };
}

const expiring = () => r.requests.filter((q) => q.headers.get("x-vigil-event") === "monitor.expiring");

test("a restart in between sends no stage twice; the next stage still comes", async () => {
  let { child, api } = await start();
  const channel = (await api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${r.url}/hook` })).json.data.id;
  const created = await api("POST", "/api/v1/monitors", { name: "Shop", monitor_type: "ssl", target: `localhost:${https.port}`, interval_sec: 3600, timeout_ms: 5000, notification_channel_ids: [Number(channel)] });
  expect(created.status).toBe(201);
  const id = created.json.data.id;
  expect(await waitFor(() => expiring().length === 1, { timeoutMs: 20_000 })).toBe(true);
  expect(await child.stop()).toBe(0);

  ({ child, api } = await start());
  const checks = async () => (await api("GET", `/api/v1/monitors/${id}/checks`)).json.pagination.total as number;
  // resuming a paused monitor checks it at once
  const checkNow = async () => {
    const before = await checks();
    expect((await api("PATCH", `/api/v1/monitors/${id}`, { is_paused: true })).status).toBe(200);
    expect((await api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false })).status).toBe(200);
    expect(await waitFor(async () => (await checks()) > before, { timeoutMs: 20_000 })).toBe(true);
  };
  // the same certificate, checked by the new process: nothing is queued again
  await checkNow();
  // a certificate 5 days from expiry: the 7-day stage, after anything queued before it
  https.useCert(leaves.days5);
  await checkNow();
  expect(await waitFor(() => expiring().length >= 2, { timeoutMs: 20_000 })).toBe(true);

  const bodies = expiring().map((q) => JSON.parse(q.body));
  expect(bodies.map((b) => [b.expiry.expires_at, b.expiry.days_left])).toEqual([
    [new Date(certNotAfterOf(leaves.days10)).toISOString(), 9],
    [new Date(certNotAfterOf(leaves.days5)).toISOString(), 4],
  ]);
  expect(new Set(expiring().map((q) => q.headers.get("x-vigil-delivery"))).size).toBe(2);
  const events = (await api("GET", `/api/v1/monitors/${id}/events?kind=expiring`)).json;
  expect(events.data.map((e: { attributes: { days_left: number } }) => e.attributes.days_left)).toEqual([4, 9]);
  expect(await child.stop()).toBe(0);
}, 60_000);
