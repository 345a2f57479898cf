/**
 * The fold worker's handle (store/ping-fold-thread.ts) when the worker fails: a start that cannot
 * happen is refused at once (the server then folds on its own thread), and a worker that fails
 * later is marked dead, so the writer stops giving it passes that would never end. The fold worker
 * folds SQLite's ping journal: PostgreSQL has neither, so these are skipped there.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFoldThread } from "../../src/store/ping-fold-thread.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("vigil-fold-thread-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function logger() {
  const lines: Record<string, unknown>[] = [];
  return { lines, log: createLogger("info", "heartbeat", (l) => lines.push(JSON.parse(l))) };
}
const options = (module: string, log: ReturnType<typeof logger>["log"]) => ({ databasePath: join(dir, "vigil.db"), dataDir: dir, region: "local", slice: 500, module, onFolded: () => {}, log });

describe.skipIf(TEST_ENGINE === "postgres")("the fold worker's handle", () => {
  test("a worker module that cannot be loaded: the start is refused, it does not hang", async () => {
    const { log } = logger();
    await expect(startFoldThread(options(join(dir, "no-such-worker.ts"), log))).rejects.toThrow(/fold worker/);
  });

  test("a worker that fails during a pass: the pass is false, the worker is dead, later passes return at once", async () => {
    const module = join(dir, "failing-worker.ts");
    writeFileSync(
      module,
      `self.onmessage = (e) => {
         if (e.data.type === "start") postMessage({ type: "started" });
         else if (e.data.type === "fold") throw new Error("boom");
       };`,
    );
    const { log, lines } = logger();
    const thread = await startFoldThread(options(module, log));
    expect(thread.alive).toBe(true);
    expect(await thread.fold(0, 1)).toBe(false);
    expect(thread.alive).toBe(false);
    expect(lines.some((l) => String(l.msg).startsWith("the fold worker failed"))).toBe(true);
    expect(await thread.fold(1, 2)).toBe(false);
    await thread.stop();
  });
});
