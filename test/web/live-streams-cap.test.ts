import { afterAll, beforeAll, expect, test } from "bun:test";
import { STREAMS_PER_SESSION } from "../../src/web/live-events.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, type WebClient } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

interface Stream {
  ended: boolean;
  text: string;
  abort(): void;
}

/** Opens /events and reads it in the background; resolves once the "connected" preamble arrived. */
async function openStream(c: WebClient): Promise<Stream> {
  const ac = new AbortController();
  const res = await fetch(`${s.url}/events`, { headers: { cookie: c.cookieHeader() }, signal: ac.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const stream: Stream = { ended: false, text: "", abort: () => ac.abort() };
  const first = await reader.read();
  stream.text += new TextDecoder().decode(first.value);
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        stream.text += new TextDecoder().decode(chunk.value);
      }
    } catch {}
    stream.ended = true;
  })();
  return stream;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond() && Date.now() < deadline) await Bun.sleep(20);
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

test(`a session holds at most ${STREAMS_PER_SESSION} live streams: each one past that ends the session's oldest; other sessions are not touched`, async () => {
  await addUser(s, "tabby");
  const c = await signedInClient(s, "tabby");
  const other = await signedInClient(s, "tabby"); // a second sign-in: its own session
  const elsewhere = await openStream(other);
  const streams: Stream[] = [];
  for (let i = 0; i < STREAMS_PER_SESSION; i++) streams.push(await openStream(c));
  expect(streams.every((x) => x.text.includes(": connected"))).toBe(true);
  // one more: the oldest gives way
  streams.push(await openStream(c));
  await until(() => streams[0]!.ended, "the oldest stream to end");
  // many more (1,000 used to be accepted): only the newest STREAMS_PER_SESSION stay open
  for (let i = 0; i < 3 * STREAMS_PER_SESSION; i++) streams.push(await openStream(c));
  const keep = streams.length - STREAMS_PER_SESSION;
  await until(() => streams.slice(0, keep).every((x) => x.ended), "every older stream to end");
  // the survivors and the other session's stream still carry events
  const created = await s.api("POST", "/api/v1/monitors", { name: "tab test", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000 });
  expect(created.status).toBe(201);
  const live = [...streams.slice(keep), elsewhere];
  await until(() => live.every((x) => x.text.includes("event: changed")), "the change event on every open stream");
  expect(live.some((x) => x.ended)).toBe(false);
  for (const x of [...streams, elsewhere]) x.abort();
}, 30_000);
