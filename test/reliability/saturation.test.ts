/**
 * Issue 19 point 3: a server asked for more than it can start on time says so. A real server with
 * `--max-concurrent-checks 2` and five monitors against a loopback target that holds its answers:
 * three checks wait for a slot, so the scheduler is saturated. Polled for, not timed: the warning
 * log line with the figures, `vigil_scheduler_saturated 1` on /metrics, the dashboard banner; once
 * the target answers, every check (each slower than its api_max_latency_ms of 1 ms) is recorded up
 * with a note that its latency was not judged, and the monitors are not degraded.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { addUser, signedInClient, type WebClient } from "../web/helpers.ts";

let s: TestServer;
let target: HttpTarget;
let web: WebClient;
let open = false;
const held: (() => void)[] = [];
const release = () => {
  open = true;
  for (const r of held.splice(0)) r();
};

beforeAll(async () => {
  target = await startHttpTarget({
    "/held": async () => {
      if (!open) await new Promise<void>((resolve) => held.push(resolve));
      // never within the monitors' 1 ms limit, even for a check that starts once the slots are free
      // (a loopback answer sometimes was, and that check had nothing to set aside)
      await Bun.sleep(20);
      return new Response("ok");
    },
  });
  s = await startTestServer(["--max-concurrent-checks", "2"]);
  await addUser(s, "admin");
  web = await signedInClient(s, "admin");
});
afterAll(async () => {
  release();
  await s?.stop();
  await target?.close();
});

const gauge = async (name: string) => {
  const text = (await s.api("GET", "/metrics")).text;
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
};

test("checks waiting for a slot: a warning with the figures, the gauge at 1, the banner, and no degraded verdict from their latency", async () => {
  expect(await gauge("vigil_scheduler_saturated")).toBe(0);
  expect((await web.get("/")).text).not.toContain("Checks are running late");

  const ids: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await s.api("POST", "/api/v1/monitors", { name: `slow ${i}`, monitor_type: "http", target: `${target.url}/held`, interval_sec: 60, timeout_ms: 30_000, api_max_latency_ms: 1 });
    expect(r.status).toBe(201);
    ids.push(Number(r.json.data.id));
  }

  const warning = await waitFor(() => s.logs.find((l) => l.component === "scheduler" && l.level === "warn" && String(l.msg).startsWith("saturated")), { timeoutMs: 20_000 });
  expect(warning).toMatchObject({ in_flight: 2, max_concurrent: 2, bound_ms: 1000 });
  expect(warning!.waiting as number).toBeGreaterThan(0);
  expect(warning!.oldest_wait_ms as number).toBeGreaterThan(1000);
  for (const field of ["checks_per_sec_asked", "checks_per_sec_started", "lateness_p99_ms"]) expect(typeof warning![field]).toBe("number");

  expect(await waitFor(async () => (await gauge("vigil_scheduler_saturated")) === 1, { timeoutMs: 20_000 })).toBe(true);
  expect(await gauge("vigil_scheduler_oldest_wait_seconds")).toBeGreaterThan(1);

  const page = (await web.get("/")).text;
  expect(page).toContain("Checks are running late on this server");
  expect(page).toMatch(/2 of its 2 check slots are busy and \d+ due checks are waiting/);

  release();
  const checks = await waitFor(async () => {
    const rows = await s.ctx.db.selectFrom("checks").selectAll().where("monitor_id", "in", ids).execute();
    return rows.length >= ids.length ? rows : null;
  }, { timeoutMs: 20_000 });
  expect(checks).not.toBeNull();
  for (const c of checks!) {
    expect(c).toMatchObject({ status: "up", degraded_reason: null });
    expect(c.error_message).toMatch(/^latency \d+ ms above 1 ms not judged: measured while this Vigil instance was saturated/);
  }
  // the note is what the API and the monitor's page show
  const listed = await s.api("GET", `/api/v1/monitors/${ids[0]}/checks`);
  expect(listed.json.data[0].attributes).toMatchObject({ status: "up", degraded_reason: null });
  expect(listed.json.data[0].attributes.error_message).toContain("not judged");
  for (const id of ids) expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status).toBe("up");
  expect(await gauge("vigil_checks_latency_not_judged_total")).toBe(ids.length);
});
