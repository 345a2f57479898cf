import type { AppContext } from "../../context.ts";
import type { Logger } from "../../lib/logger.ts";
import { deleteSpooled, readSpoolBatch, spoolLength } from "../../store/spool.ts";
import { MAX_BATCH_BYTES, MAX_BATCH_RESULTS, type ResultItem } from "../protocol.ts";
import { LeaderError, type LeaderClient } from "./leader-client.ts";
import type { LinkState } from "./link-state.ts";

export const PUSH_BACKOFF_MIN_MS = 250;
export const PUSH_BACKOFF_MAX_MS = 5000;
/** The longest a Retry-After from the leader is honoured (its quota windows last a minute). */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Sends spooled results to the leader, oldest first, in batches, as soon as there are any; backs off
 * exponentially (to 5 s) while the leader is unreachable. A row leaves the spool only when the
 * leader's answer names it with a final outcome, so a lost answer means a re-send, which the leader
 * recognises by result_uid: each result is stored exactly once. When the leader says this probe
 * is over its quota (429, or `retry` for what did not fit a batch), the results stay spooled and
 * are sent again after the Retry-After it gave.
 */
export class ResultPusher {
  private wake: (() => void) | null = null;
  private stopping = false;
  /** set on stop: deliver what is spooled until then, unless the leader fails us */
  private finishBy: number | null = null;
  private loop: Promise<void> | null = null;
  private inFlight: AbortController | null = null;
  /** true while the leader refuses batches for this probe's quota: logged once per episode */
  private limited = false;
  queueLength = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly client: LeaderClient,
    private readonly link: LinkState,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.loop ??= this.run().catch((err) => this.log.error("result pusher stopped unexpectedly", { error: String(err) }));
  }

  /** New results are spooled: send now rather than at the next idle poll. */
  notify(): void {
    this.wake?.();
  }

  /** The leader answered again (the feed noticed first): cut the backoff short. */
  leaderRestored(): void {
    this.restoreWake?.();
  }
  private restoreWake: (() => void) | null = null;

  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    this.finishBy = Date.now() + deadlineMs;
    this.wake?.();
    const timer = setTimeout(() => this.inFlight?.abort(new Error("shutting down")), Math.max(0, deadlineMs));
    await this.loop;
    clearTimeout(timer);
    this.log.info("result pusher stopped", { queue_length: await spoolLength(this.ctx.db) });
  }

  private async run(): Promise<void> {
    let backoff = 0;
    this.queueLength = await spoolLength(this.ctx.db);
    for (;;) {
      if (this.stopping && (this.finishBy === null || Date.now() >= this.finishBy)) return;
      const batch = await readSpoolBatch(this.ctx.db, MAX_BATCH_RESULTS, MAX_BATCH_BYTES);
      if (batch.length === 0) {
        this.queueLength = 0;
        if (this.stopping) return;
        await this.idle(1000);
        continue;
      }
      const total = await spoolLength(this.ctx.db);
      this.queueLength = total;
      let delivered = 0;
      try {
        this.inFlight = new AbortController();
        const res = await this.client.results(
          { sent_at: this.ctx.clock.now(), queue_length: Math.max(0, total - batch.length), results: batch.map((r) => JSON.parse(r.payload_json) as ResultItem) },
          this.inFlight.signal,
        );
        const sent = new Set(batch.map((r) => r.result_uid));
        const final = res.results.filter((a) => a.outcome !== "retry" && sent.has(a.result_uid));
        await this.ctx.writes.run((trx) => deleteSpooled(trx, final.map((a) => a.result_uid)));
        delivered = final.length;
        this.queueLength = total - delivered;
        this.link.contact({ queue_length: this.queueLength });
        const rejected = final.filter((a) => a.outcome === "rejected");
        if (rejected.length) this.log.warn("results refused by the leader", { count: rejected.length, reasons: [...new Set(rejected.map((a) => a.reason))].slice(0, 5) });
        this.log.debug("results delivered", { sent: batch.length, final: delivered, queue_length: this.queueLength });
        if (this.limited && delivered > 0) {
          this.limited = false;
          this.log.info("the leader accepts this probe's results again", { queue_length: this.queueLength });
        }
      } catch (err) {
        const e = err instanceof LeaderError ? err : new LeaderError(String(err), null, null);
        if (this.stopping && (this.finishBy === null || Date.now() >= this.finishBy)) return;
        if (e.status === 429) {
          // the leader is up and says this probe sent its minute's worth: wait as asked, lose nothing
          this.link.contact({ queue_length: this.queueLength });
          if (!this.limited) this.log.warn("the leader limits this probe's results; waiting", { retry_after_ms: e.retryAfterMs, queue_length: this.queueLength });
          this.limited = true;
          if (this.stopping) return;
          backoff = 0;
          await this.sleep(Math.min(MAX_RETRY_AFTER_MS, e.retryAfterMs ?? PUSH_BACKOFF_MAX_MS));
          continue;
        }
        this.link.failed(e, { queue_length: this.queueLength });
        if (this.stopping) return; // shutting down: the spool keeps the rest for the next start
      } finally {
        this.inFlight = null;
      }
      if (delivered > 0) {
        backoff = 0;
        continue;
      }
      // nothing final (leader unreachable, or it asked for everything again): back off
      backoff = Math.min(PUSH_BACKOFF_MAX_MS, backoff ? backoff * 2 : PUSH_BACKOFF_MIN_MS);
      await this.sleep(backoff);
    }
  }

  /** Waits for new results or `ms`, whichever comes first. */
  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
    });
  }

  /** Backoff: new results do not cut it short; a stop or the leader's return does. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wake = null;
        this.restoreWake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake = () => {
        if (this.stopping) done();
      };
      this.restoreWake = done;
    });
  }
}
