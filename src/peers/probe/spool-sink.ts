import type { AppContext } from "../../context.ts";
import type { CheckResult } from "../../domain/check-result.ts";
import type { Logger } from "../../lib/logger.ts";
import { randomToken } from "../../lib/tokens.ts";
import type { ResultSink } from "../../scheduler/scheduler.ts";
import { spoolResult } from "../../store/spool.ts";
import { toResultItem } from "../protocol.ts";

/** A result bigger than this (a huge synthetic trace) is spooled without its trace, so it always fits a batch. */
const MAX_RESULT_BYTES = 256 * 1024;

/**
 * The probe's result sink: each result gets its id (what makes delivery exactly-once: the leader
 * ignores a repeat) and is written to the spool through the write queue (group commit), before the
 * pusher is told there is work.
 */
export function spoolSink(ctx: AppContext, log: Logger, onSpooled: () => void): ResultSink {
  return async (monitorId: number, _region: string, result: CheckResult) => {
    const uid = randomToken(16);
    let payload = JSON.stringify(toResultItem(uid, monitorId, result));
    if (payload.length > MAX_RESULT_BYTES) {
      payload = JSON.stringify(toResultItem(uid, monitorId, { ...result, synthetic_trace_json: { truncated: true, reason: `the trace exceeded ${MAX_RESULT_BYTES} bytes` } }));
    }
    await ctx.writes.run((trx) => spoolResult(trx, { resultUid: uid, payloadJson: payload, now: ctx.clock.now() }));
    log.debug("result spooled", { monitor_id: monitorId, result_uid: uid, status: result.status, checked_at: result.checked_at });
    onSpooled();
  };
}
