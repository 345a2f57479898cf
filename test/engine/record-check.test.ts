import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { recordCheckResult } from "../../src/engine/record-check.ts";
import { engineHarness, insertMonitor, result, type EngineHarness } from "./helpers.ts";

let h: EngineHarness;
beforeEach(async () => {
  h = await engineHarness();
});
afterEach(async () => {
  await h.close();
});

const monitorRow = (id: number) => h.ctx.db.selectFrom("monitors").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const incidents = (id: number) => h.ctx.db.selectFrom("incidents").selectAll().where("monitor_id", "=", id).orderBy("id").execute();
const checkCount = async (id: number) => (await h.ctx.db.selectFrom("checks").select("id").where("monitor_id", "=", id).execute()).length;

describe("single region, confirmations 2", () => {
  test("state and incident follow up, first failure, confirmed failure, more failures, recovery", async () => {
    const id = await insertMonitor(h);
    const states: string[] = [];
    h.ctx.events.on("monitor.state", (e) => states.push(`${e.from}>${e.to}`));
    const t0 = 1_800_000_000_000;
    h.ctx.clock = { now: () => t0 + 60_000 };

    const r1 = await recordCheckResult(h.ctx, id, "local", result("up", { checked_at: t0 }));
    expect(r1).toMatchObject({ recorded: true, from: "unknown", to: "up", changed: true });
    expect((await monitorRow(id)).last_checked_at).toBe(t0);

    const r2 = await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 + 10_000 }));
    expect(r2).toMatchObject({ recorded: true, to: "degraded" });
    expect(await incidents(id)).toHaveLength(0);

    const r3 = await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 + 20_000, error_code: "connection_refused", error_message: "refused", http_code: null }));
    expect(r3).toMatchObject({ recorded: true, to: "down", changed: true });
    let [inc] = await incidents(id);
    expect(inc).toMatchObject({ status: "open", started_at: t0 + 20_000, failure_count: 2, last_error_code: "connection_refused", last_error_message: "refused", last_http_code: null });
    expect(inc!.root_check_id).toBe(r3.recorded ? r3.checkId : -1);

    await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 + 30_000, error_code: "http_error", error_message: "got 502", http_code: 502 }));
    [inc] = await incidents(id);
    expect(inc).toMatchObject({ status: "open", failure_count: 3, last_error_code: "http_error", last_error_message: "got 502", last_http_code: 502 });

    // a succeeding check (alone in the quorum) leaves down and resolves the incident
    const r5 = await recordCheckResult(h.ctx, id, "local", result("up", { checked_at: t0 + 41_400 }));
    expect(r5).toMatchObject({ to: "up", changed: true });
    [inc] = await incidents(id);
    expect(inc).toMatchObject({ status: "resolved", resolved_at: t0 + 41_400, failure_count: 3, duration_ms: 21_000 });
    expect(inc!.resolved_check_id).toBe(r5.recorded ? r5.checkId : -1);

    const m = await monitorRow(id);
    expect(m.last_status).toBe("up");
    expect(m.last_checked_at).toBe(t0 + 41_400);
    expect(states).toEqual(["unknown>up", "up>degraded", "degraded>down", "down>up"]);
    const transitions = await h.ctx.db.selectFrom("monitor_events").select(["from_state", "to_state"]).where("monitor_id", "=", id).where("kind", "=", "transition").orderBy("id").execute();
    expect(transitions.map((t) => `${t.from_state}>${t.to_state}`)).toEqual(states);
    const region = await h.ctx.db.selectFrom("monitor_region_states").selectAll().where("monitor_id", "=", id).executeTakeFirstOrThrow();
    expect(region).toMatchObject({ region: "local", last_status: "up", consecutive_down: 0, last_check_id: r5.recorded ? r5.checkId : -1 });
  });

  test("confirmations 1 opens the incident on the first failure", async () => {
    await h.close();
    h = await engineHarness(["--confirmations", "1"]);
    const id = await insertMonitor(h);
    await recordCheckResult(h.ctx, id, "local", result("up"));
    const r = await recordCheckResult(h.ctx, id, "local", result("down"));
    expect(r).toMatchObject({ to: "down" });
    expect((await incidents(id))[0]).toMatchObject({ status: "open", failure_count: 1 });
  });

  test("certificate expiry and last_checked_at reach the monitor row; an older result does not move them back", async () => {
    const id = await insertMonitor(h);
    const notAfter = Date.now() + 5 * 86_400_000;
    await recordCheckResult(h.ctx, id, "local", result("degraded", { checked_at: 2_000, ssl_not_after: notAfter }));
    await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: 1_000 }));
    const m = await monitorRow(id);
    expect(m.ssl_expiry_last_not_after).toBe(notAfter);
    expect(m.last_checked_at).toBe(2_000);
    // the late, older result is history only: the region's view stays on its newest check
    const region = await h.ctx.db.selectFrom("monitor_region_states").selectAll().where("monitor_id", "=", id).executeTakeFirstOrThrow();
    expect(region).toMatchObject({ last_status: "degraded", last_checked_at: 2_000, consecutive_down: 0 });
    expect(await checkCount(id)).toBe(2);
  });
});

