/**
 * A checked monitor end to end on a real server (startTestServer): created by the API, checked by
 * the server's own scheduler, its checks, state and incidents read back through the API. Every wait
 * polls with a deadline and, when it runs out, fails naming what it waited for and what it saw.
 *
 * Timing: a new monitor is checked at once; its next run comes between half an interval and one
 * and a half intervals later (docs/monitors.md "Scheduling"), so with the smallest interval (10 s)
 * a change of the target shows within 15 s.
 */
import { waitFor, type TestServer } from "./server.ts";

/**
 * `serve` flags for these tests: one failed check turns a monitor down, and the API's rate limit
 * leaves room for polling several monitors at once.
 */
export const CHECKED_MONITOR_ARGS = ["--confirmations", "1", "--rate-limit", "pro=120,enterprise=100000"];

/** A check as GET /api/v1/monitors/{id}/checks gives its attributes. */
export interface CheckView {
  status: "up" | "degraded" | "down";
  checked_at: string;
  latency_ms: number | null;
  http_code: number | null;
  error_code: string | null;
  error_message: string | null;
  degraded_reason: string | null;
  resolved_ip: string | null;
  ssl_not_after: string | null;
  region: string;
  timings: { dns_ms: number | null; connect_ms: number | null; tls_ms: number | null; ttfb_ms: number | null } | null;
}

/** How long a change of the target may take to show in a check: one run (≤ 1.5 intervals of 10 s) and room for a loaded machine. */
export const NEXT_RUN_MS = 45_000;
/** How long a new monitor's first check may take. */
export const FIRST_RUN_MS = 20_000;

/** POST /api/v1/monitors; fails with the answer when it is not a 201. Returns the id. */
export async function createMonitor(s: TestServer, attributes: Record<string, unknown>): Promise<string> {
  const r = await s.api("POST", "/api/v1/monitors", { interval_sec: 10, timeout_ms: 5000, ...attributes });
  if (r.status !== 201) throw new Error(`creating ${JSON.stringify(attributes.name)} answered ${r.status}: ${r.text}`);
  return r.json.data.id as string;
}

/** Attributes as the API answers them: read by name in tests. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Attributes = Record<string, any>;

/** The monitor's attributes. */
export async function monitorOf(s: TestServer, id: string): Promise<Attributes> {
  const r = await s.api("GET", `/api/v1/monitors/${id}`);
  if (r.status !== 200) throw new Error(`GET monitor ${id} answered ${r.status}: ${r.text}`);
  return r.json.data.attributes;
}

/** The monitor's checks, newest first. */
export async function checksOf(s: TestServer, id: string): Promise<CheckView[]> {
  const r = await s.api("GET", `/api/v1/monitors/${id}/checks?per_page=100`);
  if (r.status !== 200) throw new Error(`GET checks of ${id} answered ${r.status}: ${r.text}`);
  return (r.json.data as { attributes: CheckView }[]).map((c) => c.attributes);
}

/** The newest check that satisfies `wanted`, waiting for one until the deadline. */
export async function waitForCheck(s: TestServer, id: string, wanted: (c: CheckView) => boolean = () => true, timeoutMs = FIRST_RUN_MS): Promise<CheckView> {
  let seen: CheckView[] = [];
  const found = await waitFor(async () => (seen = await checksOf(s, id)).find(wanted), { timeoutMs, intervalMs: 200 });
  if (!found) throw new Error(`monitor ${id}: no such check within ${timeoutMs} ms; checks so far: ${JSON.stringify(seen.map((c) => [c.status, c.error_code, c.error_message ?? c.degraded_reason]))}`);
  return found;
}

/** Waits until the monitor's `last_status` is `state`; returns its attributes. */
export async function waitForState(s: TestServer, id: string, state: string, timeoutMs = NEXT_RUN_MS): Promise<Attributes> {
  let last: Attributes = {};
  const ok = await waitFor(async () => (last = await monitorOf(s, id)).last_status === state, { timeoutMs, intervalMs: 200 });
  if (!ok) throw new Error(`monitor ${id} did not become ${state} within ${timeoutMs} ms (it is ${last.last_status}); checks: ${JSON.stringify((await checksOf(s, id)).map((c) => [c.status, c.error_code]))}`);
  return last;
}

/** The monitor's incidents, newest first, as attributes with their id. */
export async function incidentsOf(s: TestServer, id: string): Promise<Attributes[]> {
  const r = await s.api("GET", `/api/v1/incidents?monitor_id=${id}`);
  if (r.status !== 200) throw new Error(`GET incidents of ${id} answered ${r.status}: ${r.text}`);
  return (r.json.data as { id: string; attributes: Record<string, unknown> }[]).map((i) => ({ id: i.id, ...i.attributes }));
}
