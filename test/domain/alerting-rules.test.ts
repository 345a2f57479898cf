import { expect, test } from "bun:test";
import { cycleMessage, dependencyCycle } from "../../src/domain/alerting-rules.ts";

const edges = (pairs: [number, number[]][]) => new Map(pairs);

test.each([
  ["itself", 1, [1], edges([]), [1, 1]],
  ["two", 1, [2], edges([[2, [1]]]), [1, 2, 1]],
  ["three", 1, [2], edges([[2, [3]], [3, [1]]]), [1, 2, 3, 1]],
  ["through the second of several parents", 1, [5, 2], edges([[2, [3]], [3, [4]], [4, [1]], [5, [6]]]), [1, 2, 3, 4, 1]],
  ["a diamond is no cycle", 1, [2, 3], edges([[2, [4]], [3, [4]]]), null],
  ["the monitor's own current parents are replaced, not followed", 1, [2], edges([[1, [3]], [3, [1]], [2, []]]), null],
  ["a cycle elsewhere is not this write's", 1, [2], edges([[2, [3]], [3, [2]]]), null],
] as const)("%s", (_name, id, parents, graph, expected) => {
  expect(dependencyCycle(id, parents, graph as Map<number, number[]>)).toEqual(expected as number[] | null);
});

test("the messages name the monitors along the cycle", () => {
  expect(cycleMessage([4, 4])).toBe("cannot include the monitor itself");
  expect(cycleMessage([4, 9, 4])).toBe("would make a dependency cycle: 4 → 9 → 4 (each monitor depends on the next)");
});
