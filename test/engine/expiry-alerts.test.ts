/**
 * Expiry alerts end to end inside one process: the real scheduler runs the real ssl and http probes
 * against a loopback HTTPS server with openssl-made certificates, the engine records the results in
 * a real store, and the real dispatcher delivers the outbox to a webhook receiver on loopback. Time
 * passing is the context's clock moved forward (the probes judge expiry by it, as the engine does).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox } from "../../src/context.ts";
import { recordCheckResult } from "../../src/engine/record-check.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { startNotifyService } from "../../src/notify/service.ts";
import type { Scheduler } from "../../src/scheduler/scheduler.ts";
import { alertsForMonitor } from "../../src/store/alerts.ts";
import { claimExpiryStage } from "../../src/store/monitors.ts";
import { insertChannel } from "../../src/store/notification-channels.ts";
import { certNotAfterOf, issueLeaf, makeCerts, TEST_CA_ORGANISATION, type TestCerts } from "../helpers/certs.ts";
import { startRenewableHttpsServer, type RenewableHttpsServer } from "../helpers/renewable-https-server.ts";
import { openTestStore, TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir, waitFor } from "../helpers/server.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";
import { makeScheduler } from "../scheduler/helpers.ts";
import { engineHarness, insertMonitor, result, type EngineHarness } from "./helpers.ts";

const DAY = 86_400_000;
let certs: TestCerts;
/** leaves issued one after the other: each later one expires later than the ones before with fewer days */
let leaves: { days20: string; days10: string; days12: string; days5: string };

beforeAll(() => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-expiry-certs-")));
  leaves = { days20: issueLeaf(certs, "days20", 20), days10: issueLeaf(certs, "days10", 10), days12: issueLeaf(certs, "days12", 12), days5: issueLeaf(certs, "days5", 5) };
});
afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Setup {
  h: EngineHarness;
  r: Receiver;
  server: RenewableHttpsServer;
  scheduler: Scheduler;
  monitorId: number;
  /** moves the clock of the engine, the probes and the dispatcher */
  advance(ms: number): void;
  /** sets that clock to `ms` before `notAfter` */
  leave(notAfter: number, ms: number): void;
  /** runs one check now and waits until it is recorded */
  check(): Promise<void>;
  /** the monitor.expiring bodies the receiver got */
  expiring(): Record<string, any>[];
}

async function setup(o: { type: "ssl" | "http"; cert: string; warnDays?: number; regions?: string[] }): Promise<Setup> {
  let offset = 0;
  const h = await engineHarness(["--extra-ca", certs.caPath], { now: () => Date.now() + offset });
  const r = startReceiver();
  const server = await startRenewableHttpsServer(o.cert, certs.keyPath);
  cleanup.push(() => h.close(), () => r.stop(), () => server.stop());
  const channel = await insertChannel(h.ctx.db, h.ctx.secrets, { accountId: h.accountId, changes: { name: "hook", channel_type: "webhook", url: `${r.url}/hook`, is_enabled: true }, now: Date.now() });
  const monitorId = await insertMonitor(h, {
    name: "Shop",
    monitor_type: o.type,
    target: o.type === "ssl" ? `localhost:${server.port}` : `https://localhost:${server.port}/`,
    interval_sec: 3600,
    ssl_expiry_warn_days: o.warnDays ?? null,
    regions: o.regions ? JSON.stringify(o.regions) : null,
  });
  await h.ctx.db.insertInto("monitor_channels").values({ monitor_id: monitorId, channel_id: channel.id }).execute();
  const notify = await startNotifyService(h.ctx, { pollMs: 50 });
  cleanup.push(() => notify.stop(1000));
  const { scheduler } = makeScheduler(h, { extraCa: certs.caPem });
  cleanup.push(() => scheduler.stop(1000));
  const checks = async () => (await h.ctx.db.selectFrom("checks").select("id").where("monitor_id", "=", monitorId).execute()).length;
  await scheduler.start();
  // the first check runs at start
  expect(await waitFor(async () => (await checks()) === 1)).toBe(true);
  return {
    h,
    r,
    server,
    scheduler,
    monitorId,
    advance: (ms) => void (offset += ms),
    leave: (notAfter, ms) => void (offset = notAfter - ms - Date.now()),
    async check() {
      const before = await checks();
      expect(scheduler.runNow(monitorId)).toBe(true);
      expect(await waitFor(async () => (await checks()) === before + 1)).toBe(true);
    },
    expiring: () => r.requests.filter((q) => q.headers.get("x-vigil-event") === "monitor.expiring").map((q) => JSON.parse(q.body)),
  };
}

const outbox = (s: Setup) => alertsForMonitor(s.h.ctx.db, s.monitorId);
const expiringEvents = (s: Setup) => s.h.ctx.db.selectFrom("monitor_events").selectAll().where("monitor_id", "=", s.monitorId).where("kind", "=", "expiring").orderBy("id").execute();

