import { readFileSync } from "node:fs";
import type { AppContext } from "../context.ts";
import type { AlertPayload } from "../domain/alert-payload.ts";
import type { Logger } from "../lib/logger.ts";
import { logWriteFailure } from "../lib/storage-errors.ts";
import { abandonAlert, claimDueAlerts, finishAttempt, nextDueAt, requeueInterrupted } from "../store/alerts.ts";
import { findChannelById, toChannelConfig, type ChannelConfig } from "../store/notification-channels.ts";
import type { AlertRow } from "../store/tables.ts";
import { deliverOnce, type SenderTable } from "./deliver.ts";
import { CHANNEL_SENDERS } from "./channels/index.ts";

/**
 * What became of one attempt: delivered; retry (a temporary failure, due again later); failed (a
 * permanent failure, the retry window over, or unreadable channel secrets); interrupted (cut short
 * by shutdown, sent again on the next start); dropped (the channel was disabled or deleted).
 */
export const DELIVERY_RESULTS = ["delivered", "retry", "failed", "interrupted", "dropped"] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];

export interface DispatcherOptions {
  /** first retry delay; doubles per attempt (default 10 s) */
  baseDelayMs?: number;
  /** longest delay between two attempts (default 1 h) */
  maxDelayMs?: number;
  /** how long after the alert it is still worth retrying (default 24 h) */
  retryWindowMs?: number;
  /** longest sleep between two looks at the outbox (default 1 s) */
  pollMs?: number;
  /** rows claimed and sent at once (default 10) */
  batchSize?: number;
  /** per-attempt timeout (default 10 s) */
  timeoutMs?: number;
  senders?: SenderTable;
  /** on stop, how long in-flight sends may finish before they are aborted (default 2 s) */
  stopGraceMs?: number;
  /** 0..1 → a delay in [1 - jitter, 1 + jitter] × nominal (default 0.2) */
  jitter?: number;
  random?: () => number;
}

/**
 * Delivers the alert outbox. Rows are claimed with a conditional UPDATE (pending → sending), so
 * two dispatchers never send the same row; each attempt is recorded in alert_attempts. Temporary
 * failures are retried with exponential backoff (10 s, 20 s, 40 s … capped at 1 h, ± jitter, at
 * least what Retry-After asks) until 24 h after the alert, permanent ones fail at once.
 *
 * Delivery is at-least-once: a process that stops between the receiver's answer and the row's
 * update leaves it in 'sending', and the next start sends it again with the same X-Vigil-Delivery
 * id, so receivers can drop the repeat. A row marked delivered is never sent again.
 */
