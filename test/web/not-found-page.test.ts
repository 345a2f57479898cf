/**
 * Issue 33 point 9: an address nothing serves, asked by a browser, is a page with a way back (the
 * dashboard's, for a signed-in person), not the API's JSON error; under /api/, and for clients that
 * do not ask for HTML, the JSON error stays.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
const BROWSER = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "alice");
  c = await signedInClient(s, "alice");
});
afterAll(() => s?.stop());

test.each([["/monitors/nope/abc"], ["/foo-bar"], ["/status-pages/1/nothing/here"]])("signed in, %s is a 404 page of the dashboard with a link back", async (path) => {
  const { res, text } = await c.get(path, BROWSER);
  expect(res.status).toBe(404);
  expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(text).toContain("<h1>Page not found</h1>");
  expect(text).toContain('<nav aria-label="Main">');
  expect(text).toContain('<a href="/">Back to monitors</a>');
  expect(text).toContain("alice");
  expect(text).not.toContain('"not_found"');
});

test("signed out, the page says not found with a way to the dashboard, and names nothing of any account", async () => {
  const res = await fetch(`${s.url}/foo-bar`, { headers: BROWSER });
  expect(res.status).toBe(404);
  const text = await res.text();
  expect(text).toContain("<h1>Page not found</h1>");
  expect(text).toContain('<a href="/">Go to the dashboard</a>');
  expect(text).not.toContain("alice");
  expect(text).not.toContain('<nav aria-label="Main">');
});

test("under /api/ a browser still gets the JSON error, and so does a client that does not ask for HTML anywhere", async () => {
  const token = { authorization: `Bearer ${s.token}` };
  for (const [path, headers] of [["/api/v1/nope", { ...BROWSER, ...token }], ["/apinope", token], ["/foo-bar", {}], ["/foo-bar", { accept: "application/json" }]] as [string, Record<string, string>][]) {
    const res = await fetch(`${s.url}${path}`, { headers: { ...headers, cookie: c.cookieHeader() } });
    expect({ path, status: res.status, json: (res.headers.get("content-type") ?? "").startsWith("application/json") }).toEqual({ path, status: 404, json: true });
    expect((await res.json()).error.code).toBe("not_found");
  }
});

test("a wrong method on a known page stays the 405 it was", async () => {
  const res = await fetch(`${s.url}/monitors/new`, { method: "DELETE", headers: { ...BROWSER, cookie: c.cookieHeader() } });
  expect(res.status).toBe(405);
});
