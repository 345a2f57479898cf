import { expect, test } from "bun:test";
import { channel, DOWN, DOWN_TEXT, receivers, send } from "./fixtures.ts";

const receiver = receivers();

test("signal-cli REST API: POST /v2/send {message, number, recipients}", async () => {
  // signal-cli-rest-api answers 201 {"timestamp": "..."}; an unregistered sender is a 400
  const r = receiver((req) => (JSON.parse(req.body).number === "+4915100000001" ? Response.json({ timestamp: "1763985600000" }, { status: 201 }) : Response.json({ error: "User +49000 is not registered" }, { status: 400 })));
  const recipients = ["+4917600000002", "group.ZmFtaWx5LWdyb3VwLWlk"];
  const ok = await send(DOWN, channel("signal", { url: `${r.url}/`, signal_number: "+4915100000001", signal_recipients: recipients }));
  expect(ok).toMatchObject({ ok: true, statusCode: 201 });
  const req = r.requests[0]!;
  expect([req.method, req.path, req.headers.get("content-type")]).toEqual(["POST", "/v2/send", "application/json"]);
  expect(JSON.parse(req.body)).toEqual({ message: `🔴 DOWN: Checkout API\n\n${DOWN_TEXT}`, number: "+4915100000001", recipients });
  const bad = await send(DOWN, channel("signal", { url: r.url, signal_number: "+4915199999999", signal_recipients: recipients }));
  expect(bad).toMatchObject({ ok: false, statusCode: 400, permanent: true });
});
