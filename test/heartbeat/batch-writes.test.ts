/**
 * One ping batch with many pings on many monitors, every kind of op mixed: what it writes to
 * monitor_events, checks, incidents and the monitor rows, and the deadlines it hands to the timers.
 * On PostgreSQL the whole batch is one transaction whose rows are read in one query and written a
 * statement per kind of row (store/ping-store-postgres.ts); on SQLite its plain pings go to
 * the journal once the rows are cached. The rows must be the same either way. And a ping the
 * database refuses fails alone, not the batch it came in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "kysely";
import { rmSync } from "node:fs";
import type { PingOutcome, PingRequest } from "../../src/domain/heartbeat-ping.ts";
import { defaultAccountId, insertHeartbeat, ownIntake, monitorRow, timeline, type HeartbeatMonitor, type HeartbeatOptions } from "../helpers/heartbeat.ts";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

const PERIOD = 600;
const GRACE = 60;


const request = (m: HeartbeatMonitor, o: Partial<PingRequest> = {}): PingRequest => ({
  monitorId: m.id, token: m.token, kind: "ping", sourceIp: "10.0.0.1", body: null, bodyBytes: 0, failReason: null, exitCode: null, ...o,
});

const checksOf = (id: number) => server.ctx.db.selectFrom("checks").selectAll().where("monitor_id", "=", id).orderBy("id").execute();
const kinds = async (id: number) => (await timeline(server.ctx, id)).map((e) => (e.kind === "transition" ? `${e.from_state}->${e.to_state}` : `${e.kind}:${e.result}`));

describe("a batch of many pings on many monitors", () => {
  test("every op of one batch is written: events, checks, incidents, bookkeeping and deadlines", async () => {
    const ctx = server.ctx;
    const accountId = await defaultAccountId(ctx);
    const make = (n: number, o: HeartbeatOptions = {}) =>
      Promise.all(Array.from({ length: n }, (_, i) => insertHeartbeat(ctx, { accountId, name: `batch ${i}`, periodSec: PERIOD, graceSec: GRACE, ...o })));
    const plain = await make(60);
    const timed = await make(5);
    const failing = await make(5);
    const judged = await make(5, { policy: "status_ok" });
    const paused = await make(3, { paused: true });
    // up, last pinged long ago, period 1 s and no grace: an evaluation finds them down
    const overdue = await make(4, { periodSec: 1, graceSec: 0 });
    const longAgo = Date.now() - 60_000;
    for (const m of overdue) {
      await ctx.db.updateTable("monitors").set({ last_status: "up", heartbeat_last_ping_at: longAgo, heartbeat_deadline_at: longAgo + 1000 }).where("id", "=", m.id).execute();
    }

    const dir = tempDir("vigil-batch-journal-");
    const hb = ownIntake(server.ctx, dir);
    try {
      // Submitted in one turn of the event loop: one batch (far below MAX_BATCH).
      const answers: Promise<PingOutcome>[] = [];
      const submit = (p: PingRequest) => answers.push(hb.batches.submit(p));
      for (const m of plain) for (let i = 0; i < 3; i++) submit(request(m, { sourceIp: `10.0.${m.id % 256}.${i}` }));
      for (const m of timed) {
        submit(request(m, { kind: "start" }));
        submit(request(m));
      }
      for (const m of failing) {
        submit(request(m));
        submit(request(m, { kind: "fail", failReason: "disk full", body: "disk full\nmore", bodyBytes: 15 }));
        submit(request(m, { kind: "fail", failReason: "still full" }));
      }
      for (const m of judged) {
        submit(request(m, { body: '{"status":"failing"}', bodyBytes: 20 }));
        submit(request(m, { body: '{"status":"ok"}', bodyBytes: 15 }));
      }
      for (const m of paused) submit(request(m));
      submit(request(plain[0]!, { token: "rotated-away-token" }));
      hb.batches.evaluate(overdue.map((m) => m.id));
      const outcomes = await Promise.all(answers);

      let k = 0;
      const next = () => outcomes[k++]!;
      for (const _ of plain) for (let i = 0; i < 3; i++) expect(next()).toEqual({ result: "accepted" });
      for (const _ of timed) expect([next(), next()]).toEqual([{ result: "accepted" }, { result: "accepted" }]);
      for (const _ of failing) expect([next(), next(), next()]).toEqual([{ result: "accepted" }, { result: "accepted" }, { result: "accepted" }]);
      for (const _ of judged) {
        expect(next()).toMatchObject({ result: "rejected" });
        expect(next()).toEqual({ result: "accepted" });
      }
      for (const _ of paused) expect(next()).toEqual({ result: "ignored" });
      expect(next()).toEqual({ result: "not_found" });
      // the evaluations were in the same batch, so they are committed too
      const deadlines = hb.deadlines();

      for (const m of plain) {
        expect(await kinds(m.id)).toEqual(["ping:accepted", "unknown->up", "ping:accepted", "ping:accepted"]);
        const pings = (await timeline(ctx, m.id)).filter((e) => e.kind === "ping");
        expect(pings.map((e) => e.source_ip)).toEqual([0, 1, 2].map((i) => `10.0.${m.id % 256}.${i}`));
        const checks = await checksOf(m.id);
        expect(checks.map((c) => [c.status, c.checked_at, c.region])).toEqual(pings.map((e) => ["up", e.at, ctx.config.region]));
        const row = await monitorRow(ctx, m.id);
        expect(row.last_status).toBe("up");
        expect(row.heartbeat_last_ping_at).toBe(pings[2]!.at);
        expect(row.last_checked_at).toBe(pings[2]!.at);
        expect(row.heartbeat_deadline_at).toBe(pings[2]!.at + PERIOD * 1000);
        expect(deadlines.get(m.id)).toBe(row.heartbeat_deadline_at);
      }

      for (const m of timed) {
        expect(await kinds(m.id)).toEqual(["start:accepted", "ping:accepted", "unknown->up"]);
        const [start, done] = await timeline(ctx, m.id);
        expect(done!.duration_ms).toBe(done!.at - start!.at);
        expect((await checksOf(m.id)).map((c) => [c.status, c.latency_ms])).toEqual([["up", done!.duration_ms]]);
        expect((await monitorRow(ctx, m.id)).heartbeat_last_start_at).toBeNull();
      }

      for (const m of failing) {
        expect(await kinds(m.id)).toEqual(["ping:accepted", "unknown->up", "fail:accepted", "up->down", "fail:accepted"]);
        const fail = (await timeline(ctx, m.id)).find((e) => e.kind === "fail")!;
        expect([fail.reason, fail.body]).toEqual(["disk full", "disk full\nmore"]);
        const checks = await checksOf(m.id);
        expect(checks.map((c) => [c.status, c.error_code, c.error_message])).toEqual([
          ["up", null, null], ["down", "heartbeat_failed", "disk full"], ["down", "heartbeat_failed", "still full"],
        ]);
        const incidents = await ctx.db.selectFrom("incidents").selectAll().where("monitor_id", "=", m.id).execute();
        expect(incidents.length).toBe(1);
        // the flip names its own check; the second failure counts into the open incident
        expect(incidents[0]!.root_check_id).toBe(checks[1]!.id);
        expect([incidents[0]!.failure_count, incidents[0]!.last_error_message]).toEqual([2, "still full"]);
        const row = await monitorRow(ctx, m.id);
        expect([row.last_status, row.heartbeat_deadline_at, row.last_checked_at]).toEqual(["down", null, checks[2]!.checked_at]);
        expect(deadlines.get(m.id)).toBeNull();
      }

      for (const m of judged) {
        expect(await kinds(m.id)).toEqual(["ping:rejected", "ping:accepted", "unknown->up"]);
        expect((await checksOf(m.id)).map((c) => c.status)).toEqual(["up"]);
      }

      for (const m of paused) {
        expect(await kinds(m.id)).toEqual(["ping:ignored"]);
        expect(await checksOf(m.id)).toEqual([]);
        const row = await monitorRow(ctx, m.id);
        expect([row.last_status, row.heartbeat_last_ping_at, row.heartbeat_deadline_at]).toEqual(["unknown", null, null]);
      }

      for (const m of overdue) {
        expect(await kinds(m.id)).toEqual(["up->down"]);
        const checks = await checksOf(m.id);
        expect(checks.map((c) => [c.status, c.error_code])).toEqual([["down", "heartbeat_missed"]]);
        const incidents = await ctx.db.selectFrom("incidents").selectAll().where("monitor_id", "=", m.id).execute();
        expect(incidents.map((i) => i.root_check_id)).toEqual([checks[0]!.id]);
        const row = await monitorRow(ctx, m.id);
        expect([row.last_status, row.heartbeat_last_ping_at, row.heartbeat_deadline_at, row.last_checked_at]).toEqual(["down", longAgo, null, checks[0]!.checked_at]);
        expect(deadlines.get(m.id)).toBeNull();
      }

      // A second batch, without a state change to flush it early: plain pings on up monitors and
      // rows with more columns set (a /fail on a down monitor, a /start, an ignored ping) mixed, in
      // one statement per table at its end.
      const second: Promise<PingOutcome>[] = [];
      for (const m of plain) second.push(hb.batches.submit(request(m, { sourceIp: "10.9.0.1" })));
      for (const m of failing) second.push(hb.batches.submit(request(m, { kind: "fail", failReason: "again", body: "again", bodyBytes: 5 })));
      for (const m of plain) second.push(hb.batches.submit(request(m, { sourceIp: "10.9.0.2" })));
      for (const m of timed) second.push(hb.batches.submit(request(m, { kind: "start" })));
      for (const m of paused) second.push(hb.batches.submit(request(m, { sourceIp: "10.9.0.3" })));
      const secondAnswers = await Promise.all(second);
      expect(secondAnswers.filter((a) => a.result === "accepted").length).toBe(plain.length * 2 + failing.length + timed.length);
      await hb.settle();
      for (const m of plain) {
        const last = (await timeline(ctx, m.id)).slice(-2);
        expect(last.map((e) => [e.kind, e.result, e.source_ip, e.reason, e.body])).toEqual([
          ["ping", "accepted", "10.9.0.1", null, null], ["ping", "accepted", "10.9.0.2", null, null],
        ]);
        const checks = (await checksOf(m.id)).slice(-2);
        expect(checks.map((c) => [c.status, c.checked_at, c.error_code, c.error_message])).toEqual(last.map((e) => ["up", e.at, null, null]));
      }
      for (const m of failing) {
        const last = (await timeline(ctx, m.id)).at(-1)!;
        expect([last.kind, last.result, last.reason, last.body, last.source_ip]).toEqual(["fail", "accepted", "again", "again", "10.0.0.1"]);
        expect((await checksOf(m.id)).at(-1)).toMatchObject({ status: "down", error_code: "heartbeat_failed", error_message: "again", latency_ms: null });
      }
      for (const m of timed) expect((await timeline(ctx, m.id)).at(-1)).toMatchObject({ kind: "start", result: "accepted", reason: null });
      for (const m of paused) expect((await timeline(ctx, m.id)).at(-1)).toMatchObject({ kind: "ping", result: "ignored", reason: "monitor is paused", source_ip: "10.9.0.3" });
    } finally {
      await hb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a ping the database refuses fails alone: the pings batched with it are written and answered", async () => {
    const ctx = server.ctx;
    const accountId = await defaultAccountId(ctx);
    const [bad, ...good] = await Promise.all(Array.from({ length: 4 }, (_, i) => insertHeartbeat(ctx, { accountId, name: `refused ${i}`, periodSec: PERIOD, graceSec: GRACE })));
    // a value the database refuses, as PostgreSQL refuses a NUL in text: a trigger of this test's
    const poison =
      ctx.store.engine === "sqlite"
        ? ["CREATE TRIGGER poison BEFORE INSERT ON monitor_events WHEN NEW.reason = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END"]
        : [
            "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.reason = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$",
            "CREATE TRIGGER poison BEFORE INSERT ON monitor_events FOR EACH ROW EXECUTE FUNCTION poison()",
          ];
    for (const statement of poison) await sql.raw(statement).execute(ctx.db);
    const dir = tempDir("vigil-batch-journal-");
    const hb = ownIntake(server.ctx, dir);
    try {
      const refused = hb.batches.submit(request(bad!, { kind: "fail", failReason: "poison" }));
      const answers = good.map((m) => hb.batches.submit(request(m)));
      await expect(refused).rejects.toThrow(/poisoned/);
      expect(await Promise.all(answers)).toEqual(good.map(() => ({ result: "accepted" })));
      for (const m of good) expect(await kinds(m.id)).toEqual(["ping:accepted", "unknown->up"]);
      expect(await timeline(ctx, bad!.id)).toEqual([]);
      expect(await checksOf(bad!.id)).toEqual([]);
      expect((await monitorRow(ctx, bad!.id)).last_status).toBe("unknown");
      expect(server.logs.some((l) => l.msg === "heartbeat batch failed; its ops were written one by one" && l.ops === 4 && l.failed_alone === 1)).toBe(true);
    } finally {
      await hb.close();
      rmSync(dir, { recursive: true, force: true });
      for (const statement of ctx.store.engine === "sqlite" ? ["DROP TRIGGER poison"] : ["DROP TRIGGER poison ON monitor_events", "DROP FUNCTION poison()"]) {
        await sql.raw(statement).execute(ctx.db);
      }
    }
  });
});
