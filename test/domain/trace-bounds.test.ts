/** The trace bounds alone: what is kept of bodies whose JSON costs more than their characters. */
import { describe, expect, test } from "bun:test";
import { boundTrace, cutUtf8, traceBytes } from "../../src/domain/trace-bounds.ts";

describe("cutUtf8", () => {
  test.each([
    ["ascii", "abcdef", 4, "abcd"],
    ["two-byte letters", "ééé", 5, "éé"],
    ["an emoji is never split", "a😀b", 4, "a"],
    ["nothing room", "abc", 0, ""],
    ["fits", "abc", 10, "abc"],
  ])("%s", (_, text, max, kept) => {
    expect(cutUtf8(text, max)).toBe(kept);
  });
});

describe("boundTrace", () => {
  const limit = { bytes: 4096, what: "the test's 4 KiB" };
  test.each([
    ["control characters (six bytes each once escaped)", "\u0001".repeat(10_000)],
    ["quotes and backslashes", '"\\'.repeat(10_000)],
    ["emoji", "😀".repeat(10_000)],
  ])("bodies of %s are shortened within the limit", (_, body) => {
    const trace = { steps: [{ name: "one", status: 200, body }, { name: "two", status: 200, body }] };
    const out = boundTrace(trace, limit);
    expect(out.cut).toBe(true);
    expect(out.bytes).toBe(traceBytes(out.trace));
    expect(out.bytes).toBeLessThanOrEqual(limit.bytes);
    const steps = out.trace!.steps as { body: string; body_truncated: boolean }[];
    for (const st of steps) {
      expect(st.body_truncated).toBe(true);
      expect(body.startsWith(st.body)).toBe(true);
      expect(st.body.length).toBeGreaterThan(0);
    }
    expect(out.trace!.reason).toBe("trace cut: over the test's 4 KiB, so the steps' response bodies are shortened to fit");
  });

  test("a second cut adds its reason to the first", () => {
    const first = boundTrace({ truncated: true, reason: "trace cut: a step keeps at most 64 KiB of its response body", steps: [{ name: "one", body: "z".repeat(9000) }] }, limit);
    expect(first.trace!.reason).toBe("trace cut: a step keeps at most 64 KiB of its response body; over the test's 4 KiB, so the steps' response bodies are shortened to fit");
  });

  test("a trace within the limit is kept as it is", () => {
    const trace = { steps: [{ name: "one", body: "short" }] };
    expect(boundTrace(trace, limit)).toEqual({ trace, cut: false, bytes: traceBytes(trace) });
  });
});
