/**
 * Beyond the document: /start, /fail, /<exit-code> and cron schedules; and the endpoint's guards:
 * rate limits and the source address behind proxies.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { nextScheduledTime } from "../../src/domain/heartbeat-rules.ts";
import { alertLines, createHeartbeat, monitorRow, ping, timeline, transitions } from "../helpers/heartbeat.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"]);
});
afterAll(async () => {
  await server.stop();
});

const checksOf = (s: TestServer, id: number) => s.ctx.db.selectFrom("checks").selectAll().where("monitor_id", "=", id).orderBy("id").execute();
const incidentsOf = (s: TestServer, id: number) => s.ctx.db.selectFrom("incidents").selectAll().where("monitor_id", "=", id).orderBy("id").execute();

describe("/start, /fail and exit codes", () => {
  test("/start then a ping records the run's duration on the ping and its check", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    expect((await ping(server.url, m.token, { suffix: "/start" })).json).toEqual({ result: "accepted" });
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("unknown"); // a start is not a ping
    await Bun.sleep(30); // a run that takes some time
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    const events = await timeline(server.ctx, m.id);
    const start = events.find((e) => e.kind === "start")!;
    const done = events.find((e) => e.kind === "ping")!;
    expect(start.result).toBe("accepted");
    expect(done.duration_ms).toBe(done.at - start.at);
    expect(done.duration_ms!).toBeGreaterThanOrEqual(30);
    const [check] = await checksOf(server, m.id);
    expect(check!.latency_ms).toBe(done.duration_ms);
    // the start is consumed: the next ping has no duration
    await ping(server.url, m.token);
    expect((await timeline(server.ctx, m.id)).filter((e) => e.kind === "ping").at(-1)!.duration_ms).toBeNull();
  });

  test("/fail: down at once with the body's first line as reason, an incident with heartbeat_failed; a ping resolves it", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    await ping(server.url, m.token);
    await ping(server.url, m.token, { suffix: "/start" });
    const r = await ping(server.url, m.token, { suffix: "/fail", body: "backup failed: disk full\nmore detail" });
    expect(r.json).toEqual({ result: "accepted" });
    const row = await monitorRow(server.ctx, m.id);
    expect(row.last_status).toBe("down");
    expect(row.heartbeat_deadline_at).toBeNull();
    const fail = (await timeline(server.ctx, m.id)).find((e) => e.kind === "fail")!;
    expect(fail.reason).toBe("backup failed: disk full");
    expect(fail.duration_ms).not.toBeNull();
    const [incident] = await incidentsOf(server, m.id);
    expect(incident!.last_error_code).toBe("heartbeat_failed");
    const root = (await checksOf(server, m.id)).find((c) => c.id === incident!.root_check_id)!;
    expect([root.status, root.error_code, root.error_message]).toEqual(["down", "heartbeat_failed", "backup failed: disk full"]);
    expect(alertLines(server, m.id)).toEqual(["monitor.down"]);

    // a second failure while down counts into the open incident
    await ping(server.url, m.token, { suffix: "/fail" });
    expect((await incidentsOf(server, m.id))[0]!.failure_count).toBe(2);

    await ping(server.url, m.token);
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
    expect((await incidentsOf(server, m.id))[0]!.status).toBe("resolved");
    expect(await transitions(server.ctx, m.id)).toEqual(["unknown->up", "up->down", "down->up"]);
  });

  test("exit codes: 0 is a ping, 1-255 a failure with reason 'exit code N'", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    expect((await ping(server.url, m.token, { suffix: "/0" })).json).toEqual({ result: "accepted" });
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
    expect((await ping(server.url, m.token, { suffix: "/3" })).json).toEqual({ result: "accepted" });
    const row = await monitorRow(server.ctx, m.id);
    expect(row.last_status).toBe("down");
    expect((await incidentsOf(server, m.id))[0]!.last_error_message).toBe("exit code 3");
    expect((await ping(server.url, m.token, { suffix: "/255", method: "POST" })).status).toBe(200);
    expect((await ping(server.url, m.token, { suffix: "/0" })).json).toEqual({ result: "accepted" });
    const kinds = (await timeline(server.ctx, m.id)).filter((e) => e.kind !== "transition").map((e) => `${e.kind}:${e.reason ?? ""}`);
    expect(kinds).toEqual(["ping:", "fail:exit code 3", "fail:exit code 255", "ping:"]);
  });

  test("under status_ok an exit code is its own verdict: /0 with no body, or a log, is accepted; a plain ping still needs the JSON", async () => {
    const m = await createHeartbeat(server, { periodSec: 60, policy: "status_ok" });
    // the README's `/start` … `/$?` recipe: curl -f must not exit 0 for a ping that will not count
    expect((await ping(server.url, m.token, { suffix: "/start" })).json.result).toBe("accepted");
    expect((await ping(server.url, m.token, { suffix: "/0" })).json.result).toBe("accepted");
    expect((await ping(server.url, m.token, { suffix: "/0", body: "backup finished\n12 files" })).json.result).toBe("accepted");
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
    expect((await ping(server.url, m.token)).json.result).toBe("rejected");
    expect((await ping(server.url, m.token, { suffix: "/fail" })).json.result).toBe("accepted");
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("down");
  });

  test("on a paused monitor /start and /fail are ignored", async () => {
    const m = await createHeartbeat(server, { periodSec: 60, paused: true });
    expect((await ping(server.url, m.token, { suffix: "/start" })).json).toEqual({ result: "ignored" });
    expect((await ping(server.url, m.token, { suffix: "/fail" })).json).toEqual({ result: "ignored" });
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("unknown");
    expect((await timeline(server.ctx, m.id)).map((e) => `${e.kind}:${e.result}`)).toEqual(["start:ignored", "fail:ignored"]);
  });
});

describe("cron schedule", () => {
  test("with a per-second schedule the monitor is late at the next second and down after grace", async () => {
    const m = await createHeartbeat(server, { periodSec: 3600, graceSec: 1, schedule: "* * * * * *", timezone: "UTC" });
    await ping(server.url, m.token);
    const row = await monitorRow(server.ctx, m.id);
    const expected = nextScheduledTime("* * * * * *", "UTC", row.heartbeat_last_ping_at!)!;
    // the deadline follows the schedule, not the hour-long period
    expect(row.heartbeat_deadline_at).toBe(expected);
    expect(await waitFor(async () => (await monitorRow(server.ctx, m.id)).last_status === "down", { timeoutMs: 8000 })).toBe(true);
    const ts = (await timeline(server.ctx, m.id)).filter((e) => e.kind === "transition");
    expect(ts.map((e) => `${e.from_state}->${e.to_state}`)).toEqual(["unknown->up", "up->degraded", "degraded->down"]);
    expect(ts[1]!.at).toBeGreaterThanOrEqual(expected);
    expect(ts[2]!.at).toBeGreaterThanOrEqual(expected + 1000);
  });
});

describe("guards", () => {
  test("rate limits per token and per IP: 429 with Retry-After and code rate_limited, not recorded", async () => {
    const s = await startTestServer(["--ping-limit-token", "3", "--ping-limit-ip", "5"]);
    try {
      const a = await createHeartbeat(s, { periodSec: 60 });
      const b = await createHeartbeat(s, { periodSec: 60 });
      for (let i = 0; i < 3; i++) expect((await ping(s.url, a.token)).status).toBe(200);
      const overToken = await ping(s.url, a.token);
      expect(overToken.status).toBe(429);
      expect(overToken.json.error.code).toBe("rate_limited");
      expect(Number(overToken.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // b has its own token budget, but the IP has 5 a minute: a's 4 requests + 1
      expect((await ping(s.url, b.token)).status).toBe(200);
      const overIp = await ping(s.url, b.token);
      expect(overIp.status).toBe(429);
      expect(overIp.json.error.code).toBe("rate_limited");
      expect(Number(overIp.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await timeline(s.ctx, a.id)).filter((e) => e.kind === "ping").length).toBe(3);
      expect((await timeline(s.ctx, b.id)).filter((e) => e.kind === "ping").length).toBe(1);
    } finally {
      await s.stop();
    }
  });

  test("the per-IP limit holds a whole IPv6 /64: another address of it shares the budget, another /64 has its own", async () => {
    const s = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "2", "--trusted-proxy", "127.0.0.1"]);
    try {
      const m = await createHeartbeat(s, { periodSec: 60 });
      const from = (ip: string) => ping(s.url, m.token, { headers: { "x-forwarded-for": ip } });
      expect((await from("2001:db8:1:2::1")).status).toBe(200);
      expect((await from("2001:db8:1:2::2")).status).toBe(200);
      expect((await from("2001:db8:1:2:ffff:ffff:ffff:fffe")).status).toBe(429);
      expect((await from("2001:db8:1:3::1")).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  test("X-Forwarded-For is ignored from an untrusted peer", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    await ping(server.url, m.token, { headers: { "x-forwarded-for": "203.0.113.7" } });
    expect((await timeline(server.ctx, m.id))[0]!.source_ip).toBe("127.0.0.1");
  });

  test("X-Forwarded-For from a trusted proxy: the right-most untrusted address is the client", async () => {
    const s = await startTestServer(["--trusted-proxy", "127.0.0.1,10.0.0.2"]);
    try {
      const m = await createHeartbeat(s, { periodSec: 60 });
      // the client claims 1.1.1.1; the outer proxy saw 203.0.113.7; 10.0.0.2 is our own inner proxy
      await ping(s.url, m.token, { headers: { "x-forwarded-for": "1.1.1.1, 203.0.113.7, 10.0.0.2" } });
      await ping(s.url, m.token, { headers: { "x-forwarded-for": "::ffff:198.51.100.4" } });
      await ping(s.url, m.token);
      const ips = (await timeline(s.ctx, m.id)).filter((e) => e.kind === "ping").map((e) => e.source_ip);
      expect(ips).toEqual(["203.0.113.7", "198.51.100.4", "127.0.0.1"]);
    } finally {
      await s.stop();
    }
  });
});
