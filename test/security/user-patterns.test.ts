/**
 * A user's regular expression cannot freeze the server (README "Regular expressions"): patterns run
 * on a linear-time engine, on a worker bounded by the check's deadline, while the serving thread
 * answers. The server is a real `vigil serve` child process, so a frozen one cannot also freeze the
 * test: /healthz is polled, with a deadline per request, for as long as the check takes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { killAndWait } from "../helpers/daemon.ts";
import { spawnServer, type ChildServer } from "../helpers/process.ts";
import { apiClient, tempDir } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

const dataDir = tempDir("vigil-user-patterns-");
let child: ChildServer;
let api: ReturnType<typeof apiClient>;
let token: string;
let target: HttpTarget;

/** 4 MiB of JSON text with no match for the patterns below. */
const BIG = JSON.stringify({ v: Array.from({ length: 4 << 20 }, (_, i) => "abcdefghij 0123456789"[(i * 7919) % 21]).join("") });

beforeAll(async () => {
  target = await startHttpTarget({
    // the answer of the issue: thirty a's, against nested repeats
    "/aaa": () => Response.json({ v: "a".repeat(30) }),
    "/big": () => new Response(BIG, { headers: { "content-type": "application/json" } }),
  });
  child = await spawnServer(["--data", dataDir, "--confirmations", "1", "--rate-limit", "pro=120,enterprise=100000"]);
  token = readFileSync(join(dataDir, "bootstrap-token"), "utf8").trim();
  api = apiClient(child.url, token);
});
afterAll(async () => {
  // a server frozen by a pattern answers no SIGTERM: killed after a grace
  if (child) await killAndWait(child.proc.pid, "SIGTERM", 5000);
  await target?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Creates the monitor and waits for its first check, asking /healthz all along; fails naming the
 * first /healthz that got no answer within its deadline, or the check that did not come.
 */
async function checkWhileAskingHealth(attributes: Record<string, unknown>) {
  const created = await api("POST", "/api/v1/monitors", { interval_sec: 60, ...attributes });
  expect(created.status).toBe(201);
  const id = created.json.data.id;
  const end = Date.now() + 30_000;
  let asked = 0;
  const ask = (path: string) => fetch(child.url + path, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
  for (;;) {
    const health = await ask("/healthz").then((r) => r.status, (err: Error) => `no answer (${err.name})`);
    expect({ healthz: health, asked }).toEqual({ healthz: 200, asked });
    asked++;
    const checks = await ask(`/api/v1/monitors/${id}/checks`).then((r) => r.json() as Promise<{ data: { attributes: Record<string, unknown> }[] }>, (err: Error) => `no answer (${err.name})`);
    expect(typeof checks === "string" ? checks : "answered").toBe("answered");
    if (typeof checks !== "string" && checks.data.length > 0) return checks.data[0]!.attributes;
    if (Date.now() > end) throw new Error(`no check within 30 s (/healthz answered ${asked} times)`);
    await Bun.sleep(50);
  }
}

test("fifty nested-repeat rules against thirty a's: the check ends, /healthz answers throughout", async () => {
  const rules = Array.from({ length: 50 }, () => ({ path: "v", op: "regex", value: "((a+)+)+b" }));
  const check = await checkWhileAskingHealth({ name: "nested", monitor_type: "http", target: `${target.url}/aaa`, timeout_ms: 5000, api_json_assertions_json: rules });
  expect(check).toMatchObject({ status: "down", error_code: "assertion_failed" });
  expect(check.error_message).toContain('expected v regex "((a+)+)+b"');
});

test("patterns still running at the check's timeout end the check, and the server answers meanwhile", async () => {
  // capture groups on 4 MiB take the slow path of the engine: far longer than the timeout, so the
  // worker is ended at the deadline; the next check gets a new one
  const extract = Array.from({ length: 20 }, (_, i) => ({ name: `x${i}`, from: "regex", path: `((?:[a-j]+[0-9]*){1,100})[^a-j0-9 ]{${i + 2}}` }));
  const check = await checkWhileAskingHealth({ name: "slow", monitor_type: "http", target: target.url, timeout_ms: 1000, synthetic_enabled: true, synthetic_steps_json: { steps: [{ url: "/big", extract }] } });
  expect(check).toMatchObject({ status: "down", error_code: "synthetic_step_failed" });
  expect(check.error_message).toContain("the check's timeout_ms passed before its patterns were matched");
  const next = await checkWhileAskingHealth({ name: "after", monitor_type: "http", target: `${target.url}/aaa`, timeout_ms: 5000, api_json_assertions_json: [{ path: "v", op: "regex", value: "^a{30}$" }] });
  expect(next).toMatchObject({ status: "up" });
});
