/**
 * The pattern worker shared by accounts (scheduler/pattern-thread.ts, README "Regular
 * expressions"), on the real worker thread: waiting batches are taken account by account in turn,
 * and a batch still matching at the time limit is ended with the limit named, the next batch
 * getting a new worker.
 */
import { afterEach, expect, test } from "bun:test";
import type { PatternBatch } from "../../src/domain/user-patterns.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { patternThread, type PatternThread } from "../../src/scheduler/pattern-thread.ts";

const lines: string[] = [];
const log = createLogger("debug", "vigil", (l) => lines.push(l));
let thread: PatternThread | null = null;
afterEach(async () => {
  await thread?.stop();
  thread = null;
  lines.length = 0;
});

const never = new AbortController().signal;
const cheap = (value: string): PatternBatch => ({ texts: [value], jobs: [{ pattern: "^(ok|up)$", text: 0, want: "test" }] });
/** Twenty capture groups over 1 MiB: seconds of matching each (BENCHMARKS.md, "Regular expressions"). */
const MIB = Array.from({ length: 1 << 20 }, (_, i) => "abcdefghij 0123456789"[(i * 7919) % 21]).join("");
const slow: PatternBatch = { texts: [MIB], jobs: Array.from({ length: 20 }, (_, i) => ({ pattern: `((?:[a-j]+[0-9]*){1,100})[^a-j0-9 ]{${i + 2}}`, text: 0, want: "group" as const })) };

test("waiting batches are taken account by account: one account's backlog is passed by another's batch", async () => {
  thread = patternThread(log, { timeLimitMs: 60_000 });
  const a = thread.forAccount(1);
  const b = thread.forAccount(2);
  const done: string[] = [];
  const ran = (name: string, p: Promise<unknown>) => p.then(() => done.push(name));
  // account 1's first batch is taken at once; the rest of its backlog waits, then account 2's batch
  const all = [ran("a1", a.run(cheap("ok"), never)), ran("a2", a.run(cheap("ok"), never)), ran("a3", a.run(cheap("up"), never)), ran("a4", a.run(cheap("no"), never)), ran("b1", b.run(cheap("ok"), never))];
  await Promise.all(all);
  expect(done).toEqual(["a1", "b1", "a2", "a3", "a4"]);
});

test("a batch still matching at the time limit fails naming the limit; the batch behind it gets a new worker", async () => {
  thread = patternThread(log, { timeLimitMs: 200 });
  const a = thread.forAccount(1);
  const b = thread.forAccount(2);
  const slowOne = a.run(slow, never).then(
    () => "matched",
    (err: Error) => err.message,
  );
  const next = b.run(cheap("ok"), never);
  expect(await slowOne).toContain("still matching after 200 ms");
  expect(await slowOne).toContain("--pattern-time-limit-ms");
  expect(await next).toEqual([{ matched: true, group: null }]);
  const warned = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "patterns still running at the time limit: the pattern worker was ended");
  expect(warned).toMatchObject([{ account_id: 1, limit_ms: 200 }]);
});

test("a batch whose check's deadline passes while it waits is refused, and the turn goes on", async () => {
  thread = patternThread(log, { timeLimitMs: 60_000 });
  const a = thread.forAccount(1);
  const b = thread.forAccount(2);
  const deadline = new AbortController();
  const first = a.run(cheap("ok"), never);
  const given = b.run(cheap("ok"), deadline.signal).then(
    () => "matched",
    (err: Error) => err.message,
  );
  const after = a.run(cheap("up"), never);
  deadline.abort();
  expect(await given).toBe("the check's timeout_ms passed before its patterns were matched");
  expect(await first).toEqual([{ matched: true, group: null }]);
  expect(await after).toEqual([{ matched: true, group: null }]);
});

test("with two workers, a batch is matched while the other worker is still busy with a long one", async () => {
  thread = patternThread(log, { timeLimitMs: 60_000, workers: 2 });
  const deadline = new AbortController();
  const long = thread.forAccount(1).run(slow, deadline.signal).then(
    () => "matched",
    (err: Error) => err.message,
  );
  let longDone = false;
  void long.then(() => (longDone = true));
  expect(await thread.forAccount(2).run(cheap("ok"), never)).toEqual([{ matched: true, group: null }]);
  expect(longDone).toBe(false);
  deadline.abort();
  expect(await long).toBe("the check's timeout_ms passed before its patterns were matched");
});
