import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHeartbeat, monitorRow, ping, rotateHeartbeat, timeline, updateHeartbeat } from "../helpers/heartbeat.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { PING_BODY_LIMIT } from "../../src/domain/ping-body.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"]);
});
afterAll(async () => {
  await server.stop();
});

/** the API's error body: error.code and error.message, plus meta.request_id */
function expectApiError(r: { status: number; json: any; headers: Headers }, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.json.error.code).toBe(code);
  expect(typeof r.json.error.message).toBe("string");
  expect(r.json.meta.request_id).toBe(r.headers.get("x-request-id")!);
}

describe("ping endpoint", () => {
  test("a job's output holding NUL characters is a ping all the same, kept with U+FFFD (no stored text holds a NUL)", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    const sent = await ping(server.url, m.token, { suffix: "/fail", body: "step 1 ok\u0000\u0000step 2 failed" });
    expect(sent.status).toBe(200);
    expect(sent.json).toEqual({ result: "accepted" });
    const fail = (await timeline(server.ctx, m.id)).find((e) => e.kind === "fail")!;
    expect(fail.body).toBe("step 1 ok\uFFFD\uFFFDstep 2 failed");
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("down");
  });

  test("GET, POST and HEAD are accepted without a bearer header and recorded", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    const get = await ping(server.url, m.token);
    expect(get.status).toBe(200);
    expect(get.json).toEqual({ result: "accepted" });
    expect(get.headers.get("x-request-id")).toBeTruthy();
    const post = await ping(server.url, m.token, { body: "anything" });
    expect(post.json).toEqual({ result: "accepted" });
    const head = await ping(server.url, m.token, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");

    const events = await timeline(server.ctx, m.id);
    const pings = events.filter((e) => e.kind === "ping");
    expect(pings.map((e) => e.result)).toEqual(["accepted", "accepted", "accepted"]);
    expect(pings.every((e) => e.source_ip === "127.0.0.1")).toBe(true);
    const row = await monitorRow(server.ctx, m.id);
    expect(row.last_status).toBe("up");
    expect(row.heartbeat_last_ping_at).toBe(pings[2]!.at);
    // every accepted ping is a check row too, in the server's region
    const checks = await server.ctx.db.selectFrom("checks").selectAll().where("monitor_id", "=", m.id).execute();
    expect(checks.map((c) => c.status)).toEqual(["up", "up", "up"]);
    expect(checks.every((c) => c.region === server.ctx.config.region && c.latency_ms === null)).toBe(true);
  });

  test("unknown token, malformed token and unknown sub-path are 404 with the API's error body", async () => {
    expectApiError(await ping(server.url, "x".repeat(32)), 404, "not_found");
    expectApiError(await ping(server.url, "bad$token"), 404, "not_found");
    const m = await createHeartbeat(server);
    expectApiError(await ping(server.url, m.token, { suffix: "/nonsense" }), 404, "not_found");
    expectApiError(await ping(server.url, m.token, { suffix: "/256" }), 404, "not_found");
    expect((await timeline(server.ctx, m.id)).filter((e) => e.kind !== "transition")).toEqual([]);
  });

  test("other methods are 405 with Allow", async () => {
    const m = await createHeartbeat(server);
    const r = await ping(server.url, m.token, { method: "PUT", body: "{}" });
    expectApiError(r, 405, "method_not_allowed");
    expect(r.headers.get("allow")).toBe("GET, HEAD, POST");
  });

  test("a body over 10 MiB is 413 and not recorded, whatever its framing; 10 MiB exactly is a ping", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    expectApiError(await ping(server.url, m.token, { body: "x".repeat(PING_BODY_LIMIT + 1) }), 413, "payload_too_large");
    // chunked, without Content-Length: the cap applies while reading
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 161; i++) c.enqueue(new Uint8Array(65536).fill(65));
        c.close();
      },
    });
    const res = await fetch(`${server.url}/h/${m.token}`, { method: "POST", body: stream });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe("payload_too_large");
    expect((await timeline(server.ctx, m.id)).length).toBe(0);
    expect((await ping(server.url, m.token, { body: "x".repeat(PING_BODY_LIMIT) })).json).toEqual({ result: "accepted" });
  });

  test("a ping is never lost for its size: a 1 MB body is a ping whose event says how long the body was", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    expect((await ping(server.url, m.token, { body: "y".repeat(1_000_000) })).json).toEqual({ result: "accepted" });
    expect((await ping(server.url, m.token, { body: "small log" })).json).toEqual({ result: "accepted" });
    const events = (await server.api("GET", `/api/v1/monitors/${m.id}/events?kind=ping`)).json.data.map((d: any) => d.attributes);
    expect(events.map((e: any) => [e.result, e.body_bytes])).toEqual([["accepted", null], ["accepted", 1_000_000]]);
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
  });

  test("a 1 MB log sent to /fail and to a non-zero exit code keeps its first 10 KiB on the timeline, not only its first line", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    const log = "backup failed: disk full\n" + Array.from({ length: 40_000 }, (_, i) => `line ${i} of the job's output`).join("\n");
    expect(Buffer.byteLength(log)).toBeGreaterThan(1_000_000);
    expect((await ping(server.url, m.token, { suffix: "/fail", body: log })).json).toEqual({ result: "accepted" });
    expect((await ping(server.url, m.token, { suffix: "/2", body: "short output\nsecond line" })).json).toEqual({ result: "accepted" });
    const fails = (await server.api("GET", `/api/v1/monitors/${m.id}/events?kind=fail`)).json.data.map((d: any) => d.attributes);
    expect(fails[0]).toMatchObject({ reason: "exit code 2", body: "short output\nsecond line", body_bytes: null });
    expect(fails[1]).toMatchObject({ reason: "backup failed: disk full", body_bytes: Buffer.byteLength(log) });
    expect(Buffer.byteLength(fails[1].body)).toBe(10 * 1024);
    expect(log.startsWith(fails[1].body)).toBe(true);
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("down");
  });

  test("a paused monitor's pings are ignored but recorded, and change nothing", async () => {
    const m = await createHeartbeat(server, { paused: true });
    const r = await ping(server.url, m.token);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ result: "ignored" });
    const events = await timeline(server.ctx, m.id);
    expect(events.map((e) => [e.kind, e.result])).toEqual([["ping", "ignored"]]);
    const row = await monitorRow(server.ctx, m.id);
    expect(row.last_status).toBe("unknown");
    expect(row.heartbeat_last_ping_at).toBeNull();
  });

  test("the token never appears in a log line", async () => {
    const m = await createHeartbeat(server);
    await ping(server.url, m.token, { method: "PUT" });
    await ping(server.url, m.token);
    expect(server.logText()).not.toContain(m.token);
  });
});

