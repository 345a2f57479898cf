import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer(["--idle-timeout", "1"]);
});
afterAll(() => s.stop());

// /events sends a keep-alive only every 10 s; with --idle-timeout 1 the stream must still stay open.
test("the live event stream is not cut by a short --idle-timeout", async () => {
  await addUser(s, "idle-user");
  const c = await signedInClient(s, "idle-user");
  const ac = new AbortController();
  const res = await fetch(`${s.url}/events`, { headers: { cookie: c.cookieHeader() }, signal: ac.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read(); // the "connected" preamble
  expect(first.done).toBe(false);
  // Wait past the idle timeout several times over (Bun checks it every few seconds, so a stream cut by
  // it is cut within about 4 s), then make the server write: a monitor change.
  await Bun.sleep(6000);
  const created = await s.api("POST", "/api/v1/monitors", { name: "x", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000 });
  expect(created.status).toBe(201);
  let text = "";
  const deadline = Date.now() + 5000;
  while (!text.includes("event: changed") && Date.now() < deadline) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  ac.abort();
  expect(text).toContain("event: changed");
});
