import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, unescape, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "admin");
  c = await signedInClient(s, "admin");
});
afterAll(async () => {
  await s.stop();
});

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescape(m[1]!) : null;
};

/**
 * What a browser sends when the form posting to `action` is submitted as it stands (with `button`,
 * a submit button's name and value, when one is pressed): its fields in document order.
 */
function submitted(page: string, action: string, button?: [string, string]): URLSearchParams {
  const start = page.indexOf(`action="${action}"`);
  const form = page.slice(start, page.indexOf("</form>", start));
  const out = new URLSearchParams();
  for (const m of form.matchAll(/<input\b[^>]*>|<select\b[^>]*>[\s\S]*?<\/select>|<textarea\b[^>]*>[\s\S]*?<\/textarea>/g)) {
    const tag = m[0];
    const name = attr(tag, "name");
    if (!name) continue;
    if (tag.startsWith("<select")) {
      const o = /<option(?: value="([^"]*)")? selected>([^<]*)</.exec(tag) ?? /<option(?: value="([^"]*)")?>([^<]*)</.exec(tag);
      out.append(name, unescape(o?.[1] ?? o?.[2] ?? ""));
    } else if (tag.startsWith("<textarea")) out.append(name, unescape(/>([\s\S]*?)<\/textarea>/.exec(tag)![1]!));
    else {
      const type = attr(tag, "type") ?? "text";
      if ((type === "checkbox" || type === "radio") && !/\schecked\b/.test(tag)) continue;
      out.append(name, attr(tag, "value") ?? (type === "checkbox" ? "on" : ""));
    }
  }
  if (button) out.append(button[0], button[1]);
  return out;
}

const orderOf = async (id: number) => (await s.api("GET", `/api/v1/status-pages/${id}`)).json.data.attributes.monitor_ids as number[];

describe("status page editor: the monitors shown and their order", () => {
  test("saving the form unchanged keeps an order set through the API", async () => {
    const [a, b, cc] = [await createMonitor(s, httpAttrs({ name: "Alpha" })), await createMonitor(s, httpAttrs({ name: "Bravo" })), await createMonitor(s, httpAttrs({ name: "Charlie" }))];
    const created = await s.api("POST", "/api/v1/status-pages", { name: "Ordered", slug: "ordered", monitor_ids: [cc, a, b] });
    const id = Number(created.json.data.id);
    const edit = await c.get(`/status-pages/${id}/edit`);
    const saved = await c.post(`/status-pages/${id}`, submitted(edit.text, `/status-pages/${id}`));
    expect(saved.res.status).toBe(303);
    expect(await orderOf(id)).toEqual([cc, a, b]);
  });
});

describe("status page editor without script", () => {
  const chosenIn = (page: string, action: string) => submitted(page, action).getAll("monitor_ids").map(Number);

  test("Up, Down, Remove and Add show the form again with the new order, saved only by Save", async () => {
    const [a, b, cc, d] = [await createMonitor(s, httpAttrs({ name: "One" })), await createMonitor(s, httpAttrs({ name: "Two" })), await createMonitor(s, httpAttrs({ name: "Three" })), await createMonitor(s, httpAttrs({ name: "Four" }))];
    const created = await c.post("/status-pages", { name: "Moves", slug: "moves", public_theme: "light", is_public: "true", is_enabled: "true", monitor_ids: [String(a), String(b), String(cc)] });
    const id = Number(/\/status-pages\/(\d+)\/edit/.exec(created.res.headers.get("location")!)![1]);
    const action = `/status-pages/${id}`;
    let page = (await c.get(`${action}/edit`)).text;
    expect(chosenIn(page, action)).toEqual([a, b, cc]);

    const down = await c.post(action, submitted(page, action, ["order", `down:${a}`]));
    expect(down.res.status).toBe(200);
    page = down.text;
    expect(chosenIn(page, action)).toEqual([b, a, cc]);
    expect(await orderOf(id)).toEqual([a, b, cc]); // not saved yet

    page = (await c.post(action, submitted(page, action, ["order", `up:${cc}`]))).text;
    expect(chosenIn(page, action)).toEqual([b, cc, a]);
    // the picker offers only the monitors not chosen
    expect(page).toContain(`name="add_monitor_ids" value="${d}"`);
    expect(page).not.toContain(`name="add_monitor_ids" value="${a}"`);
    const add = submitted(page, action, ["order", "add"]);
    add.append("add_monitor_ids", String(d));
    page = (await c.post(action, add)).text;
    expect(chosenIn(page, action)).toEqual([b, cc, a, d]);
    page = (await c.post(action, submitted(page, action, ["order", `remove:${b}`]))).text;
    expect(chosenIn(page, action)).toEqual([cc, a, d]);
    // the first one's Up and the last one's Down change nothing
    page = (await c.post(action, submitted(page, action, ["order", `up:${cc}`]))).text;
    page = (await c.post(action, submitted(page, action, ["order", `down:${d}`]))).text;
    expect(chosenIn(page, action)).toEqual([cc, a, d]);

    const saved = await c.post(action, submitted(page, action));
    expect(saved.res.status).toBe(303);
    expect(await orderOf(id)).toEqual([cc, a, d]);
  });

  test("a monitor ticked in the picker and saved goes at the end; the buttons are named for the monitor they move", async () => {
    const [a, b] = [await createMonitor(s, httpAttrs({ name: "Web <front>" })), await createMonitor(s, httpAttrs({ name: "Mail" }))];
    const id = Number((await s.api("POST", "/api/v1/status-pages", { name: "Picked", slug: "picked", monitor_ids: [b] })).json.data.id);
    const action = `/status-pages/${id}`;
    const page = (await c.get(`${action}/edit`)).text;
    expect(page).toContain(`aria-label="Up Mail"`);
    expect(page).toContain("Web &lt;front&gt;");
    const form = submitted(page, action);
    form.append("add_monitor_ids", String(a));
    expect((await c.post(action, form)).res.status).toBe(303);
    expect(await orderOf(id)).toEqual([b, a]);
  });
});