describe("payload policy status_ok", () => {
  const cases: [string, string | undefined, string | null, string][] = [
    ["no body", undefined, null, "no body"],
    ["not JSON", "ok", null, "not valid JSON"],
    ["key missing", '{"state":"ok"}', null, 'key "status" is missing'],
    ["other value", '{"status":"fail"}', null, 'key "status" is "fail"'],
    ["not the text ok", '{"status":true}', null, 'key "status" is true'],
    ["nested key missing", '{"result":{"status":"ok"}}', "job.status", 'key "job.status" is missing'],
  ];
  test.each(cases)("rejected: %s", async (_name, body, key, reason) => {
    const m = await createHeartbeat(server, { policy: "status_ok", statusKey: key, periodSec: 60 });
    const r = await ping(server.url, m.token, { body });
    expect(r.status).toBe(200);
    expect(r.json.result).toBe("rejected");
    expect(r.json.reason).toContain(reason);
    const events = await timeline(server.ctx, m.id);
    expect(events.map((e) => [e.kind, e.result, e.reason])).toEqual([["ping", "rejected", r.json.reason]]);
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("unknown"); // does not advance
  });

  test.each([
    ["default key", '{"status":"ok"}', null],
    ["dot notation", '{"job":{"status":"ok","n":3}}', "job.status"],
    ["array index", '{"runs":[{"status":"ok"}]}', "runs.0.status"],
  ])("accepted: %s", async (_name, body, key) => {
    const m = await createHeartbeat(server, { policy: "status_ok", statusKey: key, periodSec: 60 });
    const r = await ping(server.url, m.token, { body, headers: { "content-type": "application/json" } });
    expect(r.json).toEqual({ result: "accepted" });
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
  });

  test("policy none accepts any body, even invalid JSON", async () => {
    const m = await createHeartbeat(server, { policy: "none", periodSec: 60 });
    expect((await ping(server.url, m.token, { body: '{"status":"fail"' })).json).toEqual({ result: "accepted" });
  });
});