test("one certificate as time passes: one alert entering the warn window, one at 7 days left, one at 1 day left, and nothing in between", async () => {
  const s = await setup({ type: "ssl", cert: leaves.days20 });
  const notAfter = certNotAfterOf(leaves.days20);
  const date = new Date(notAfter).toISOString().slice(0, 16).replace("T", " ") + " UTC";
  // 20 days left: outside the 14-day window
  expect(await outbox(s)).toEqual([]);

  // 13.5 days left: inside the window, one alert naming the date and the days left
  s.leave(notAfter, 13.5 * DAY);
  await s.check();
  expect(await waitFor(() => s.expiring().length === 1)).toBe(true);
  const first = s.expiring()[0]!;
  expect(first).toMatchObject({
    event: "monitor.expiring",
    monitor: { id: String(s.monitorId), name: "Shop", monitor_type: "ssl", target: `localhost:${s.server.port}` },
    state: "degraded",
    previous_state: "degraded",
    incident: null,
    error_code: null,
    expiry: { kind: "certificate", expires_at: new Date(notAfter).toISOString(), days_left: 13 },
  });
  // further checks at the same stage queue nothing
  await s.check();
  s.leave(notAfter, 10.5 * DAY);
  await s.check();
  expect((await outbox(s)).length).toBe(1);

  // 7.5 days left: 7 whole days, the 7-day stage
  s.leave(notAfter, 7.5 * DAY);
  await s.check();
  await s.check();
  // 1.5 days left: the 1-day stage; the last hours add nothing
  s.leave(notAfter, 1.5 * DAY);
  await s.check();
  s.leave(notAfter, 0.5 * DAY);
  await s.check();
  await s.check();
  expect(await waitFor(() => s.expiring().length === 3)).toBe(true);
  expect(s.expiring().map((b) => b.expiry.days_left)).toEqual([13, 7, 1]);
  // the receiver has answered; the dispatcher records that right after
  expect(await waitFor(async () => (await outbox(s)).every((a) => a.status === "delivered"))).toBe(true);
  const rows = await outbox(s);
  expect(rows.map((a) => [a.event, a.status])).toEqual([
    ["monitor.expiring", "delivered"],
    ["monitor.expiring", "delivered"],
    ["monitor.expiring", "delivered"],
  ]);
  expect(new Set(rows.map((a) => a.delivery_id)).size).toBe(3);

  // the timeline has one event per alert, naming the date
  const events = await expiringEvents(s);
  expect(events.map((e) => [e.expires_at, e.reason])).toEqual([
    [notAfter, `certificate expires on ${date} (13 days left)`],
    [notAfter, `certificate expires on ${date} (7 days left)`],
    [notAfter, `certificate expires on ${date} (1 day left)`],
  ]);
  // the monitor keeps the certificate's issuer beside its expiry
  const m = await s.h.ctx.db.selectFrom("monitors").selectAll().where("id", "=", s.monitorId).executeTakeFirstOrThrow();
  expect(m).toMatchObject({ ssl_expiry_last_not_after: notAfter, ssl_last_issuer: TEST_CA_ORGANISATION, expiry_alerted_not_after: notAfter, expiry_alert_stage: 3 });
});

test("an http monitor of an https target: a renewed certificate starts afresh, and the old one seen again alerts nothing", async () => {
  const s = await setup({ type: "http", cert: leaves.days10 });
  expect(await waitFor(() => s.expiring().length === 1)).toBe(true);
  expect(s.expiring()[0]!.expiry).toEqual({ kind: "certificate", expires_at: new Date(certNotAfterOf(leaves.days10)).toISOString(), days_left: 9 });

  // renewed, but with a short lifetime: a later date inside the window alerts its own first stage
  s.server.useCert(leaves.days12);
  await s.check();
  expect(await waitFor(() => s.expiring().length === 2)).toBe(true);
  expect(s.expiring()[1]!.expiry).toMatchObject({ expires_at: new Date(certNotAfterOf(leaves.days12)).toISOString(), days_left: 11 });

  // a server still handing out the old certificate (a load balancer half renewed): no new alert
  s.server.useCert(leaves.days10);
  await s.check();
  s.server.useCert(leaves.days12);
  await s.check();
  expect((await outbox(s)).length).toBe(2);

  // an older certificate that reaches a stage not alerted yet still says so (here the 7-day one)
  s.server.useCert(leaves.days5);
  await s.check();
  expect(await waitFor(() => s.expiring().length === 3)).toBe(true);
  expect(s.expiring()[2]!.expiry).toMatchObject({ expires_at: new Date(certNotAfterOf(leaves.days5)).toISOString(), days_left: 4 });
});

test("the warn days are the monitor's: a 3-day window leaves a 5-day certificate quiet until 3 days are left", async () => {
  const s = await setup({ type: "ssl", cert: leaves.days5, warnDays: 3 });
  await s.check();
  expect(await outbox(s)).toEqual([]);
  s.advance(2 * DAY + 60_000);
  await s.check();
  // the window is shorter than 7 days: entering it is the 7-day stage, sent once
  expect(await waitFor(() => s.expiring().length === 1)).toBe(true);
  expect(s.expiring()[0]!.expiry.days_left).toBe(2);
  expect((await expiringEvents(s)).length).toBe(1);
});

