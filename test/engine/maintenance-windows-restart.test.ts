/**
 * Maintenance windows survive restarts (docs/maintenance-windows.md "How it works"): real `vigil
 * serve` child processes on one data directory (and, on PostgreSQL, one database), a real failing
 * target and a real webhook receiver. A window is still active after a restart in its middle, and
 * its end after the restart opens the incident; an end that passed while Vigil was stopped takes
 * effect at the next start.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { httpAttrs } from "../api/fixtures.ts";
import { spawnServer, type ChildServer } from "../helpers/process.ts";
import { apiClient, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";

const HOUR = 3_600_000;
const FLAGS = ["--confirmations", "1", "--rate-limit", "pro=1000000,enterprise=1000000", "--log-level", "info"];
const iso = (t: number) => new Date(t).toISOString();
let target: HttpTarget;
let receiver: Receiver;
const dirs: string[] = [];
const children: ChildServer[] = [];

beforeAll(async () => {
  receiver = startReceiver();
  target = await startHttpTarget({ "/broken": () => new Response("boom", { status: 500 }) });
});
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
  await target?.close();
  await receiver?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serve(dir: string): Promise<{ child: ChildServer; api: TestServer["api"] }> {
  const child = await spawnServer(["--data", dir, ...FLAGS]);
  children.push(child);
  const token = (await Bun.file(join(dir, "bootstrap-token")).text()).trim();
  return { child, api: apiClient(child.url, token) };
}

/** A monitor of a target answering 500, alerting to the receiver, held by a window active for an hour, and down. */
async function downInWindow(api: TestServer["api"], name: string) {
  const ch = await api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${receiver.url}/${name}` });
  const m = await api("POST", "/api/v1/monitors", httpAttrs({ name, target: `${target.url}/broken`, interval_sec: 10, timeout_ms: 2000, notification_channel_ids: [Number(ch.json.data.id)] }));
  const id = Number(m.json.data.id);
  const w = await api("POST", "/api/v1/maintenance-windows", { name: "upgrade", monitor_ids: [id], starts_at: iso(Date.now() - 1000), ends_at: iso(Date.now() + HOUR) });
  expect(w.json.data.attributes.is_active).toBe(true);
  expect((await api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false })).status).toBe(200);
  expect(await waitFor(async () => (await api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status === "down", { timeoutMs: 15_000 })).toBe(true);
  return { id, windowId: w.json.data.id as string };
}

const incidentsOf = async (api: TestServer["api"], id: number) => (await api("GET", `/api/v1/incidents?monitor_id=${id}`)).json.data as { id: string; attributes: Record<string, any> }[];
const downChecks = async (api: TestServer["api"], id: number) => (await api("GET", `/api/v1/monitors/${id}/checks?status=down&per_page=100`)).json.pagination.total as number;
const delivered = (name: string) => receiver.requests.filter((r) => r.path === `/${name}`);

describe("restarts", () => {
  test("a restart in the middle of a window keeps it active: checks go on, nothing opens; its end after the restart opens the incident", async () => {
    const dir = tempDir("vigil-maint-restart-");
    dirs.push(dir);
    const first = await serve(dir);
    const { id, windowId } = await downInWindow(first.api, "mid-window");
    expect(await first.child.stop()).toBe(0);

    const second = await serve(dir);
    try {
      const w = (await second.api("GET", `/api/v1/maintenance-windows/${windowId}`)).json.data.attributes;
      expect(w.is_active).toBe(true);
      expect((await second.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes).toMatchObject({ last_status: "down", is_in_maintenance: true });
      // the restarted server checks the monitor again (a resumed scheduler runs it at its next time)
      const before = await downChecks(second.api, id);
      expect(await waitFor(async () => (await downChecks(second.api, id)) > before, { timeoutMs: 20_000 })).toBe(true);
      expect(await incidentsOf(second.api, id)).toEqual([]);
      expect(delivered("mid-window")).toEqual([]);

      const endsAt = Date.parse((await second.api("PATCH", `/api/v1/maintenance-windows/${windowId}`, { ends_at: iso(Date.now() + 3000) })).json.data.attributes.ends_at);
      expect(await waitFor(async () => (await incidentsOf(second.api, id)).length === 1, { timeoutMs: 15_000 })).toBe(true);
      expect(Date.parse((await incidentsOf(second.api, id))[0]!.attributes.started_at)).toBeGreaterThanOrEqual(endsAt);
      expect(await waitFor(() => delivered("mid-window").length === 1, { timeoutMs: 10_000 })).toBe(true);
      expect(JSON.parse(delivered("mid-window")[0]!.body).event).toBe("monitor.down");
    } finally {
      await second.child.stop();
    }
  }, 90_000);

  test("a window that ended while Vigil was stopped takes effect at start: the incident opens then and alerts once", async () => {
    const dir = tempDir("vigil-maint-restart-");
    dirs.push(dir);
    const first = await serve(dir);
    const { id, windowId } = await downInWindow(first.api, "ended-while-stopped");
    // ends a few seconds from now: the server is stopped before that
    const endsAt = Date.parse((await first.api("PATCH", `/api/v1/maintenance-windows/${windowId}`, { ends_at: iso(Date.now() + 6000) })).json.data.attributes.ends_at);
    expect(await first.child.stop()).toBe(0);
    expect({ stoppedBeforeTheEnd: Date.now() < endsAt }).toEqual({ stoppedBeforeTheEnd: true });
    expect(await waitFor(() => Date.now() > endsAt + 300, { timeoutMs: 15_000 })).toBe(true);

    const startedAt = Date.now();
    const second = await serve(dir);
    try {
      expect(await waitFor(async () => (await incidentsOf(second.api, id)).length === 1, { timeoutMs: 15_000 })).toBe(true);
      const [incident] = await incidentsOf(second.api, id);
      // opened by the new start, not before the stop
      expect(Date.parse(incident!.attributes.started_at)).toBeGreaterThanOrEqual(startedAt);
      expect(await waitFor(() => delivered("ended-while-stopped").length === 1, { timeoutMs: 10_000 })).toBe(true);
      expect(JSON.parse(delivered("ended-while-stopped")[0]!.body)).toMatchObject({ event: "monitor.down", incident: { id: incident!.id } });
      expect((await second.api("GET", `/api/v1/maintenance-windows/${windowId}`)).json.data.attributes.is_active).toBe(false);
      expect(second.child.output()).toContain('"msg":"maintenance window ended"');
    } finally {
      await second.child.stop();
    }
    // a third start acts on nothing again
    const third = await serve(dir);
    try {
      expect(await incidentsOf(third.api, id)).toHaveLength(1);
      expect(third.child.output()).not.toContain('"msg":"maintenance window ended"');
    } finally {
      await third.child.stop();
    }
    expect(delivered("ended-while-stopped")).toHaveLength(1);
  }, 90_000);
});
