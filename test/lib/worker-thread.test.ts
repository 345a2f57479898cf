/**
 * The worker handshake shared by the fold worker and the checkpointer (lib/worker-thread.ts): a
 * start that cannot happen is refused in time, a later failure is reported once, and a stop never
 * waits longer than it is told to.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startWorkerThread } from "../../src/lib/worker-thread.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("vigil-worker-thread-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function module(name: string, source: string): string {
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

type To = { type: "start" } | { type: "echo"; n: number } | { type: "stop" };
type From = { type: "echoed"; n: number };

const ECHO = `self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "start") postMessage({ type: "started" });
  else if (m.type === "echo") postMessage({ type: "echoed", n: m.n });
  else if (m.type === "stop") postMessage({ type: "stopped" });
};`;

test("started, it passes the owner every message but the handshake's, and stops when the worker says so", async () => {
  const got: From[] = [];
  const failed: string[] = [];
  const t = await startWorkerThread<To, From>({ name: "the echo worker", url: module("echo.ts", ECHO), start: { type: "start" }, onMessage: (m) => got.push(m), onFailed: (e) => failed.push(e) });
  expect(t.alive).toBe(true);
  t.send({ type: "echo", n: 7 });
  const end = Date.now() + 5000;
  while (got.length === 0 && Date.now() < end) await Bun.sleep(5);
  expect(got).toEqual([{ type: "echoed", n: 7 }]);
  // answered, so it does not wait out the minute (the test's own time limit would end it first)
  await t.stop({ type: "stop" }, 60_000);
  expect(t.alive).toBe(false);
  expect(failed).toEqual([]);
});

test("a worker that never answers the start is refused within the time limit", async () => {
  const silent = module("silent.ts", "self.onmessage = () => {};");
  await expect(
    startWorkerThread<To, From>({ name: "the silent worker", url: silent, start: { type: "start" }, startTimeoutMs: 200, onMessage: () => {}, onFailed: () => {} }),
  ).rejects.toThrow("the silent worker did not start within 0.2 s");
});

test("a worker that throws while starting is refused with its error", async () => {
  const throwing = module("throwing.ts", `self.onmessage = () => { throw new Error("no database here"); };`);
  await expect(
    startWorkerThread<To, From>({ name: "the throwing worker", url: throwing, start: { type: "start" }, onMessage: () => {}, onFailed: () => {} }),
  ).rejects.toThrow(/the throwing worker failed to start: .*no database here/);
});

test("a worker that fails later is reported once and is no longer alive; a stop then returns at once", async () => {
  const failed: string[] = [];
  const source = `self.onmessage = (e) => {
    if (e.data.type === "start") postMessage({ type: "started" });
    else if (e.data.type === "echo") throw new Error("boom " + e.data.n);
  };`;
  const t = await startWorkerThread<To, From>({ name: "the failing worker", url: module("failing.ts", source), start: { type: "start" }, onMessage: () => {}, onFailed: (e) => failed.push(e) });
  t.send({ type: "echo", n: 1 });
  const end = Date.now() + 5000;
  while (t.alive && Date.now() < end) await Bun.sleep(5);
  expect(t.alive).toBe(false);
  expect(failed.length).toBe(1);
  expect(failed[0]).toContain("boom 1");
  // nothing to wait for: a minute's wait would outlast the test's own time limit
  await t.stop({ type: "stop" }, 60_000);
});

test("a worker that never answers the stop is ended after the wait it was given", async () => {
  const deaf = module("deaf.ts", `self.onmessage = (e) => { if (e.data.type === "start") postMessage({ type: "started" }); };`);
  const t = await startWorkerThread<To, From>({ name: "the deaf worker", url: deaf, start: { type: "start" }, onMessage: () => {}, onFailed: () => {} });
  await t.stop({ type: "stop" }, 100);
  expect(t.alive).toBe(false);
  // a second stop is the same stop
  await t.stop({ type: "stop" }, 100);
});

// Linux: per-thread CPU (/proc/<pid>/task) is how the sustained benches tell the fold worker and the checkpointer apart
test.skipIf(!existsSync("/proc/self/task"))("a thread name given is the OS thread's name", async () => {
  // a thread may end between the listing and the read of its name (Bun's own pool threads come and go)
  const nameOf = (tid: string) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
    } catch {
      return null;
    }
  };
  const names = () => readdirSync("/proc/self/task").map(nameOf);
  expect(names()).not.toContain("vigil-test-echo");
  const t = await startWorkerThread<To, From>({ name: "the echo worker", threadName: "vigil-test-echo", url: module("named.ts", ECHO), start: { type: "start" }, onMessage: () => {}, onFailed: () => {} });
  try {
    expect(names()).toContain("vigil-test-echo");
  } finally {
    await t.stop({ type: "stop" }, 5000);
  }
});
