import { describe, expect, test } from "bun:test";
import { FairQueue } from "../../src/scheduler/fair-queue.ts";

/** Takes runs while the queue gives them, starting each; returns their items. */
function drain(q: FairQueue<string>): string[] {
  const out: string[] = [];
  for (let run = q.next(); run; run = q.next()) {
    q.started(run.account);
    out.push(run.item);
  }
  return out;
}

describe("FairQueue", () => {
  test("one account: first in, first out, up to the global cap whatever the share", () => {
    const q = new FairQueue<string>(3, 1);
    q.scheduled(1, 1);
    for (const [i, item] of ["a", "b", "c", "d"].entries()) q.push(item, 1, 100 + i);
    expect(drain(q)).toEqual(["a", "b", "c"]);
    expect({ waiting: q.waiting, inFlight: q.inFlight, oldest: q.oldestDueAt() }).toEqual({ waiting: 1, inFlight: 3, oldest: 103 });
    q.finished(1);
    expect(drain(q)).toEqual(["d"]);
    expect(q.oldestDueAt()).toBeNull();
  });

  test("several accounts: waiting runs are taken from each account in turn, not in arrival order", () => {
    const q = new FairQueue<string>(100, 100);
    for (const a of [1, 2, 3]) q.scheduled(a, 1);
    // account 1's backlog arrived first
    for (let i = 0; i < 4; i++) q.push(`busy${i}`, 1, i);
    q.push("x", 2, 10);
    q.push("y", 3, 11);
    q.push("x2", 2, 12);
    expect(drain(q)).toEqual(["busy0", "x", "y", "busy1", "x2", "busy2", "busy3"]);
  });

  test("an account holding its share waits while others take the free slots; a finished run frees its share", () => {
    const q = new FairQueue<string>(4, 2);
    q.scheduled(1, 1);
    q.scheduled(2, 1);
    for (let i = 0; i < 5; i++) q.push(`busy${i}`, 1, i);
    expect(drain(q)).toEqual(["busy0", "busy1"]);
    // two slots stay free for the other account, though account 1 has three runs waiting
    expect({ inFlight: q.inFlight, waiting: q.waiting }).toEqual({ inFlight: 2, waiting: 3 });
    q.push("quiet", 2, 9);
    expect(drain(q)).toEqual(["quiet"]);
    q.finished(1);
    expect(drain(q)).toEqual(["busy2"]);
    expect(q.oldestDueAt()).toBe(3);
  });

  test("the share applies only while monitors of two accounts or more are scheduled", () => {
    const q = new FairQueue<string>(4, 1);
    q.scheduled(1, 1);
    q.scheduled(2, 1);
    for (let i = 0; i < 4; i++) q.push(`a${i}`, 1, i);
    expect(drain(q)).toEqual(["a0"]);
    q.scheduled(2, -1);
    expect(drain(q)).toEqual(["a1", "a2", "a3"]);
  });

  test("clear drops the waiting runs and keeps the slots held counted", () => {
    const q = new FairQueue<string>(1, 1);
    q.scheduled(1, 1);
    q.push("a", 1, 0);
    q.push("b", 1, 1);
    expect(drain(q)).toEqual(["a"]);
    q.clear();
    expect({ waiting: q.waiting, inFlight: q.inFlight, next: q.next() }).toEqual({ waiting: 0, inFlight: 1, next: null });
  });

  test("a long line is served in order across the compaction of its array", () => {
    const q = new FairQueue<number>(5000, 5000);
    q.scheduled(1, 1);
    for (let i = 0; i < 3000; i++) q.push(i, 1, i);
    const got: number[] = [];
    for (let run = q.next(); run; run = q.next()) {
      got.push(run.item);
      if (got.length === 1500) for (let i = 3000; i < 3100; i++) q.push(i, 1, i);
    }
    expect(got).toEqual(Array.from({ length: 3100 }, (_, i) => i));
  });
});
