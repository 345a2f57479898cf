import { issuePeerToken } from "../../src/auth/peer-tokens.ts";
import type { AppContext } from "../../src/context.ts";
import type { PeerAccountScope } from "../../src/store/peers.ts";

export interface PeerResult {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  text: string;
}

/** A request to the leader's /peer/v1 endpoints, as a probe makes it. */
export async function peerCall(baseUrl: string, token: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<PeerResult> {
  const h: Record<string, string> = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === "string" ? body : JSON.stringify(body);
    h["content-type"] ??= "application/json";
  }
  const res = await fetch(baseUrl + "/peer/v1" + path, { method, headers: h, body: payload });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, json, text };
}

/** A peer for `region`, serving every account unless given account ids. */
export async function makePeer(ctx: AppContext, region: string, accounts: PeerAccountScope = "all"): Promise<{ id: number; token: string }> {
  const { token, row } = await issuePeerToken(ctx.db, { region, label: `test ${region}`, accounts, now: Date.now() });
  return { id: row.id, token };
}

let uidCounter = 0;

/** A result item as a probe sends it; a fresh result_uid unless given. */
export function resultItem(monitorId: number, status: "up" | "down" | "degraded", checkedAt: number, over: Record<string, unknown> = {}) {
  return {
    result_uid: `test-${process.pid}-${++uidCounter}-${Math.random().toString(36).slice(2, 8)}`,
    monitor_id: monitorId,
    status,
    checked_at: checkedAt,
    latency_ms: status === "down" ? null : 12,
    http_code: status === "down" ? 503 : 200,
    error_code: status === "down" ? "http_error" : null,
    error_message: status === "down" ? "expected 200-299, got 503" : null,
    degraded_reason: null,
    resolved_ip: "127.0.0.1",
    ssl_not_after: null,
    dns_answer: null,
    synthetic_trace_json: null,
    ...over,
  };
}

export function batch(results: unknown[], over: Record<string, unknown> = {}) {
  return { sent_at: Date.now(), queue_length: 0, results, ...over };
}