export class AlertDispatcher {
  private readonly o: Required<Omit<DispatcherOptions, "senders" | "random">>;
  private readonly senders: SenderTable;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly extraCa: string | undefined;
  private readonly abort = new AbortController();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pumping: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly ctx: AppContext, opts: DispatcherOptions = {}) {
    this.o = {
      baseDelayMs: opts.baseDelayMs ?? 10_000,
      maxDelayMs: opts.maxDelayMs ?? 3_600_000,
      retryWindowMs: opts.retryWindowMs ?? 24 * 3_600_000,
      pollMs: opts.pollMs ?? 1000,
      batchSize: opts.batchSize ?? 10,
      timeoutMs: opts.timeoutMs ?? 10_000,
      jitter: opts.jitter ?? 0.2,
      stopGraceMs: opts.stopGraceMs ?? 2000,
    };
    this.senders = opts.senders ?? CHANNEL_SENDERS;
    this.random = opts.random ?? Math.random;
    this.log = ctx.log.child("notify");
    this.extraCa = ctx.config.extraCaFile ? readFileSync(ctx.config.extraCaFile, "utf8") : undefined;
    // every result is a series from the start, so a rate over it is defined before the first alert
    for (const result of DELIVERY_RESULTS) ctx.metrics.alertDeliveries.inc({ result }, 0);
  }

  async start(): Promise<void> {
    const requeued = await requeueInterrupted(this.ctx.db, this.ctx.clock.now());
    if (requeued) this.log.info("alerts interrupted by the last stop are queued again", { count: requeued });
    // The engine emits monitor.state after its transaction commits: the outbox rows exist by then.
    this.unsubscribe = this.ctx.events.on("monitor.state", () => this.wake());
    this.wake();
  }

  /** Looks at the outbox now (after an alert was written, or in tests). */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      if (this.again) this.wake();
    });
  }

  /** The delay before retry number `attempts` (1 = first retry). */
  retryDelay(attempts: number, retryAfterMs?: number): number {
    const nominal = Math.min(this.o.maxDelayMs, this.o.baseDelayMs * 2 ** Math.min(attempts - 1, 30));
    const jittered = Math.round(nominal * (1 - this.o.jitter + 2 * this.o.jitter * this.random()));
    return Math.max(jittered, retryAfterMs ?? 0);
  }

  private async pump(): Promise<void> {
    try {
      for (let round = 0; round < 1000 && !this.stopped; round++) {
        this.again = false;
        const rows = await claimDueAlerts(this.ctx.db, this.ctx.clock.now(), this.o.batchSize);
        if (rows.length === 0) break;
        await Promise.all(rows.map((r) => this.deliver(r)));
      }
      if (!this.stopped) await this.scheduleNext();
    } catch (err) {
      if (this.stopped) return;
      logWriteFailure(this.log, "outbox pass failed", err);
      this.timer = setTimeout(() => this.wake(), this.o.pollMs);
    }
  }

  private async scheduleNext(): Promise<void> {
    const due = await nextDueAt(this.ctx.db);
    const wait = due === null ? this.o.pollMs : Math.max(0, Math.min(this.o.pollMs, due - this.ctx.clock.now()));
    if (this.stopped || this.again) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, wait);
  }

  private async deliver(row: AlertRow): Promise<void> {
    const db = this.ctx.db;
    const fields = { alert_id: row.id, channel_id: row.channel_id, monitor_id: row.monitor_id, event: row.event, delivery_id: row.delivery_id };
    const channelRow = await findChannelById(db, row.channel_id);
    if (!channelRow || channelRow.is_enabled !== 1) {
      await abandonAlert(db, row.id, channelRow ? "the channel was disabled" : "the channel was deleted");
      this.counted("dropped");
      this.log.info("alert dropped: channel disabled or deleted", fields);
      return;
    }
    let channel: ChannelConfig;
    try {
      channel = toChannelConfig(channelRow, this.ctx.secrets);
    } catch {
      const at = this.ctx.clock.now();
      const error = "the channel's secrets cannot be decrypted (was the secret key replaced?)";
      await finishAttempt(db, row.id, { at, ok: false, statusCode: null, error }, { status: "failed" });
      this.counted("failed");
      this.log.error("alert failed", { ...fields, error });
      return;
    }
    const payload = JSON.parse(row.payload_json) as AlertPayload;
    const outcome = await deliverOnce(payload, channel, this.abort.signal, {
      deliveryId: row.delivery_id,
      extraCa: this.extraCa,
      timeoutMs: this.o.timeoutMs,
      blockPrivateTargets: this.ctx.privateTargets.blocks(channel.accountId),
    }, this.senders);
    const at = this.ctx.clock.now();
    const attempt = { at, ok: outcome.ok, statusCode: outcome.statusCode, error: outcome.error };
    const logFields = { ...fields, channel_type: channel.type, attempt: row.attempts + 1, status_code: outcome.statusCode };
    if (outcome.ok) {
      await finishAttempt(db, row.id, attempt, { status: "delivered" });
      this.counted("delivered");
      this.log.info("alert delivered", logFields);
    } else if (this.abort.signal.aborted && !outcome.permanent) {
      // Cut short by shutdown: due again at once on the next start, no backoff earned.
      await finishAttempt(db, row.id, attempt, { status: "pending", retryAt: at });
      this.counted("interrupted");
      this.log.info("alert delivery interrupted by shutdown; it is sent again on the next start", logFields);
    } else if (outcome.permanent) {
      await finishAttempt(db, row.id, attempt, { status: "failed" });
      this.counted("failed");
      this.log.warn("alert failed permanently", { ...logFields, error: outcome.error });
    } else {
      const delay = this.retryDelay(row.attempts + 1, outcome.retryAfterMs);
      if (at + delay > row.created_at + this.o.retryWindowMs) {
        await finishAttempt(db, row.id, { ...attempt, error: `${outcome.error} (giving up: retried for ${Math.round(this.o.retryWindowMs / 3_600_000)} h)` }, { status: "failed" });
        this.counted("failed");
        this.log.warn("alert failed: retry window exhausted", { ...logFields, error: outcome.error });
      } else {
        await finishAttempt(db, row.id, attempt, { status: "pending", retryAt: at + delay });
        this.counted("retry");
        this.log.info("alert delivery failed; will retry", { ...logFields, error: outcome.error, retry_in_ms: delay });
      }
    }
  }

  /** vigil_alert_deliveries_total, once the outcome is recorded in the outbox */
  private counted(result: DeliveryResult): void {
    this.ctx.metrics.alertDeliveries.inc({ result });
  }

  /**
   * Claims nothing more, lets in-flight sends finish for a short grace (a send cut off after the
   * receiver got it is sent again on the next start), then aborts them and records the rows as due.
   */
  async stop(deadlineMs: number): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const started = Date.now();
    if (this.pumping) await Promise.race([this.pumping, Bun.sleep(Math.min(this.o.stopGraceMs, deadlineMs / 2))]);
    this.abort.abort();
    if (this.pumping) await Promise.race([this.pumping, Bun.sleep(Math.max(0, deadlineMs - (Date.now() - started)))]);
  }
}
