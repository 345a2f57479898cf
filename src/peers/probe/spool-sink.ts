import type { AppContext } from "../../context.ts";
import type { CheckResult } from "../../domain/check-result.ts";
import type { Logger } from "../../lib/logger.ts";
import { randomToken } from "../../lib/tokens.ts";
import type { ResultSink } from "../../scheduler/scheduler.ts";
import { spoolResult } from "../../store/spool.ts";
import { boundResult, toResultItem } from "../protocol.ts";

/**
 * The probe's result sink: each result gets its id (what makes delivery exactly-once: the leader
 * ignores a repeat), is cut to the protocol's limits (a huge synthetic trace to one check's bound, so it
 * always fits a batch and is never refused), and is written to the spool through the write queue
 * (group commit), before the pusher is told there is work.
 */
export function spoolSink(ctx: AppContext, log: Logger, onSpooled: () => void): ResultSink {
  return async (monitorId: number, _region: string, result: CheckResult) => {
    const uid = randomToken(16);
    const payload = JSON.stringify(toResultItem(uid, monitorId, boundResult(result)));
    await ctx.writes.run((trx) => spoolResult(trx, { resultUid: uid, payloadJson: payload, now: ctx.clock.now() }));
    log.debug("result spooled", { monitor_id: monitorId, result_uid: uid, status: result.status, checked_at: result.checked_at });
    onSpooled();
  };
}
