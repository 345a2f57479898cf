import type { CheckResult, CheckTimings } from "../domain/check-result.ts";
import { packedCheckExists, packedUntil } from "./check-blocks.ts";
import type { Db } from "./database.ts";

const whole = (v: number | null | undefined) => (typeof v === "number" && Number.isFinite(v) ? Math.max(0, Math.round(v)) : null);

/** A result's timings as the check row's columns (whole ms, never negative). */
export function timingColumns(t: CheckTimings | null | undefined) {
  return { dns_ms: whole(t?.dns_ms), connect_ms: whole(t?.connect_ms), tls_ms: whole(t?.tls_ms), ttfb_ms: whole(t?.ttfb_ms) };
}

/** Writes one check row; returns its id. JSON-valued fields are stored as text. */
export async function insertCheck(db: Db, monitorId: number, region: string, r: CheckResult, resultUid: string | null = null): Promise<number> {
  const row = await db
    .insertInto("checks")
    .values({
      monitor_id: monitorId,
      region,
      status: r.status,
      checked_at: r.checked_at,
      latency_ms: r.latency_ms === null ? null : Math.round(r.latency_ms),
      http_code: r.http_code,
      error_code: r.error_code,
      error_message: r.error_message,
      degraded_reason: r.degraded_reason,
      resolved_ip: r.resolved_ip,
      ssl_not_after: r.ssl_not_after,
      dns_answer: r.dns_answer === null ? null : JSON.stringify(r.dns_answer),
      synthetic_trace_json: r.synthetic_trace_json === null ? null : JSON.stringify(r.synthetic_trace_json),
      result_uid: resultUid,
      ...timingColumns(r.timings),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Whether a probe's result is already stored: by its uid among check rows, or, for a result older
 * than the monitor's packed checks (blocks keep no uids), by region and time, which a probe never
 * repeats for two different checks. `mayBePacked` false (the caller knows the check is too recent
 * to have been packed) spares the look at the blocks.
 */
export async function resultAlreadyStored(db: Db, monitorId: number, region: string, resultUid: string, checkedAt: number, mayBePacked = true): Promise<boolean> {
  if (await db.selectFrom("checks").select("id").where("result_uid", "=", resultUid).executeTakeFirst()) return true;
  if (!mayBePacked) return false;
  const packed = await packedUntil(db, monitorId);
  return packed !== null && checkedAt < packed && (await packedCheckExists(db, monitorId, region, checkedAt));
}