test("a domain check's expiry goes to domain_expires_at; an smtp check's certificate to ssl_expiry_last_not_after", async () => {
  const domain = await insertMonitor(h, { monitor_type: "domain", target: "example.com" });
  const smtp = await insertMonitor(h, { monitor_type: "smtp", target: "127.0.0.1:25" });
  const registration = Date.UTC(2031, 5, 1);
  const certificate = Date.UTC(2027, 2, 1);
  await recordCheckResult(h.ctx, domain, "local", result("up", { checked_at: 1_000, ssl_not_after: registration }));
  await recordCheckResult(h.ctx, smtp, "local", result("up", { checked_at: 1_000, ssl_not_after: certificate }));
  expect(await monitorRow(domain)).toMatchObject({ domain_expires_at: registration, ssl_expiry_last_not_after: null });
  expect(await monitorRow(smtp)).toMatchObject({ ssl_expiry_last_not_after: certificate, domain_expires_at: null });
  // a check that saw no expiry keeps the last one known
  await recordCheckResult(h.ctx, domain, "local", result("down", { checked_at: 2_000, error_code: "rdap_error" }));
  expect((await monitorRow(domain)).domain_expires_at).toBe(registration);
});

describe("dropped results", () => {
  test("paused, deleted and heartbeat monitors record nothing; a repeated result uid is ignored", async () => {
    const paused = await insertMonitor(h, { is_paused: 1 });
    expect(await recordCheckResult(h.ctx, paused, "local", result("down"))).toEqual({ recorded: false, reason: "paused" });
    expect(await checkCount(paused)).toBe(0);
    expect((await monitorRow(paused)).last_status).toBe("unknown");

    expect(await recordCheckResult(h.ctx, 987_654, "local", result("up"))).toEqual({ recorded: false, reason: "deleted" });

    const hb = await insertMonitor(h, { monitor_type: "heartbeat", target: null });
    expect(await recordCheckResult(h.ctx, hb, "local", result("up"))).toEqual({ recorded: false, reason: "heartbeat" });

    const id = await insertMonitor(h);
    expect(await recordCheckResult(h.ctx, id, "eu", result("up"), "uid-1")).toMatchObject({ recorded: true });
    expect(await recordCheckResult(h.ctx, id, "eu", result("up"), "uid-1")).toEqual({ recorded: false, reason: "duplicate" });
    expect(await checkCount(id)).toBe(1);

    const limited = await insertMonitor(h, { regions: JSON.stringify(["us"]) });
    expect(await recordCheckResult(h.ctx, limited, "eu", result("up"))).toEqual({ recorded: false, reason: "region_excluded" });
    expect(await recordCheckResult(h.ctx, limited, "us", result("up"))).toMatchObject({ recorded: true });
  });
});

describe("maintenance and resume", () => {
  test("in maintenance the state goes down but no incident opens", async () => {
    const id = await insertMonitor(h, { is_in_maintenance: 1 });
    await recordCheckResult(h.ctx, id, "local", result("down"));
    const r = await recordCheckResult(h.ctx, id, "local", result("down"));
    expect(r).toMatchObject({ recorded: true, to: "down", changed: true, incidentOpened: null });
    expect((await monitorRow(id)).last_status).toBe("down");
    expect(await incidents(id)).toHaveLength(0);
  });

  test("after a resume (state reset to unknown) downs from before the pause do not confirm", async () => {
    const id = await insertMonitor(h);
    const t0 = Date.now();
    await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 - 3000 }));
    await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 - 2000 }));
    expect((await monitorRow(id)).last_status).toBe("down");
    // what PATCH is_paused=false does to the row (src/store/monitors.ts)
    await h.ctx.db.updateTable("monitors").set({ last_status: "unknown", state_changed_at: t0 - 1000 }).where("id", "=", id).execute();
    const r = await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 }));
    expect(r).toMatchObject({ from: "unknown", to: "degraded" });
    const r2 = await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 + 1 }));
    expect(r2).toMatchObject({ to: "down" });
  });
});

