/**
 * The share rule (src/cluster/share.ts, README "Several instances"): every monitor has exactly one
 * owner among a region's live instances, every instance computes the same owner from the same
 * membership whatever order it lists it in, the monitors spread evenly, and a join or a leave moves
 * only the monitors of the instance that came or went.
 */
import { describe, expect, test } from "bun:test";
import { Share } from "../../src/cluster/share.ts";

const MONITORS = Array.from({ length: 3000 }, (_, i) => i + 1);
const ids = (n: number) => Array.from({ length: n }, (_, i) => `inst${i}-${(i * 7919).toString(16)}`);

function owners(members: string[]): Map<number, string> {
  const share = new Share(members[0]!, members);
  return new Map(MONITORS.map((m) => [m, share.ownerOf(m)!]));
}

describe("share", () => {
  test.each([1, 2, 3, 5])("with %i instances each monitor is owned by exactly one, the same on every instance", (n) => {
    const members = ids(n);
    const views = members.map((self, k) => new Share(self, k % 2 ? [...members].reverse() : members));
    for (const m of MONITORS) expect(views.filter((v) => v.owns(m)).length).toBe(1);
    const first = owners(members);
    for (const v of views) for (const m of MONITORS.slice(0, 200)) expect(v.ownerOf(m)).toBe(first.get(m)!);
  });

  test.each([2, 3, 5])("with %i instances the monitors spread evenly (each within 20% of its fair part)", (n) => {
    const counts = new Map<string, number>();
    for (const o of owners(ids(n)).values()) counts.set(o, (counts.get(o) ?? 0) + 1);
    const fair = MONITORS.length / n;
    expect(counts.size).toBe(n);
    for (const c of counts.values()) expect(Math.abs(c - fair)).toBeLessThan(0.2 * fair);
  });

  test("a joining instance takes monitors only from the others; a leaving one hands over only its own", () => {
    const three = ids(3);
    const before = owners(three);
    const after = owners([...three, "newcomer-1"]);
    let moved = 0;
    for (const m of MONITORS) {
      if (before.get(m) === after.get(m)) continue;
      moved++;
      expect(after.get(m)).toBe("newcomer-1");
    }
    expect(moved).toBeGreaterThan(0);
    const left = owners(three.slice(1));
    for (const m of MONITORS) if (before.get(m) !== three[0]) expect(left.get(m)).toBe(before.get(m)!);
  });

  test("an instance that is not a member owns nothing; one alone owns everything", () => {
    const outside = new Share("joining", ids(2));
    expect(MONITORS.some((m) => outside.owns(m))).toBe(false);
    const alone = new Share("only", ["only"]);
    expect(MONITORS.every((m) => alone.owns(m))).toBe(true);
    expect(new Share("x", []).ownerOf(1)).toBeNull();
  });
});
