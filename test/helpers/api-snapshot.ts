import { expect } from "bun:test";
import { apiClient } from "./server.ts";

/**
 * A server's answers to every list and detail the API has for an account, and a status page's JSON,
 * bodies without `meta` (request ids, rate limits): two servers on copies of one database (a
 * migration, a restore) must give equal ones.
 */
export async function apiSnapshot(base: string, token: string, slug: string): Promise<Record<string, unknown>> {
  const api = apiClient(base, token);
  const out: Record<string, unknown> = {};
  const get = async (path: string) => {
    const r = await api("GET", path);
    expect({ path, status: r.status }).toEqual({ path, status: 200 });
    const { meta: _meta, ...body } = r.json;
    out[path] = body;
    return body as { data: { id: string }[] };
  };
  for (const m of (await get("/api/v1/monitors?per_page=100")).data) {
    await get(`/api/v1/monitors/${m.id}`);
    await get(`/api/v1/monitors/${m.id}/checks?per_page=100`);
    await get(`/api/v1/monitors/${m.id}/events?per_page=100`);
  }
  for (const i of (await get("/api/v1/incidents?per_page=100")).data) await get(`/api/v1/incidents/${i.id}`);
  for (const p of (await get("/api/v1/status-pages?per_page=100")).data) {
    await get(`/api/v1/status-pages/${p.id}`);
    for (const u of (await get(`/api/v1/status-pages/${p.id}/updates?per_page=100`)).data) await get(`/api/v1/status-pages/${p.id}/updates/${u.id}`);
  }
  for (const g of (await get("/api/v1/groups?per_page=100")).data) await get(`/api/v1/groups/${g.id}`);
  for (const c of (await get("/api/v1/notification-channels?per_page=100")).data) await get(`/api/v1/notification-channels/${c.id}`);
  for (const w of (await get("/api/v1/maintenance-windows?per_page=100")).data) await get(`/api/v1/maintenance-windows/${w.id}`);
  const page = await fetch(`${base}/s/${slug}.json`);
  expect(page.status).toBe(200);
  out.statusPage = await page.json();
  return out;
}

