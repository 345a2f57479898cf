/**
 * One due time fires once, whoever looks at it (README "Dependencies, reminders and escalation"):
 * two contexts on one database (two instances, as far as the store can tell: separate connections,
 * separate write queues) fire the same due reminder and escalation at the same moment. One of them
 * takes each; the outbox gets one row per channel and the timeline one event, and firing again
 * later for the same due time does nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadConfig } from "../../src/config/load.ts";
import { buildContext, loadSecretBox, type AppContext } from "../../src/context.ts";
import { fireDueFollowups } from "../../src/engine/followups.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { alertsForMonitor } from "../../src/store/alerts.ts";
import type { Store } from "../../src/store/database.ts";
import { openTestStore } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";
import { flip, insertMonitorRow, linkChannel } from "../notify/helpers.ts";

const MINUTE = 60_000;
const dataDir = tempDir("vigil-claims-");
const stores: Store[] = [];
let a: AppContext;
let b: AppContext;
let accountId: number;

async function context(): Promise<AppContext> {
  const store = await openTestStore(dataDir);
  stores.push(store);
  const config = loadConfig(["--data", dataDir, "--log-level", "silent"], {});
  return buildContext({ config, store, log: createLogger("silent", "vigil"), clock: { now: () => Date.now() }, secrets: loadSecretBox(dataDir, null) });
}

beforeAll(async () => {
  a = await context();
  b = await context();
  accountId = (await createAccount(a.db, "acme", "pro", Date.now())).id;
});
afterAll(async () => {
  for (const ctx of [a, b]) await ctx.writes.close();
  for (const s of stores) await s.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function webhook(name: string): Promise<number> {
  const now = Date.now();
  const row = await a.db
    .insertInto("notification_channels")
    .values({ account_id: accountId, name, channel_type: "webhook", is_enabled: 1, default_for_new_monitors: 0, config_json: JSON.stringify({ url: "http://127.0.0.1:9/hook" }), secrets_enc: null, created_at: now, updated_at: now })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

test("two instances firing the same due reminder and escalation at once send each once", async () => {
  const team = await webhook("team");
  const pager = await webhook("pager");
  const monitorId = await insertMonitorRow(a, accountId, { alert_repeat_minutes: 5, escalate_after_minutes: 5 });
  await linkChannel(a, monitorId, team);
  await a.db.insertInto("monitor_escalation_channels").values({ monitor_id: monitorId, channel_id: pager }).execute();
  const t0 = Date.now();
  await flip(a, monitorId, "up", { at: t0 - 1000 });
  await flip(a, monitorId, "down", { at: t0 });
  const planned = await a.db.selectFrom("incident_followups").select(["kind", "due_at"]).orderBy("kind").execute();
  expect(planned).toEqual([{ kind: "escalate", due_at: t0 + 5 * MINUTE }, { kind: "repeat", due_at: t0 + 5 * MINUTE }]);

  const at = t0 + 5 * MINUTE;
  const fired = await Promise.all([fireDueFollowups(a, at), fireDueFollowups(b, at), fireDueFollowups(a, at), fireDueFollowups(b, at)]);
  // the escalation and the reminder: two due rows, each taken by exactly one caller
  expect(fired.reduce((n, f) => n + f, 0)).toBe(2);

  const alerts = await alertsForMonitor(a.db, monitorId);
  const byEvent = (e: string) => alerts.filter((r) => r.event === e).map((r) => r.channel_id).sort();
  expect(byEvent("monitor.down")).toEqual([team]);
  expect(byEvent("monitor.escalated")).toEqual([pager]);
  // the reminder was taken in the same pass as the escalation: whether it saw it decides whether
  // the pager hears it too; either way, each channel once
  const reminders = byEvent("monitor.still_down");
  expect(reminders.filter((c) => c === team)).toEqual([team]);
  expect(reminders.length).toBeLessThanOrEqual(2);
  expect(new Set(alerts.map((r) => r.delivery_id)).size).toBe(alerts.length);
  const timeline = await a.db.selectFrom("monitor_events").select("kind").where("monitor_id", "=", monitorId).where("kind", "in", ["still_down", "escalated"]).orderBy("id").execute();
  expect(timeline.map((e) => e.kind).sort()).toEqual(["escalated", "still_down"]);

  // the same moment again, from either side: that due time is gone; the next reminder is 5 minutes on
  expect(await fireDueFollowups(b, at)).toBe(0);
  expect(await fireDueFollowups(a, at + 1000)).toBe(0);
  expect(await a.db.selectFrom("incident_followups").select(["kind", "due_at"]).execute()).toEqual([{ kind: "repeat", due_at: at + 5 * MINUTE }]);
  expect((await alertsForMonitor(a.db, monitorId)).length).toBe(alerts.length);
});

test("a due reminder of an incident resolved meanwhile is dropped, not sent", async () => {
  const team = await webhook("team 2");
  const monitorId = await insertMonitorRow(a, accountId, { alert_repeat_minutes: 5 });
  await linkChannel(a, monitorId, team);
  const t0 = Date.now();
  await flip(a, monitorId, "up", { at: t0 - 1000 });
  await flip(a, monitorId, "down", { at: t0 });
  await flip(b, monitorId, "up", { at: t0 + 60_000 });
  expect(await a.db.selectFrom("incident_followups").selectAll().innerJoin("incidents", "incidents.id", "incident_followups.incident_id").where("incidents.monitor_id", "=", monitorId).execute()).toEqual([]);
  expect(await fireDueFollowups(a, t0 + 5 * MINUTE)).toBe(0);
  expect((await alertsForMonitor(a.db, monitorId)).map((r) => r.event)).toEqual(["monitor.down", "monitor.up"]);
});
