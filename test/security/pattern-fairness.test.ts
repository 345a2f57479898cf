/**
 * One account's slow patterns cannot make another account's checks fail (README "Regular
 * expressions"): accounts take turns on the pattern worker, and a batch matches for at most
 * --pattern-time-limit-ms. Account A's monitors extract with capture groups from a 1 MiB answer,
 * each batch most of a minute of matching; account B's one monitor asks a cheap regex of a short
 * answer. Matched first come first served, B's batch would wait behind A's until B's timeout_ms
 * passed: with no time limit, behind the first of A's batches; with the limit alone, behind all
 * twelve.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { checksOf, CHECKED_MONITOR_ARGS, waitForCheck, type CheckView } from "../helpers/checked-monitor.ts";
import { apiClient, makeAccount, startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

const LIMIT_MS = 1000;
const A_MONITORS = 12;

let s: TestServer;
let target: HttpTarget;

/** 1 MiB of JSON text: the patterns below take seconds each on it. */
const BIG = JSON.stringify({ v: Array.from({ length: 1 << 20 }, (_, i) => "abcdefghij 0123456789"[(i * 7919) % 21]).join("") });

beforeAll(async () => {
  target = await startHttpTarget({
    "/big": () => new Response(BIG, { headers: { "content-type": "application/json" } }),
    "/ok": () => Response.json({ status: "ok" }),
  });
  s = await startTestServer([...CHECKED_MONITOR_ARGS, "--pattern-time-limit-ms", String(LIMIT_MS)]);
});
afterAll(async () => {
  await s?.stop();
  await target?.close();
});

test("account A's monitors with slow patterns fill the pattern worker; account B's cheap regex check stays up", async () => {
  // A: each check's batch holds twenty capture groups over 1 MiB, and a timeout long enough that
  // its own deadline would not end it before B's passes
  const extract = Array.from({ length: 20 }, (_, i) => ({ name: `x${i}`, from: "regex", path: `((?:[a-j]+[0-9]*){1,100})[^a-j0-9 ]{${i + 2}}` }));
  const slow: string[] = [];
  for (let i = 0; i < A_MONITORS; i++) {
    const r = await s.api("POST", "/api/v1/monitors", { name: `slow ${i}`, monitor_type: "http", target: target.url, interval_sec: 60, timeout_ms: 30_000, synthetic_enabled: true, synthetic_steps_json: { steps: [{ url: "/big", extract }] } });
    expect(r.status).toBe(201);
    slow.push(r.json.data.id);
  }
  // A's answers are read, so its batches are on the worker or waiting for it
  expect(await waitFor(() => target.requests.filter((r) => r.path === "/big").length === A_MONITORS, { timeoutMs: 20_000 })).toBe(true);

  const b = await makeAccount(s.ctx, "quiet");
  const asB: TestServer = { ...s, api: apiClient(s.url, b.token) };
  const created = await asB.api("POST", "/api/v1/monitors", { name: "quiet", monitor_type: "http", target: `${target.url}/ok`, interval_sec: 60, timeout_ms: 8000, api_json_assertions_json: [{ path: "status", op: "regex", value: "^(ok|up)$" }] });
  expect(created.status).toBe(201);
  const quiet = await waitForCheck(asB, created.json.data.id);
  expect({ status: quiet.status, error: quiet.error_message }).toEqual({ status: "up", error: null });

  // A's checks end at the limit, saying so (the first of them is enough: the rest take their turns)
  let seen: CheckView[][] = [];
  const one = await waitFor(async () => (seen = await Promise.all(slow.map((id) => checksOf(s, id)))).find((c) => c.length > 0)?.[0], { timeoutMs: 20_000, intervalMs: 200 });
  expect(one ? "checked" : JSON.stringify(seen)).toBe("checked");
  expect(one).toMatchObject({ status: "down", error_code: "synthetic_step_failed" });
  expect(one!.error_message).toContain(`still matching after ${LIMIT_MS} ms`);
  expect(one!.error_message).toContain("--pattern-time-limit-ms");
  // deleted, the rest of A's checks are ended rather than waited for at shutdown
  for (const id of slow) expect((await s.api("DELETE", `/api/v1/monitors/${id}`)).status).toBe(200);
});
