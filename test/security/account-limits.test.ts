/**
 * Per-account limits on monitors (README "Security", Limits): how many an account may hold and the
 * shortest interval of its checked monitors, the plan's by default and the operator's through
 * `vigil account update` beside a running server; every way of creating a monitor meets them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { httpAttrs } from "../api/fixtures.ts";
import { lastLine, runVigil } from "../helpers/process.ts";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient } from "../web/helpers.ts";

let s: TestServer;
const cli = (args: string[]) => runVigil([...args, "--data", s.dataDir]);
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.stop());

async function tenant(name: string, plan: string, ...limits: string[]): Promise<string> {
  expect((await cli(["account", "create", name, "--plan", plan, ...limits])).code).toBe(0);
  return lastLine((await cli(["token", "create", "--account", name, "--scopes", "all"])).stdout);
}

describe("set by the operator, applied by a running server from its next write", () => {
  test("--max-monitors: a create past the limit is a 422 naming it; paused monitors and heartbeats count; default returns to the plan's", async () => {
    const token = await tenant("capped", "pro");
    const create = (over: Record<string, unknown> = {}) => s.api("POST", "/api/v1/monitors", httpAttrs(over), { token });
    expect((await create()).status).toBe(201);
    const upd = await cli(["account", "update", "capped", "--max-monitors", "2"]);
    expect(upd.code).toBe(0);
    expect(upd.stdout).toContain("at most 2 monitors");
    expect((await create({ monitor_type: "heartbeat", target: undefined })).status).toBe(201);
    const refused = await create();
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe("validation_error");
    expect(refused.json.error.message).toContain("already holds 2 monitors, this account's limit");
    expect(refused.json.error.details.account.join(" ")).toContain("ask the operator to raise it");
    expect((await s.api("GET", "/api/v1/monitors", undefined, { token })).json.pagination.total).toBe(2);
    // another account is not held by it
    expect((await s.api("POST", "/api/v1/monitors", httpAttrs())).status).toBe(201);
    const list = await cli(["account", "list"]);
    expect(list.stdout).toMatch(/capped\s+pro\s+instance default\s+2\s+10 s \(plan\)/);
    expect(list.stdout).toMatch(/default\s+enterprise\s+instance default\s+unlimited \(plan\)\s+10 s \(plan\)/);

    expect((await cli(["account", "update", "capped", "--max-monitors", "default"])).stdout).toContain("at most 1000 (plan) monitors");
    expect((await create()).status).toBe(201);
  });

  test("--min-interval-sec: a shorter interval is a 422 on interval_sec on create and on an update that changes it; other edits and heartbeats are not held", async () => {
    const token = await tenant("slowed", "pro");
    const early = await s.api("POST", "/api/v1/monitors", httpAttrs({ interval_sec: 10 }), { token });
    expect(early.status).toBe(201);
    expect((await cli(["account", "update", "slowed", "--min-interval-sec", "120"])).stdout).toContain("interval at least 120 s");
    const refused = await s.api("POST", "/api/v1/monitors", httpAttrs({ interval_sec: 60 }), { token });
    expect(refused.status).toBe(422);
    expect(refused.json.error.details.interval_sec).toEqual(["must be at least 120 (this account's minimum check interval)"]);
    expect((await s.api("POST", "/api/v1/monitors", httpAttrs({ interval_sec: 120 }), { token })).status).toBe(201);
    // a heartbeat's interval_sec is when pings are due, not a check: the minimum does not hold it
    expect((await s.api("POST", "/api/v1/monitors", { name: "cron", monitor_type: "heartbeat", interval_sec: 10, timeout_ms: 1000 }, { token })).status).toBe(201);
    // the monitor created before the minimum keeps its interval through other edits
    const path = `/api/v1/monitors/${early.json.data.id}`;
    expect((await s.api("PATCH", path, { name: "renamed", interval_sec: 10 }, { token })).status).toBe(200);
    const shorter = await s.api("PATCH", path, { interval_sec: 30 }, { token });
    expect(shorter.status).toBe(422);
    expect(shorter.json.error.details.interval_sec[0]).toContain("at least 120");
  });

  test("the CLI refuses values out of bounds", async () => {
    for (const [flag, value, message] of [
      ["--max-monitors", "1.5", "--max-monitors must be an integer from 0 to 10000000, or default"],
      ["--max-monitors", "many", "--max-monitors must be an integer"],
      ["--min-interval-sec", "5", "--min-interval-sec must be an integer from 10 to 86400, or default"],
    ]) {
      const r = await cli(["account", "update", "default", flag!, value!]);
      expect({ flag, value, code: r.code, says: r.stderr.includes(message!) }).toEqual({ flag, value, code: 2, says: true });
    }
  });
});

describe("the plan's defaults, on every way in", () => {
  test("a free account's dashboard form under a minute is a 422 naming the plan's minimum", async () => {
    await tenant("hobby", "free");
    await addUser(s, "hobbyist", "hobby");
    const c = await signedInClient(s, "hobbyist");
    await c.get("/monitors/new?type=http");
    const form = { monitor_type: "http", name: "blog", target: "http://127.0.0.1:9/", interval_sec: "30", timeout_ms: "5000", is_paused: "on" };
    const r = await c.post("/monitors", form);
    expect(r.res.status).toBe(422);
    expect(r.text).toContain("must be at least 60 (the free plan&#39;s minimum check interval)");
    expect((await c.post("/monitors", { ...form, interval_sec: "60" })).res.status).toBe(303);
  });

  test("vigil import creates up to the limit and lists the rest as skipped with the reason", async () => {
    await tenant("importer", "pro", "--max-monitors", "2");
    const dir = tempDir("vigil-limits-");
    const file = join(dir, "config.yaml");
    writeFileSync(file, ["endpoints:", ...["a", "b", "c"].map((n) => `  - name: ${n}\n    url: http://127.0.0.1:9/${n}\n    interval: 60s\n    conditions: ["[STATUS] == 200"]`)].join("\n") + "\n");
    const r = await cli(["import", "gatus", file, "--account", "importer"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("2 created, 1 skipped");
    expect(r.stdout).toContain("already holds 2 monitors");
  });
});
