import { expect, test } from "bun:test";
import { ExpiringMap } from "../../src/lib/expiring-map.ts";

test("an entry is there until its end, then forgotten", () => {
  const m = new ExpiringMap<string>(10);
  m.set("a", "x", 1000);
  expect(m.get("a", 999)).toBe("x");
  expect(m.get("a", 1000)).toBeUndefined();
  expect(m.size).toBe(0);
});

test("beyond its bound the entry written longest ago goes first; a rewrite counts as new", () => {
  const m = new ExpiringMap<number>(3);
  for (const k of ["a", "b", "c"]) m.set(k, 1, 1e15);
  m.set("a", 2, 1e15);
  m.set("d", 1, 1e15);
  expect(m.size).toBe(3);
  expect(m.get("b", 0)).toBeUndefined();
  expect(m.get("a", 0)).toBe(2);
  expect(m.get("c", 0)).toBe(1);
  expect(m.get("d", 0)).toBe(1);
});
