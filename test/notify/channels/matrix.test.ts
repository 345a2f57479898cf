import { expect, test } from "bun:test";
import { deliverOnce } from "../../../src/notify/deliver.ts";
import { PRIVATE_REPLY } from "../../../src/notify/http-post.ts";
import type { ReceivedRequest } from "../helpers.ts";
import { channel, DOWN, DOWN_LINES, DOWN_TEXT, receivers, UP } from "./fixtures.ts";

const receiver = receivers();
const TOKEN = "syt_dmlnaWw_secretToken_1a2b3c";
const ROOM = "!OpsRoom123:matrix.example.org";

/**
 * A homeserver as the client-server API behaves for room sends: the access token must be known, the
 * account must have joined the room, and a transaction id seen before returns the event it made
 * before instead of a second one.
 */
function homeserver() {
  const events = new Map<string, { event_id: string; content: Record<string, unknown> }>();
  const r = receiver((req: ReceivedRequest) => {
    const m = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/m\.room\.message\/([^/]+)$/.exec(req.path);
    if (!m || req.method !== "PUT") return Response.json({ errcode: "M_UNRECOGNIZED", error: "Unrecognized request" }, { status: 404 });
    if (req.headers.get("authorization") !== `Bearer ${TOKEN}`) return Response.json({ errcode: "M_UNKNOWN_TOKEN", error: "Unknown access token" }, { status: 401 });
    if (decodeURIComponent(m[1]!) !== ROOM) return Response.json({ errcode: "M_FORBIDDEN", error: "User not in room" }, { status: 403 });
    const txn = decodeURIComponent(m[2]!);
    if (!events.has(txn)) events.set(txn, { event_id: `$event${events.size + 1}`, content: JSON.parse(req.body) });
    return Response.json({ event_id: events.get(txn)!.event_id });
  });
  return { r, events };
}

const send = (p: typeof DOWN, settings: Record<string, unknown>, deliveryId: string) =>
  deliverOnce(p, channel("matrix", settings, [TOKEN]), new AbortController().signal, { deliveryId, timeoutMs: 5000 });

test("PUT m.room.message into the room with the Bearer token, plain and HTML bodies; a new transaction per message, the same on a retry", async () => {
  const { r, events } = homeserver();
  const settings = { url: `${r.url}/`, matrix_room_id: ROOM, matrix_access_token: TOKEN };
  const first = await send(DOWN, settings, "11111111-aaaa-5aaa-8aaa-111111111111");
  expect(first).toMatchObject({ ok: true, statusCode: 200 });
  const req = r.requests[0]!;
  expect(req.method).toBe("PUT");
  expect(req.path).toBe(`/_matrix/client/v3/rooms/${encodeURIComponent(ROOM)}/send/m.room.message/vigil-11111111-aaaa-5aaa-8aaa-111111111111`);
  expect(req.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
  expect(req.headers.get("content-type")).toBe("application/json");
  expect(JSON.parse(req.body)).toEqual({
    msgtype: "m.text",
    body: `🔴 DOWN: Checkout API\n\n${DOWN_TEXT}`,
    format: "org.matrix.custom.html",
    formatted_body:
      "<p><strong>🔴 DOWN: Checkout API</strong><br>Checkout API is down (was up).</p><ul>" +
      DOWN_LINES.map((l) => l.replace(/^([^:]+): (.*)$/, "<li><strong>$1:</strong> $2</li>")).join("") +
      '</ul><p><a href="https://vigil.example.com/monitors/7">Open in Vigil</a></p>',
  });
  // the recovery is a new message; a retry of it (same delivery id) is the same transaction, one event
  await send(UP, settings, "22222222-bbbb-5bbb-8bbb-222222222222");
  await send(UP, settings, "22222222-bbbb-5bbb-8bbb-222222222222");
  const txns = r.requests.map((q) => q.path.split("/").at(-1));
  expect(txns).toEqual(["vigil-11111111-aaaa-5aaa-8aaa-111111111111", "vigil-22222222-bbbb-5bbb-8bbb-222222222222", "vigil-22222222-bbbb-5bbb-8bbb-222222222222"]);
  expect(events.size).toBe(2);
  expect((events.get("vigil-22222222-bbbb-5bbb-8bbb-222222222222")!.content.body as string).split("\n")[0]).toBe("🟢 UP: Checkout API");
});

test("an unknown token or a room not joined fails permanently, without the token or the private reply", async () => {
  const { r } = homeserver();
  const badToken = await send(DOWN, { url: r.url, matrix_room_id: ROOM, matrix_access_token: "syt_wrong_token_999" }, "33333333-cccc-5ccc-8ccc-333333333333");
  expect(badToken).toMatchObject({ ok: false, statusCode: 401, permanent: true, error: `HTTP 401 ${PRIVATE_REPLY}` });
  const otherRoom = await send(DOWN, { url: r.url, matrix_room_id: "!Elsewhere:matrix.example.org", matrix_access_token: TOKEN }, "44444444-dddd-5ddd-8ddd-444444444444");
  expect(otherRoom).toMatchObject({ ok: false, statusCode: 403, permanent: true });
  expect(otherRoom.error).not.toContain(TOKEN);
});
