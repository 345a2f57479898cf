/**
 * On SQLite a plain ping on an up monitor is judged against the row an earlier batch left
 * (store/ping-journal-split.ts), while the heartbeat epoch says it still holds; on PostgreSQL every
 * batch reads its rows. These tests change the row behind the server's back — through a second
 * connection, as the CLI or another instance would, with no `monitor.changed` — and check that the
 * next ping is judged against the row as it now is, not as it was cached.
 */
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomToken } from "../../src/lib/tokens.ts";
import { databaseUrlFor } from "../helpers/engine.ts";
import { createHeartbeat, monitorRow, ping, timeline, transitions, type HeartbeatMonitor } from "../helpers/heartbeat.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
/** a statement with `?` placeholders, run on a connection of its own */
let other: { run(sql: string, params: (string | number)[]): Promise<void>; close(): Promise<void> };
beforeAll(async () => {
  server = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"]);
  const store = server.ctx.store;
  if (store.engine === "sqlite") {
    const db = new Database(store.path);
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA foreign_keys = ON");
    other = { run: async (sql, params) => void db.query(sql).run(...params), close: async () => db.close() };
  } else {
    const sql = new SQL({ url: (await databaseUrlFor(server.dataDir))!, max: 1 });
    other = { run: async (text, params) => void (await sql.unsafe(text.split("?").reduce((a, b, i) => `${a}$${i}${b}`), params)), close: () => sql.close() };
  }
});
afterAll(async () => {
  await other.close();
  await server.stop();
});

/** a monitor pinged twice: up, and its row known to the ping path */
async function warm(periodSec = 600): Promise<HeartbeatMonitor> {
  const m = await createHeartbeat(server, { periodSec, graceSec: 60 });
  for (let i = 0; i < 2; i++) expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
  expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
  return m;
}

/** a change committed by another connection; updated_at is left alone unless the change sets it */
function behindTheBack(id: number, sql: string, ...params: (string | number)[]): Promise<void> {
  return other.run(`UPDATE monitors SET ${sql} WHERE id = ?`, [...params, id]);
}

describe("the ping path's row cache", () => {
  test("a token rotated elsewhere, in the same millisecond as the last edit: the old token is refused", async () => {
    const m = await warm();
    await behindTheBack(m.id, "heartbeat_token = ?", randomToken(24));
    const r = await ping(server.url, m.token);
    expect(r.status).toBe(404);
    expect((await timeline(server.ctx, m.id)).filter((e) => e.kind === "ping").length).toBe(2);
  });

  test("a monitor paused elsewhere: its ping is recorded as ignored and changes nothing", async () => {
    const m = await warm();
    const before = await monitorRow(server.ctx, m.id);
    await behindTheBack(m.id, "is_paused = 1");
    expect((await ping(server.url, m.token)).json).toEqual({ result: "ignored" });
    const after = await monitorRow(server.ctx, m.id);
    expect(after.heartbeat_last_ping_at).toBe(before.heartbeat_last_ping_at);
    expect((await timeline(server.ctx, m.id)).at(-1)).toMatchObject({ kind: "ping", result: "ignored" });
  });

  test("a monitor deleted elsewhere: 404, nothing written", async () => {
    const m = await warm();
    await other.run("DELETE FROM monitors WHERE id = ?", [m.id]);
    expect((await ping(server.url, m.token)).status).toBe(404);
    expect(await timeline(server.ctx, m.id)).toEqual([]);
  });

  test("a period changed elsewhere: the deadline the ping sets uses the new period", async () => {
    const m = await warm(600);
    await behindTheBack(m.id, "heartbeat_period_sec = 3600, updated_at = updated_at + 1");
    await ping(server.url, m.token);
    const row = await monitorRow(server.ctx, m.id);
    // grace 60 s: degraded when the period is over
    expect(row.heartbeat_deadline_at).toBe(row.heartbeat_last_ping_at! + 3600_000);
  });

  test("a state changed elsewhere: the ping flips the monitor back up, with its transition", async () => {
    const m = await warm();
    await behindTheBack(m.id, "last_status = 'down'");
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
    expect((await transitions(server.ctx, m.id)).at(-1)).toBe("down->up");
  });

  test("an unchanged row: every ping is recorded with the bookkeeping a fresh read would give", async () => {
    const m = await warm(600);
    expect((await ping(server.url, m.token, { suffix: "/start" })).json).toEqual({ result: "accepted" });
    await Bun.sleep(5);
    await ping(server.url, m.token);
    await ping(server.url, m.token);
    const events = (await timeline(server.ctx, m.id)).filter((e) => e.kind === "ping");
    expect(events.length).toBe(4);
    // the ping after /start has the job's duration; the next one has none (start was cleared)
    expect(events[2]!.duration_ms).toBeGreaterThanOrEqual(5);
    expect(events[3]!.duration_ms).toBeNull();
    const row = await monitorRow(server.ctx, m.id);
    expect(row.heartbeat_last_ping_at).toBe(events[3]!.at);
    expect(row.last_checked_at).toBe(events[3]!.at);
    expect(row.heartbeat_last_start_at).toBeNull();
    expect(row.heartbeat_deadline_at).toBe(events[3]!.at + 600_000);
  });
});
