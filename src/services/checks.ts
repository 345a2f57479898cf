import type { AppContext } from "../context.ts";
import type { CheckStatus } from "../domain/check-result.ts";
import type { CheckAttributes } from "../domain/check-schema.ts";
import { notFound } from "../http/errors.ts";
import { toIso } from "../lib/dates.ts";
import * as store from "../store/check-queries.ts";
import { findMonitor } from "../store/monitors.ts";
import type { CheckRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";

/** A monitor's checks, newest first, for the API and the dashboard alike. */
export type CheckItem = Item<CheckAttributes>;

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function checkAttributes(r: CheckRow): CheckAttributes {
  return {
    monitor_id: r.monitor_id,
    status: r.status as CheckStatus,
    checked_at: toIso(r.checked_at),
    latency_ms: r.latency_ms,
    http_code: r.http_code,
    error_code: r.error_code,
    error_message: r.error_message,
    degraded_reason: r.degraded_reason,
    resolved_ip: r.resolved_ip,
    ssl_not_after: toIso(r.ssl_not_after),
    dns_answer: parseJson(r.dns_answer) as string[] | null,
    synthetic_trace_json: parseJson(r.synthetic_trace_json) as CheckAttributes["synthetic_trace_json"],
    region: r.region,
    timings: r.dns_ms === null && r.connect_ms === null && r.tls_ms === null && r.ttfb_ms === null ? null : { dns_ms: r.dns_ms, connect_ms: r.connect_ms, tls_ms: r.tls_ms, ttfb_ms: r.ttfb_ms },
  };
}

/** A page of the monitor's checks, newest first, its journaled pings included. */
export async function listChecks(ctx: AppContext, actor: Actor, monitorId: number, filter: store.CheckFilter, window: PageWindow): Promise<Listed<CheckAttributes>> {
  if (!(await findMonitor(ctx.db, actor.accountId, monitorId))) throw notFound("monitor");
  const { rows, total } = await store.listChecks(ctx.pings, monitorId, filter, window);
  return { items: rows.map((r) => ({ id: r.id, attributes: checkAttributes(r) })), total };
}
