/**
 * The housekeeping threads of a server on SQLite, the ping journal's fold worker, the WAL
 * checkpointer and the maintenance job, run at a lower CPU priority than the thread that answers requests (README "Heartbeat
 * monitors", lib/background-thread.ts): on Linux the nice value is per thread, read here from
 * /proc/self/task/<tid>/stat of the test process, which runs the server.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { BACKGROUND_NICE } from "../../src/lib/background-thread.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";

const linux = existsSync("/proc/self/task");
let s: TestServer | null = null;

/** A thread's nice value: the 19th field of its stat, counted from the state that follows "(comm) ". */
function niceOf(tid: string | number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

/** name → nice value of this process's threads (a thread may end between the listing and the read) */
function threads(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      out.set(readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim(), niceOf(tid));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

// the three threads exist on SQLite only
const onSqliteLinux = linux && TEST_ENGINE === "sqlite";

beforeAll(async () => {
  if (onSqliteLinux) s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

test.skipIf(!onSqliteLinux)("the fold worker, the checkpointer and the maintenance worker run at the background nice value; the serving thread does not", async () => {
  // a worker's thread has its name from its creation and its nice value once its start message has run
  const housekeeping = ["vigil-fold", "vigil-checkpnt", "vigil-maint"];
  await waitFor(() => housekeeping.every((name) => threads().get(name) === BACKGROUND_NICE));
  const t = threads();
  expect(t.get("vigil-fold")).toBe(BACKGROUND_NICE);
  expect(t.get("vigil-checkpnt")).toBe(BACKGROUND_NICE);
  expect(t.get("vigil-maint")).toBe(BACKGROUND_NICE);
  // the main thread's id is the process id: it serves the requests, and keeps its priority
  expect(niceOf(process.pid)).toBe(0);
  // and the server still answers
  expect((await fetch(`${s!.url}/healthz`)).status).toBe(200);
});
