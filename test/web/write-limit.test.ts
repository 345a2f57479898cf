/**
 * Dashboard form submissions are limited per user and account (--web-write-limit, README
 * "Security", Limits), as API requests are per account: over it a page says so with 429.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(["--web-write-limit", "3"]);
  await addUser(s, "alice");
  await addUser(s, "bob");
});
afterAll(() => s?.stop());

const form = (name: string) => ({ monitor_type: "http", name, target: "http://127.0.0.1:9/", interval_sec: "60", timeout_ms: "5000", is_paused: "on" });
const named = async (prefix: string) => (await s.ctx.db.selectFrom("monitors").select("name").execute()).filter((m) => m.name.startsWith(prefix)).length;

describe("dashboard writes", () => {
  test("past the limit a form is refused with 429, a page that says why and Retry-After; nothing is written; another user is not held", async () => {
    const alice = await signedInClient(s, "alice");
    for (let i = 0; i < 3; i++) expect((await alice.post("/monitors", form(`alice ${i}`))).res.status).toBe(303);
    const refused = await alice.post("/monitors", form("alice 3"));
    expect(refused.res.status).toBe(429);
    expect(refused.text).toContain("Too many changes");
    expect(refused.text).toContain("More than 3 changes a minute");
    const retry = Number(refused.res.headers.get("retry-after"));
    expect(retry >= 1 && retry <= 60).toBe(true);
    expect(await named("alice")).toBe(3);
    // reading is not writing
    expect((await alice.get("/")).res.status).toBe(200);
    const bob = await signedInClient(s, "bob");
    expect((await bob.post("/monitors", form("bob 0"))).res.status).toBe(303);
    expect(s.logs.some((l) => l.msg === "form refused: over the dashboard's write limit" && l.limit === 3)).toBe(true);
  });
});
