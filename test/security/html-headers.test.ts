/**
 * Every HTML answer carries the security headers (issue 10: CSP, frame-ancestors, nosniff, referrer
 * policy): each route of the web plugin, enumerated from the plugin itself so new pages are covered,
 * is requested signed in and signed out, GET and POST (a POST without its CSRF token still answers
 * with a page), plus the API docs page. Any text/html response must have all four.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { LiveStreams } from "../../src/web/live-events.ts";
import { webPlugin } from "../../src/web/service.ts";
import { WebContext } from "../../src/web/web-context.ts";
import { httpAttrs } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, type WebClient } from "../web/helpers.ts";

let s: TestServer;
let client: WebClient;
const ids: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "alice");
  client = await signedInClient(s, "alice");
  ids.monitor = (await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "web" }))).json.data.id;
  const page = (await s.api("POST", "/api/v1/status-pages", { name: "Public page", monitor_ids: [Number(ids.monitor)] })).json.data;
  ids.page = page.id;
  ids.slug = page.attributes.slug;
  ids.channel = (await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: "http://127.0.0.1:9/hook" })).json.data.id;
  ids.token = String((await s.ctx.db.selectFrom("api_tokens").select("id").executeTakeFirstOrThrow()).id);
  ids.window = (await s.api("POST", "/api/v1/maintenance-windows", { name: "upgrade", monitor_ids: [Number(ids.monitor)], schedule: "0 3 * * 0", duration_sec: 3600 })).json.data.id;
});
afterAll(() => s?.stop());

function fill(path: string): string {
  return path
    .replace(/^\/monitors\/:id/, `/monitors/${ids.monitor}`)
    .replace(/^\/status-pages\/:id/, `/status-pages/${ids.page}`)
    .replace(/^\/channels\/:id/, `/channels/${ids.channel}`)
    .replace(/^\/tokens\/:id/, `/tokens/${ids.token}`)
    .replace(/^\/maintenance\/:id/, `/maintenance/${ids.window}`)
    .replace(":slug", ids.slug!)
    .replace(":hash", "0")
    .replace(":name", "x.css");
}

function problems(res: Response): string[] {
  const out: string[] = [];
  const csp = res.headers.get("content-security-policy") ?? "";
  if (!/default-src/.test(csp)) out.push("no Content-Security-Policy");
  if (!/frame-ancestors/.test(csp)) out.push("no frame-ancestors");
  if (res.headers.get("x-content-type-options") !== "nosniff") out.push("no X-Content-Type-Options: nosniff");
  if (!res.headers.get("referrer-policy")) out.push("no Referrer-Policy");
  return out;
}

test("every HTML page of the web plugin and the API docs carries CSP, frame-ancestors, nosniff and Referrer-Policy", async () => {
  const routes = webPlugin(new WebContext(s.ctx), new LiveStreams()).routes as { method: string; path: string }[];
  expect(routes.length).toBeGreaterThan(10);
  const failures: string[] = [];
  const htmlSeen = new Set<string>();
  const check = (label: string, res: Response) => {
    if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) return;
    htmlSeen.add(label.split(" ").slice(0, 2).join(" "));
    for (const p of problems(res)) failures.push(`${label} (${res.status}): ${p}`);
  };
  for (const r of routes) {
    if (r.path === "/events") continue; // an event stream, not a page
    const path = fill(r.path);
    if (r.method === "GET") {
      check(`GET ${r.path} signed in`, (await client.get(path)).res);
      const anon = await fetch(s.url + path, { redirect: "manual" });
      await anon.arrayBuffer();
      check(`GET ${r.path} signed out`, anon);
    } else {
      // no CSRF token: refused, with a page; nothing is changed
      check(`POST ${r.path} without csrf`, (await client.post(path, { name: "x" }, { csrf: null })).res);
    }
  }
  const docs = await fetch(s.url + "/docs");
  await docs.arrayBuffer();
  check("GET /docs", docs);
  expect(htmlSeen.has("GET /docs")).toBe(true);
  console.log(`html headers: ${htmlSeen.size} HTML answers checked over ${routes.length} web routes and /docs`);
  expect(htmlSeen.size).toBeGreaterThan(15);
  expect(failures).toEqual([]);
});
