/**
 * Ping lanes (src/heartbeat/ping-lanes.ts): on PostgreSQL several ping batches are written side by
 * side, each on a connection of its own. A monitor's pings must still be written in the order they
 * arrived, whatever lane the others take, and every ping of a burst over many monitors is answered
 * and recorded once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PingOutcome, PingRequest } from "../../src/heartbeat/apply-batch.ts";
import { POSTGRES_PING_LANES, PingLanes } from "../../src/heartbeat/ping-lanes.ts";
import { postgresPingStatements } from "../../src/store/postgres-ping-statements.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { defaultAccountId, insertHeartbeat, monitorRow, timeline, type HeartbeatMonitor } from "../helpers/heartbeat.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

const request = (m: HeartbeatMonitor, o: Partial<PingRequest> = {}): PingRequest => ({
  monitorId: m.id, token: m.token, kind: "ping", sourceIp: "10.0.0.1", body: null, bodyBytes: 0, failReason: null, exitCode: null, ...o,
});

// SQLite has one writer and one lane; its order is batch-writes.test.ts's business
describe.skipIf(TEST_ENGINE !== "postgres")("ping lanes on PostgreSQL", () => {
test("a burst over many monitors: each monitor's pings are written in the order they arrived, every one answered once", async () => {
  const ctx = server.ctx;
  const accountId = await defaultAccountId(ctx);
  // more monitors than lanes, so every lane has several
  const monitors = await Promise.all(Array.from({ length: POSTGRES_PING_LANES * 6 }, (_, i) => insertHeartbeat(ctx, { accountId, name: `lane ${i}`, periodSec: 600, graceSec: 60 })));
  const lanes = new PingLanes(ctx, { journal: null, stmts: postgresPingStatements(ctx.config.region) }, {
    afterBatch: () => {}, onCommitted: () => {}, onEvaluateFailed: () => {}, log: ctx.log.child("test"),
  });
  try {
    // in one turn of the event loop, per monitor: a ping, a failure, a ping again, a /start, a ping
    const answers: Promise<PingOutcome>[] = [];
    for (let round = 0; round < 5; round++) {
      for (const m of monitors) {
        const kind = round === 1 ? "fail" : round === 3 ? "start" : "ping";
        answers.push(lanes.submit(request(m, { kind, sourceIp: `10.0.0.${round + 1}`, failReason: kind === "fail" ? "step 2" : null })));
      }
    }
    const settled = await Promise.all(answers);
    expect(settled.every((a) => a.result === "accepted")).toBe(true);
    for (const m of monitors) {
      const events = (await timeline(ctx, m.id)).filter((e) => e.kind !== "transition");
      expect(events.map((e) => [e.kind, e.source_ip])).toEqual([
        ["ping", "10.0.0.1"], ["fail", "10.0.0.2"], ["ping", "10.0.0.3"], ["start", "10.0.0.4"], ["ping", "10.0.0.5"],
      ]);
      const transitions = (await timeline(ctx, m.id)).filter((e) => e.kind === "transition").map((e) => `${e.from_state}->${e.to_state}`);
      expect(transitions).toEqual(["unknown->up", "up->down", "down->up"]);
      expect((await monitorRow(ctx, m.id)).last_status).toBe("up");
    }
  } finally {
    await lanes.close();
  }
});
});
