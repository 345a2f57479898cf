import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import type { LeaderError } from "./leader-client.ts";

/**
 * What the probe knows about its link to the leader, shared by the feed follower and the pusher and
 * reported in the log: once when the leader becomes unreachable, once when it is back, and
 * periodically (ProbeHealth).
 */
export class LinkState {
  reachable: boolean | null = null;
  lastContactAt: number | null = null;
  lastError: string | null = null;
  /** probe clock minus leader clock, from the latest hello (adjusted for the round trip) */
  skewMs: number | null = null;

  /** called when the leader answers again after failing: the pusher then stops backing off */
  onRestored: (() => void) | null = null;

  constructor(private readonly clock: Clock, private readonly log: Logger) {}

  contact(extra: Record<string, unknown> = {}): void {
    const wasDown = this.reachable === false;
    this.reachable = true;
    this.lastContactAt = this.clock.now();
    this.lastError = null;
    if (wasDown) {
      this.log.info("leader reachable again", extra);
      this.onRestored?.();
    }
  }

  failed(err: LeaderError, extra: Record<string, unknown> = {}): void {
    const wasUp = this.reachable !== false;
    this.reachable = false;
    const changed = this.lastError !== err.message;
    this.lastError = err.message;
    // once per outage (and again when the reason changes), not once per retry
    if (wasUp || changed) this.log[err.refused ? "error" : "warn"]("leader unreachable", { error: err.message, status: err.status, code: err.code, ...extra });
  }
}