describe("several regions", () => {
  test("down needs a majority of regions to confirm; failure_count sums every region's run of failures", async () => {
    const id = await insertMonitor(h);
    const at = Date.now();
    for (const region of ["a", "b", "c"]) await recordCheckResult(h.ctx, id, region, result("up", { checked_at: at }));
    await recordCheckResult(h.ctx, id, "a", result("down", { checked_at: at + 1 }));
    await recordCheckResult(h.ctx, id, "a", result("down", { checked_at: at + 2 }));
    // one region of three confirmed: not down, and not a majority of unhealthy regions either
    expect((await monitorRow(id)).last_status).toBe("up");
    await recordCheckResult(h.ctx, id, "b", result("down", { checked_at: at + 3 }));
    expect((await monitorRow(id)).last_status).toBe("degraded");
    const r = await recordCheckResult(h.ctx, id, "b", result("down", { checked_at: at + 4 }));
    expect(r).toMatchObject({ to: "down" });
    expect((await incidents(id))[0]).toMatchObject({ status: "open", failure_count: 4 });
    // a failure from the third region while open is counted too
    await recordCheckResult(h.ctx, id, "c", result("down", { checked_at: at + 5 }));
    expect((await incidents(id))[0]).toMatchObject({ failure_count: 5 });
    // b recovers: 1 confirmed down (a) against 2 not → leaves down
    const back = await recordCheckResult(h.ctx, id, "b", result("up", { checked_at: at + 6 }));
    expect(back).toMatchObject({ from: "down", changed: true });
    expect((await incidents(id))[0]).toMatchObject({ status: "resolved" });
  });
});

describe("group commit", () => {
  test("results arriving together share transactions and all land", async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => insertMonitor(h)));
    const before = h.ctx.writes.counters.batches;
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => recordCheckResult(h.ctx, ids[i % 5]!, "local", result("up", { checked_at: 1000 + i }))));
    expect(outcomes.every((o) => o.recorded)).toBe(true);
    const total = (await h.ctx.db.selectFrom("checks").select("id").execute()).length;
    expect(total).toBe(200);
    // one transaction each would be 200 batches
    expect(h.ctx.writes.counters.batches - before).toBeLessThan(20);
  });
});

test("a recovery's transition carries no error: a succeeded check's note (latency not judged) is not the change's error", async () => {
  const id = await insertMonitor(h);
  const t0 = 1_800_000_000_000;
  h.ctx.clock = { now: () => t0 + 60_000 };
  await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 }));
  await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 + 10_000 }));
  const note = "latency 1503 ms above 100 ms not judged: measured while this Vigil instance was saturated";
  const up = await recordCheckResult(h.ctx, id, "local", result("up", { checked_at: t0 + 20_000, error_message: note }));
  expect(up).toMatchObject({ from: "down", to: "up", changed: true });
  const transition = await h.ctx.db.selectFrom("monitor_events").selectAll().where("monitor_id", "=", id).where("to_state", "=", "up").executeTakeFirstOrThrow();
  expect(transition.reason).toBeNull();
  // the check itself keeps its note
  const check = await h.ctx.db.selectFrom("checks").selectAll().where("monitor_id", "=", id).orderBy("id", "desc").executeTakeFirstOrThrow();
  expect(check.error_message).toBe(note);
});

test("a NUL a target's answer put in a message is stored as U+FFFD, on either engine (docs/api-rules.md \"Text\")", async () => {
  const id = await insertMonitor(h);
  const t0 = Date.now();
  h.ctx.clock = { now: () => t0 + 1000 };
  await recordCheckResult(h.ctx, id, "local", result("degraded", { checked_at: t0, degraded_reason: "slow\u0000" }));
  const down = await recordCheckResult(h.ctx, id, "local", result("down", { checked_at: t0 + 1, error_message: "expected a, got \u0000b\u0000" }));
  expect(down.recorded).toBe(true);
  const rows = await h.ctx.db.selectFrom("checks").select(["error_message", "degraded_reason"]).where("monitor_id", "=", id).orderBy("checked_at").execute();
  expect(rows).toEqual([
    { error_message: null, degraded_reason: "slow\uFFFD" },
    { error_message: "expected a, got \uFFFDb\uFFFD", degraded_reason: null },
  ]);
});
