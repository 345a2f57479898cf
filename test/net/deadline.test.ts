/**
 * raceDeadline (src/net/deadline.ts): once the deadline has passed, the work it was handed is no
 * longer awaited by anyone; its later failure must not become an unhandled rejection.
 */
import { expect, test } from "bun:test";
import { raceDeadline, startDeadline } from "../../src/net/deadline.ts";

test("work that fails after its deadline passed is not an unhandled rejection", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const deadline = startDeadline(1, new AbortController().signal);
    const deadlineAt = Date.now() + 5000;
    while (!deadline.signal.aborted && Date.now() < deadlineAt) await Bun.sleep(5);
    expect(deadline.signal.aborted).toBe(true);
    let fail!: (e: Error) => void;
    const work = new Promise<string>((_, reject) => (fail = reject));
    await expect(raceDeadline(work, deadline, "resolving example.test")).rejects.toThrow();
    fail(new Error("lookup refused, too late"));
    // a few turns of the event loop for the rejection to be reported, if it is
    for (let i = 0; i < 5; i++) await Bun.sleep(1);
    expect(unhandled).toEqual([]);
    deadline.dispose();
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
