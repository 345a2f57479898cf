import { expect, test } from "bun:test";
import { RoundRobinQueue } from "../../src/lib/round-robin-queue.ts";

/** Everything the queue gives, in order, until it is empty. */
function drain<T>(q: RoundRobinQueue<T>): T[] {
  const out: T[] = [];
  for (let item = q.shift(); item !== undefined; item = q.shift()) out.push(item);
  return out;
}

test("owners take turns, one item each, each owner's items in the order they came", () => {
  const q = new RoundRobinQueue<string>();
  for (const item of ["a1", "a2", "a3", "a4"]) q.push(1, item);
  q.push(2, "b1");
  q.push(3, "c1");
  q.push(2, "b2");
  expect(q.size).toBe(7);
  expect(drain(q)).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4"]);
  expect(q.size).toBe(0);
});

test("an owner arriving while another's backlog is served waits for one item of it, not the backlog", () => {
  const q = new RoundRobinQueue<string>();
  for (let i = 1; i <= 50; i++) q.push(1, `a${i}`);
  expect(q.shift()).toBe("a1");
  // arrives while a1 is being served: next, before a2
  q.push(2, "b1");
  expect(q.shift()).toBe("b1");
  expect(q.shift()).toBe("a2");
  // owners arriving while a2 is served both come before a3
  q.push(2, "b2");
  q.push(3, "c1");
  expect(drain(q).slice(0, 4)).toEqual(["b2", "c1", "a3", "a4"]);
});

test("the owner just served, with nothing left, comes back at the end of the line", () => {
  const q = new RoundRobinQueue<string>();
  q.push(1, "a1");
  q.push(2, "b1");
  expect(q.shift()).toBe("a1");
  q.push(1, "a2");
  q.push(3, "c1");
  expect(drain(q)).toEqual(["b1", "c1", "a2"]);
});

test("an item given up while waiting leaves its owner's line; the turn order of the rest holds", () => {
  const q = new RoundRobinQueue<string>();
  q.push(1, "a1");
  q.push(2, "b1");
  q.push(1, "a2");
  q.push(3, "c1");
  expect(q.remove(2, "b1")).toBe(true);
  expect(q.remove(2, "b1")).toBe(false);
  expect(q.remove(3, "a1")).toBe(false);
  expect(q.size).toBe(3);
  expect(q.shift()).toBe("a1");
  // taken from the owner being served
  expect(q.remove(1, "a2")).toBe(true);
  expect(drain(q)).toEqual(["c1"]);
});

test("clear gives back every waiting item and empties the queue", () => {
  const q = new RoundRobinQueue<string>();
  q.push(1, "a1");
  q.push(1, "a2");
  q.push(2, "b1");
  expect(q.shift()).toBe("a1");
  expect(q.clear().sort()).toEqual(["a2", "b1"]);
  expect(q.size).toBe(0);
  expect(q.shift()).toBeUndefined();
});
