import type { AppContext } from "../../context.ts";
import { runsInRegion } from "../../engine/probe-monitor.ts";
import type { WindowVerdict } from "../../lib/fixed-window.ts";
import { listPeerMonitorCadences, type MonitorCadence } from "../../store/peer-feed.ts";
import { servesAccount, type Peer } from "./peer-scope.ts";

const WINDOW_MS = 60_000;

/**
 * How many results a peer may deliver per minute (README "Multi-region"): twice what the monitors
 * it is sent produce (one result per interval; the second half covers re-checks after a failure and
 * re-sent batches), plus `--peer-result-limit` for a backlog after an outage. Fixed one-minute
 * windows opened by the peer's first batch; the limit is sized when a window opens. Over it, a
 * batch is 429 with Retry-After, and what did not fit of a batch is answered `retry`: the probe
 * keeps those results and sends them when the window has room again.
 */
export class PeerResultQuota {
  private windows = new Map<number, { start: number; used: number; limit: number }>();
  /** the monitors' cadences, read at most once a minute and shared by every peer */
  private cadences: { at: number; rows: Promise<MonitorCadence[]> } | null = null;

  constructor(private readonly ctx: AppContext) {}

  /** The peer's window now, without counting anything: `allowed` false once it is used up. */
  async check(peer: Peer, now: number): Promise<WindowVerdict> {
    return verdictOf(await this.window(peer, now));
  }

  /** Counts up to `n` results into the peer's window: `granted` of them fit, the first ones of the batch. */
  async take(peer: Peer, n: number, now: number): Promise<{ granted: number; verdict: WindowVerdict }> {
    const w = await this.window(peer, now);
    const granted = Math.max(0, Math.min(n, w.limit - w.used));
    w.used += granted;
    return { granted, verdict: verdictOf(w) };
  }

  private async window(peer: Peer, now: number) {
    let w = this.windows.get(peer.id);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, used: 0, limit: await this.limitFor(peer, now) };
      // another request of this peer may have opened the window while the limit was computed
      const raced = this.windows.get(peer.id);
      if (raced && now - raced.start < WINDOW_MS) return raced;
      this.windows.set(peer.id, w);
    }
    return w;
  }

  private async limitFor(peer: Peer, now: number): Promise<number> {
    if (!this.cadences || now - this.cadences.at >= WINDOW_MS) this.cadences = { at: now, rows: listPeerMonitorCadences(this.ctx.db) };
    let perMinute = 0;
    const pending = this.cadences;
    const rows = await pending.rows.catch((err) => {
      if (this.cadences === pending) this.cadences = null; // read again next time, not in a minute
      throw err;
    });
    for (const m of rows) {
      if (servesAccount(peer, m.account_id) && runsInRegion(m, peer.region)) perMinute += 60 / Math.max(1, m.interval_sec);
    }
    return this.ctx.config.peerResultLimit + Math.ceil(2 * perMinute);
  }
}

function verdictOf(w: { start: number; used: number; limit: number }): WindowVerdict {
  return { allowed: w.used < w.limit, limit: w.limit, remaining: Math.max(0, w.limit - w.used), resetAt: w.start + WINDOW_MS };
}
