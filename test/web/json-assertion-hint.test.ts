/**
 * Issue 33 point 9: the monitor form's hint for JSON assertions shows a rule the same form accepts:
 * its example, taken from the page and posted back, creates the monitor with that rule.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, unescape, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "alice");
  c = await signedInClient(s, "alice");
});
afterAll(() => s?.stop());

const hintOf = (page: string) => unescape(/<span class="hint" id="f-api_json_assertions_json-hint">([^<]*)<\/span>/.exec(page)?.[1] ?? "");

test("the hint's example, posted through the form, is saved as it reads", async () => {
  const hint = hintOf((await c.get("/monitors/new?type=http")).text);
  const example = /e\.g\. (\[.*?\]);/.exec(hint)?.[1];
  expect(example).toBeDefined();
  const rules = JSON.parse(example!);
  const r = await c.post("/monitors", { monitor_type: "http", name: "json api", target: "http://127.0.0.1:9/", interval_sec: "60", timeout_ms: "5000", api_json_assertions_json: example! });
  expect(r.res.status).toBe(303);
  const id = /\/monitors\/(\d+)/.exec(r.res.headers.get("location") ?? "")![1];
  expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.api_json_assertions_json).toEqual(rules);
});
