import { Value } from "@sinclair/typebox/value";
import type { AppContext } from "../../context.ts";
import { DAY_MS } from "../../domain/uptime.ts";
import { recordCheckResult } from "../../engine/record-check.ts";
import type { Logger } from "../../lib/logger.ts";
import { findMonitorOwners, type MonitorOwner } from "../../store/peer-feed.ts";
import { recordPeerContact } from "../../store/peers.ts";
import type { PeerRow } from "../../store/tables.ts";
import { fromResultItem, MAX_FUTURE_MS, ResultItemSchema, type ResultAck, type ResultItem } from "../protocol.ts";
import { servesAccount, type Peer } from "./peer-scope.ts";

export interface IngestBatch {
  sent_at: number;
  queue_length: number;
  results: unknown[];
}

/** Warn about a peer's clock at most this often, so a drifting probe does not flood the log. */
const SKEW_WARN_MS = 5000;
const SKEW_WARN_EVERY_MS = 60_000;

/**
 * Stores a probe's batch through the one write path (recordCheckResult, region = the peer token's
 * region, never one the probe claims), one outcome per result so the probe deletes exactly what is
 * final. All results go to the write queue at once, in the probe's order, so a batch costs a commit
 * or two and a region's results are applied oldest first.
 *
 * A peer reports only for the monitors of its accounts (another account's monitor is answered as a
 * deleted one, so its existence is not revealed), and only results the leader would keep: not
 * stamped before the monitor existed nor older than --retention-days (README "Multi-region").
 */
export class ResultIngest {
  private lastSkewWarn = new Map<number, number>();
  constructor(private readonly ctx: AppContext, private readonly log: Logger) {}

  /** `granted`: how many results of the batch, from the first, the peer's quota lets in; the rest are `retry`. */
  async ingest(peer: Peer, batch: IngestBatch, granted: number): Promise<ResultAck[]> {
    const now = this.ctx.clock.now();
    const oldest = now - this.ctx.config.retentionDays * DAY_MS;
    const monitors = await this.monitorsOf(batch.results.slice(0, granted));
    let newest: number | null = null;
    let tracesCut = 0;
    const acks = await Promise.all(
      batch.results.map(async (raw, i): Promise<ResultAck> => {
        const uid = uidOf(raw);
        if (i >= granted) return { result_uid: uid, outcome: "retry", reason: "rate_limited: this peer's results for this minute are used up; send it again later" };
        if (!Value.Check(ResultItemSchema, raw)) {
          const first = Value.Errors(ResultItemSchema, raw).First();
          return { result_uid: uid, outcome: "rejected", reason: `invalid result${first ? `: ${first.path || "/"} ${first.message}` : ""}` };
        }
        const item = raw as ResultItem;
        if (item.checked_at > now + MAX_FUTURE_MS) {
          // clock sanity: a result from the future would sit in the quorum long after it is stale
          return { result_uid: uid, outcome: "rejected", reason: `clock_skew: checked_at is ${item.checked_at - now} ms ahead of the leader's clock` };
        }
        if (item.checked_at < oldest) {
          return { result_uid: uid, outcome: "rejected", reason: `too_old: checked_at is older than the ${this.ctx.config.retentionDays} days the leader keeps checks` };
        }
        const monitor = monitors.get(item.monitor_id);
        // exactly what recordCheckResult answers for a missing monitor
        if (!monitor || !servesAccount(peer, monitor.account_id)) return { result_uid: uid, outcome: "dropped", reason: "deleted" };
        if (item.checked_at < monitor.created_at - MAX_FUTURE_MS) {
          return { result_uid: uid, outcome: "rejected", reason: "too_old: checked_at is before the monitor was created" };
        }
        try {
          const out = await recordCheckResult(this.ctx, item.monitor_id, peer.region, fromResultItem(item), item.result_uid, true);
          if (out.recorded) {
            if (out.traceCut) tracesCut++;
            newest = Math.max(newest ?? 0, item.checked_at);
            return { result_uid: uid, outcome: "stored" };
          }
          return out.reason === "duplicate" ? { result_uid: uid, outcome: "duplicate" } : { result_uid: uid, outcome: "dropped", reason: out.reason };
        } catch (err) {
          this.log.error("storing a peer result failed", { peer_id: peer.id, region: peer.region, monitor_id: item.monitor_id, error: String(err) });
          return { result_uid: uid, outcome: "retry", reason: "the leader could not store the result; send it again" };
        }
      }),
    );

    const skew = batch.sent_at - now;
    const lag = newest === null ? undefined : Math.max(0, now - newest);
    await this.ctx.writes.run((trx) => recordPeerContact(trx, peer.id, { lastSeenAt: now, skewMs: skew, lagMs: lag, queueLength: batch.queue_length }));
    const counts = countOutcomes(acks);
    const fields = { peer_id: peer.id, region: peer.region, ...counts, traces_cut: tracesCut, queue_length: batch.queue_length, skew_ms: skew, lag_ms: lag ?? null };
    if (counts.rejected > 0) this.log.warn("peer results rejected", { ...fields, reasons: [...new Set(acks.filter((a) => a.outcome === "rejected").map((a) => a.reason))].slice(0, 5) });
    else if (granted < batch.results.length) this.log.info("peer results over quota", fields);
    else this.log.debug("peer results received", fields);
    this.warnSkew(peer, skew, now);
    return acks;
  }

  /** Owner and creation time of the monitors a batch names, read once for the whole batch (neither ever changes). */
  private async monitorsOf(results: unknown[]): Promise<Map<number, MonitorOwner>> {
    const ids = new Set<number>();
    for (const r of results) {
      const id = r && typeof r === "object" ? (r as { monitor_id?: unknown }).monitor_id : undefined;
      if (typeof id === "number" && Number.isSafeInteger(id) && id > 0) ids.add(id);
    }
    return new Map((await findMonitorOwners(this.ctx.db, [...ids])).map((m) => [m.id, m]));
  }

  /** Logs a peer's clock offset when it is large (hello logs it always). */
  warnSkew(peer: PeerRow, skewMs: number, now: number): void {
    if (Math.abs(skewMs) < SKEW_WARN_MS) return;
    if (now - (this.lastSkewWarn.get(peer.id) ?? -Infinity) < SKEW_WARN_EVERY_MS) return;
    this.lastSkewWarn.set(peer.id, now);
    this.log.warn("peer clock skew", { peer_id: peer.id, region: peer.region, skew_ms: skewMs, hint: "run NTP on the probe; results more than 60 s ahead are refused" });
  }
}

function uidOf(raw: unknown): string {
  const uid = raw && typeof raw === "object" ? (raw as { result_uid?: unknown }).result_uid : undefined;
  return typeof uid === "string" ? uid.slice(0, 100) : "";
}

function countOutcomes(acks: ResultAck[]) {
  const c = { stored: 0, duplicate: 0, dropped: 0, rejected: 0, retry: 0 };
  for (const a of acks) c[a.outcome]++;
  return c;
}
