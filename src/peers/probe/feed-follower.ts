import type { AppContext } from "../../context.ts";
import type { Logger } from "../../lib/logger.ts";
import { MAX_LONG_POLL_SEC } from "../protocol.ts";
import type { ProbeDefinitions } from "./definitions.ts";
import { LeaderError, type LeaderClient } from "./leader-client.ts";
import type { LinkState } from "./link-state.ts";

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;

/** A fatal mismatch between this probe and the leader's idea of it (region, role). */
export class ProbeConfigError extends Error {}

/**
 * Says hello: learns the region the leader records this probe's results under and the clock
 * offset. The probe's --region must be that region, and may not be the leader's own.
 */
export async function hello(ctx: AppContext, client: LeaderClient, link: LinkState, log: Logger): Promise<void> {
  const t0 = ctx.clock.now();
  const h = await client.hello(t0);
  const t1 = ctx.clock.now();
  // the leader read its clock about half-way through the round trip
  link.skewMs = Math.round((t0 + t1) / 2 - h.server_time);
  if (h.region !== ctx.config.region) {
    throw new ProbeConfigError(`this peer token belongs to region "${h.region}", but the probe was started with --region ${ctx.config.region}`);
  }
  log.info("connected to the leader", { region: h.region, leader_region: h.leader_region, leader_version: h.version, skew_ms: link.skewMs, rtt_ms: t1 - t0 });
  if (Math.abs(link.skewMs) >= 5000) log.warn("this probe's clock differs from the leader's", { skew_ms: link.skewMs, hint: "run NTP; results more than 60 s ahead of the leader are refused" });
}

/**
 * Follows the leader's definitions feed: a long-poll that answers at once when a monitor changes
 * (so edits reach the probe within moments), re-said hello after every outage, retried with
 * exponential backoff (to 5 s) while the leader is unreachable.
 */
export class FeedFollower {
  private stopping = false;
  private abort = new AbortController();
  private loop: Promise<void> | null = null;
  private greeted: boolean;

  constructor(
    private readonly ctx: AppContext,
    private readonly client: LeaderClient,
    private readonly defs: ProbeDefinitions,
    private readonly link: LinkState,
    private readonly log: Logger,
    greeted: boolean,
  ) {
    this.greeted = greeted;
  }

  /** One feed request; `waitSec` 0 answers at once. */
  async pollOnce(waitSec: number): Promise<void> {
    const feed = await this.client.monitors(this.defs.cursor, waitSec, this.abort.signal);
    await this.defs.apply(feed);
    this.link.contact();
  }

  start(): void {
    this.loop ??= this.run().catch((err) => this.log.error("definitions feed stopped unexpectedly", { error: String(err) }));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort(new Error("shutting down"));
    await this.loop;
  }

  private async run(): Promise<void> {
    let backoff = 0;
    while (!this.stopping) {
      try {
        if (!this.greeted) {
          await hello(this.ctx, this.client, this.link, this.log);
          this.greeted = true;
        }
        await this.pollOnce(MAX_LONG_POLL_SEC);
        backoff = 0;
      } catch (err) {
        if (this.stopping) return;
        if (err instanceof ProbeConfigError) {
          this.log.error("probe misconfigured", { error: err.message });
        } else {
          const e = err instanceof LeaderError ? err : new LeaderError(String(err), null, null);
          this.link.failed(e);
        }
        this.greeted = false;
        backoff = Math.min(BACKOFF_MAX_MS, backoff ? backoff * 2 : BACKOFF_MIN_MS);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, backoff);
          this.abort.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
        });
      }
    }
  }
}
