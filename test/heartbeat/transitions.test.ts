/**
 * Every row of docs/heartbeats.md "Transitions and deadlines", live, with periods of 1 s and grace
 * of 1 s (or 0), plus the alerts of docs/notifications.md "Which changes alert" and the incidents
 * that go with down.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { alertLines, createHeartbeat, monitorRow, ping, timeline, transitions, updateHeartbeat } from "../helpers/heartbeat.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"]);
});
afterAll(async () => {
  await server.stop();
});

const status = async (id: number) => (await monitorRow(server.ctx, id)).last_status;
const reach = async (id: number, state: string) => expect(await waitFor(async () => (await status(id)) === state, { timeoutMs: 8000 })).toBe(true);
const lastTransition = async (id: number) => (await timeline(server.ctx, id)).filter((e) => e.kind === "transition").at(-1)!;
const lastAcceptedPingAt = async (id: number) => (await monitorRow(server.ctx, id)).heartbeat_last_ping_at!;
const checksOf = (id: number) => server.ctx.db.selectFrom("checks").selectAll().where("monitor_id", "=", id).orderBy("id").execute();
const incidentsOf = (id: number) => server.ctx.db.selectFrom("incidents").selectAll().where("monitor_id", "=", id).orderBy("id").execute();

describe("heartbeat transitions", () => {
  // Each monitor makes at most 5 transitions: more within 10 minutes counts as flapping, whose
  // alerts the notifier suppresses (src/engine/alerts.ts).
  test("unknown → up → degraded → up, with late alerts on", async () => {
    const m = await createHeartbeat(server, { periodSec: 1, graceSec: 1, notifyOnLate: true });
    expect(await status(m.id)).toBe("unknown");
    expect((await monitorRow(server.ctx, m.id)).heartbeat_deadline_at).toBeNull(); // unknown waits for a ping

    // unknown → up on a valid ping; the deadline is the end of the period
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    expect(await status(m.id)).toBe("up");
    const pingAt = await lastAcceptedPingAt(m.id);
    expect((await monitorRow(server.ctx, m.id)).heartbeat_deadline_at).toBe(pingAt + 1000);

    // up → degraded when the period passes, not before
    await reach(m.id, "degraded");
    const t = await lastTransition(m.id);
    expect([t.from_state, t.to_state]).toEqual(["up", "degraded"]);
    expect(t.at).toBeGreaterThanOrEqual(pingAt + 1000);
    expect((await monitorRow(server.ctx, m.id)).heartbeat_deadline_at).toBe(pingAt + 2000);
    const degradedCheck = (await checksOf(m.id)).at(-1)!;
    expect(degradedCheck.status).toBe("degraded");
    expect(degradedCheck.degraded_reason).toMatch(/no ping for .* s \(expected by .*\); down at /);

    // degraded → up on a valid ping within grace
    await ping(server.url, m.token);
    expect(await status(m.id)).toBe("up");
    expect(await transitions(server.ctx, m.id)).toEqual(["unknown->up", "up->degraded", "degraded->up"]);
    expect(await incidentsOf(m.id)).toEqual([]);
    // with heartbeat_notify_on_late, entering degraded and recovering from it alert (docs/notifications.md)
    expect(alertLines(server, m.id)).toEqual(["monitor.degraded", "monitor.up"]);
  });

  test("up → degraded → down (incident) → up (resolved), with late alerts on", async () => {
    const m = await createHeartbeat(server, { periodSec: 1, graceSec: 1, notifyOnLate: true });
    await ping(server.url, m.token);
    const pingAt = await lastAcceptedPingAt(m.id);

    await reach(m.id, "down");
    const t = await lastTransition(m.id);
    expect([t.from_state, t.to_state]).toEqual(["degraded", "down"]);
    expect(t.at).toBeGreaterThanOrEqual(pingAt + 2000);
    expect((await monitorRow(server.ctx, m.id)).heartbeat_deadline_at).toBeNull(); // down waits for a ping

    // the incident points at the check recorded for the transition
    const [incident] = await incidentsOf(m.id);
    expect(incident!.status).toBe("open");
    expect(incident!.last_error_code).toBe("heartbeat_missed");
    const root = (await checksOf(m.id)).find((c) => c.id === incident!.root_check_id)!;
    expect(root.status).toBe("down");
    expect(root.error_code).toBe("heartbeat_missed");
    expect(root.error_message).toMatch(/no ping for .* s .*late, grace of 1 s over/);
    expect(root.region).toBe(server.ctx.config.region);

    // down → up on a valid ping resolves it
    await ping(server.url, m.token);
    expect(await status(m.id)).toBe("up");
    const [resolved] = await incidentsOf(m.id);
    expect(resolved!.status).toBe("resolved");
    const closing = (await checksOf(m.id)).find((c) => c.id === resolved!.resolved_check_id)!;
    expect(closing.status).toBe("up");

    expect(await transitions(server.ctx, m.id)).toEqual(["unknown->up", "up->degraded", "degraded->down", "down->up"]);
    expect((await checksOf(m.id)).map((c) => c.status)).toEqual(["up", "degraded", "down", "up"]);
    expect(alertLines(server, m.id)).toEqual(["monitor.degraded", "monitor.down", "monitor.up"]);
  });

  test("up → down directly when period and grace end together (grace 0)", async () => {
    const m = await createHeartbeat(server, { periodSec: 1, graceSec: 0 });
    await ping(server.url, m.token);
    const pingAt = await lastAcceptedPingAt(m.id);
    await reach(m.id, "down");
    const t = await lastTransition(m.id);
    expect(t.at).toBeGreaterThanOrEqual(pingAt + 1000);
    expect(await transitions(server.ctx, m.id)).toEqual(["unknown->up", "up->down"]);
    expect((await incidentsOf(m.id)).map((i) => i.status)).toEqual(["open"]);
    await ping(server.url, m.token);
    expect(await transitions(server.ctx, m.id)).toEqual(["unknown->up", "up->down", "down->up"]);
    expect((await incidentsOf(m.id)).map((i) => i.status)).toEqual(["resolved"]);
    expect(alertLines(server, m.id)).toEqual(["monitor.down", "monitor.up"]);
  });

  test("without heartbeat_notify_on_late only down and the recovery from it alert", async () => {
    const late = await createHeartbeat(server, { periodSec: 1, graceSec: 1, notifyOnLate: false });
    const down = await createHeartbeat(server, { periodSec: 1, graceSec: 1, notifyOnLate: false });
    await Promise.all([ping(server.url, late.token), ping(server.url, down.token)]);
    await reach(late.id, "degraded");
    await ping(server.url, late.token); // degraded → up: no alert
    // read now: with a 1 s period it turns degraded again while the other one goes down
    expect((await transitions(server.ctx, late.id)).slice(0, 3)).toEqual(["unknown->up", "up->degraded", "degraded->up"]);
    await reach(down.id, "down");
    await ping(server.url, down.token);
    expect(await transitions(server.ctx, down.id)).toEqual(["unknown->up", "up->degraded", "degraded->down", "down->up"]);
    expect(alertLines(server, late.id)).toEqual([]);
    expect(alertLines(server, down.id)).toEqual(["monitor.down", "monitor.up"]);
  });

  test("a rejected ping does not hold the deadline back", async () => {
    const m = await createHeartbeat(server, { periodSec: 1, graceSec: 0, policy: "status_ok" });
    expect((await ping(server.url, m.token, { body: '{"status":"ok"}' })).json.result).toBe("accepted");
    expect((await ping(server.url, m.token, { body: '{"status":"failing"}' })).json.result).toBe("rejected");
    await reach(m.id, "down");
    expect(await transitions(server.ctx, m.id)).toEqual(["unknown->up", "up->down"]);
  });

  test("monitor.changed: a paused monitor never turns down, a shortened period applies without restart", async () => {
    const paused = await createHeartbeat(server, { periodSec: 1, graceSec: 0 });
    const control = await createHeartbeat(server, { periodSec: 1, graceSec: 0 });
    const edited = await createHeartbeat(server, { periodSec: 3600, graceSec: 0 });
    await Promise.all([ping(server.url, paused.token), ping(server.url, control.token), ping(server.url, edited.token)]);
    await updateHeartbeat(server, paused.id, { is_paused: true });
    await updateHeartbeat(server, edited.id, { heartbeat_period_sec: 1 });
    await reach(control.id, "down");
    await reach(edited.id, "down");
    // the control monitor, pinged at the same moment, is down: the paused one would be too
    expect(await status(paused.id)).toBe("up");
    expect(await transitions(server.ctx, paused.id)).toEqual(["unknown->up"]);
    expect((await monitorRow(server.ctx, paused.id)).heartbeat_deadline_at).toBeNull();
  });

  test("maintenance: transitions happen, but no incident and no alert", async () => {
    const m = await createHeartbeat(server, { periodSec: 1, graceSec: 0 });
    await updateHeartbeat(server, m.id, { is_in_maintenance: true });
    await ping(server.url, m.token);
    await reach(m.id, "down");
    expect(await incidentsOf(m.id)).toEqual([]);
    expect(alertLines(server, m.id)).toEqual([]);
  });

  test("monitor.state is announced after each transition commits", async () => {
    const seen: string[] = [];
    const m = await createHeartbeat(server, { periodSec: 1, graceSec: 0 });
    const off = server.ctx.events.on("monitor.state", (e) => {
      if (e.monitorId === m.id) seen.push(`${e.from}->${e.to}`);
    });
    await ping(server.url, m.token);
    await reach(m.id, "down");
    expect(await waitFor(() => seen.length === 2)).toBe(true);
    off();
    expect(seen).toEqual(["unknown->up", "up->down"]);
  });
});