describe("token rotation", () => {
  test("the old token answers 404 at once; the new one works; history is kept", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    const fresh = await rotateHeartbeat(server, m.id);
    expect(fresh).not.toBe(m.token);
    expectApiError(await ping(server.url, m.token), 404, "not_found");
    expect((await ping(server.url, fresh)).json).toEqual({ result: "accepted" });
    expectApiError(await ping(server.url, m.token), 404, "not_found");
    const pings = (await timeline(server.ctx, m.id)).filter((e) => e.kind === "ping");
    expect(pings.length).toBe(2);
    expect((await monitorRow(server.ctx, m.id)).last_status).toBe("up");
  });

  test("a deleted monitor's token is 404 at once", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    expect((await ping(server.url, m.token)).status).toBe(200);
    await server.ctx.db.deleteFrom("monitors").where("id", "=", m.id).execute();
    server.ctx.events.emit("monitor.changed", { monitorId: m.id, accountId: 1, deleted: true });
    expectApiError(await ping(server.url, m.token), 404, "not_found");
  });

  test("pausing through monitor.changed makes pings ignored without a restart", async () => {
    const m = await createHeartbeat(server, { periodSec: 60 });
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    await updateHeartbeat(server, m.id, { is_paused: true });
    expect((await ping(server.url, m.token)).json).toEqual({ result: "ignored" });
    await updateHeartbeat(server, m.id, { is_paused: false });
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    expect(await waitFor(async () => (await monitorRow(server.ctx, m.id)).last_status === "up")).toBe(true);
  });
});

describe("timeline and history through the API", () => {
  test("GET /monitors/{id}/events lists pings and transitions newest first; checks and incidents list the heartbeat's history", async () => {
    const m = await createHeartbeat(server, { periodSec: 60, policy: "status_ok" });
    await ping(server.url, m.token, { body: '{"status":"nope"}' });
    await ping(server.url, m.token, { body: '{"status":"ok"}' });
    await ping(server.url, m.token, { suffix: "/fail", body: "boom" });
    const events = await server.api("GET", `/api/v1/monitors/${m.id}/events`);
    expect(events.status).toBe(200);
    const items = events.json.data.map((d: any) => d.attributes);
    expect(items.map((a: any) => `${a.kind}:${a.result ?? ""}:${a.from ?? ""}>${a.to ?? ""}`)).toEqual([
      "transition::up>down",
      "fail:accepted:>",
      "transition::unknown>up",
      "ping:accepted:>",
      "ping:rejected:>",
    ]);
    expect(items[4].reason).toContain('key "status" is "nope"');
    expect(items[4].source_ip).toBe("127.0.0.1");
    expect(items[4].received_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const checks = await server.api("GET", `/api/v1/monitors/${m.id}/checks`);
    expect(checks.json.data.map((d: any) => [d.attributes.status, d.attributes.error_code])).toEqual([
      ["down", "heartbeat_failed"],
      ["up", null],
    ]);
    const incidents = await server.api("GET", `/api/v1/incidents?monitor_id=${m.id}&resolved=false`);
    expect(incidents.json.pagination.total).toBe(1);
    expect(incidents.json.data[0].attributes.root_check_id).toBe(Number(checks.json.data[0].id));
  });
});