test("maintenance sends none, and the first check after it does; a paused monitor records nothing, so it sends none", async () => {
  const s = await setup({ type: "ssl", cert: leaves.days20 });
  await s.h.ctx.db.updateTable("monitors").set({ is_in_maintenance: 1 }).where("id", "=", s.monitorId).execute();
  s.advance(10 * DAY);
  await s.check();
  await s.check();
  expect(await outbox(s)).toEqual([]);
  expect(await expiringEvents(s)).toEqual([]);
  await s.h.ctx.db.updateTable("monitors").set({ is_in_maintenance: 0, is_paused: 1 }).where("id", "=", s.monitorId).execute();
  const paused = await recordCheckResult(s.h.ctx, s.monitorId, "local", result("degraded", { checked_at: s.h.ctx.clock.now(), ssl_not_after: certNotAfterOf(leaves.days20) }));
  expect(paused).toEqual({ recorded: false, reason: "paused" });
  expect(await outbox(s)).toEqual([]);
  await s.h.ctx.db.updateTable("monitors").set({ is_paused: 0 }).where("id", "=", s.monitorId).execute();
  await s.check();
  expect(await waitFor(() => s.expiring().length === 1)).toBe(true);
  expect(s.expiring()[0]!.expiry.days_left).toBe(9);
});

test("two regions reporting the same stage at once queue it once", async () => {
  const s = await setup({ type: "ssl", cert: leaves.days20, regions: ["local", "eu", "us"] });
  const notAfter = certNotAfterOf(leaves.days10);
  const at = s.h.ctx.clock.now();
  await Promise.all(["local", "eu", "us"].map((region) => recordCheckResult(s.h.ctx, s.monitorId, region, result("degraded", { checked_at: at, ssl_not_after: notAfter }))));
  expect((await outbox(s)).length).toBe(1);
  expect((await expiringEvents(s)).length).toBe(1);
  expect(await waitFor(() => s.expiring().length === 1)).toBe(true);
});

test("the stage is claimed with a conditional update: a second claim from the same mark loses", async () => {
  const s = await setup({ type: "ssl", cert: leaves.days20 });
  const from = { notAfter: null, stage: 0 };
  const to = { notAfter: certNotAfterOf(leaves.days10), stage: 1 };
  expect(await claimExpiryStage(s.h.ctx.db, s.monitorId, from, to)).toBe(true);
  expect(await claimExpiryStage(s.h.ctx.db, s.monitorId, from, to)).toBe(false);
  expect(await claimExpiryStage(s.h.ctx.db, s.monitorId, to, { ...to, stage: 2 })).toBe(true);
});

// Several instances share one database only on PostgreSQL (README "Several instances"); on SQLite one
// process writes, and the test of regions above covers results arriving together.
describe.skipIf(TEST_ENGINE === "sqlite")("several instances", () => {
  test("two instances recording the same stage at the same moment, each in its own transaction, queue it once", async () => {
    const dataDir = tempDir("vigil-expiry-instances-");
    const contexts = await Promise.all(
      ["a", "b"].map(async () => {
        const store = await openTestStore(dataDir);
        const ctx = buildContext({ config: loadConfig(["--data", dataDir], {}), store, log: createLogger("error", "vigil"), clock: { now: () => Date.now() }, secrets: loadSecretBox(dataDir, null) });
        cleanup.push(async () => {
          await ctx.writes.close();
          await store.close();
        });
        return ctx;
      }),
    );
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const [a, b] = contexts as [(typeof contexts)[0], (typeof contexts)[0]];
    const account = await createAccount(a.db, "acme", "pro", Date.now());
    const channel = await insertChannel(a.db, a.secrets, { accountId: account.id, changes: { name: "hook", channel_type: "webhook", url: "http://127.0.0.1:9/hook", is_enabled: true }, now: Date.now() });
    const notAfter = certNotAfterOf(leaves.days10);
    for (let round = 0; round < 5; round++) {
      const now = Date.now();
      const { id } = await a.db
        .insertInto("monitors")
        .values({ account_id: account.id, name: `m${round}`, monitor_type: "ssl", target: "localhost:443", interval_sec: 60, timeout_ms: 2000, regions: JSON.stringify(["local", "eu"]), created_at: now, updated_at: now })
        .returning("id")
        .executeTakeFirstOrThrow();
      await a.db.insertInto("monitor_channels").values({ monitor_id: id, channel_id: channel.id }).execute();
      await Promise.all([
        recordCheckResult(a, id, "local", result("degraded", { checked_at: now, ssl_not_after: notAfter })),
        recordCheckResult(b, id, "eu", result("degraded", { checked_at: now, ssl_not_after: notAfter })),
      ]);
      expect((await alertsForMonitor(a.db, id)).map((r) => r.event)).toEqual(["monitor.expiring"]);
      expect((await a.db.selectFrom("monitor_events").select("id").where("monitor_id", "=", id).where("kind", "=", "expiring").execute()).length).toBe(1);
    }
  });
});
