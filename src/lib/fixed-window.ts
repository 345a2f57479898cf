/**
 * Fixed-window counters: a window opens with its key's first request and lasts `windowMs`
 * (docs/api-rules.md "Rate limits and headers"). Expired windows are swept lazily so memory follows
 * the number of active keys.
 */
export interface WindowVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** epoch ms when the window ends */
  resetAt: number;
}

export class FixedWindowLimiter<K = string> {
  private windows = new Map<K, { start: number; count: number }>();
  private lastSweep = 0;
  constructor(private readonly windowMs = 60_000) {}

  hit(key: K, limit: number, now: number): WindowVerdict {
    const w = this.windowOf(key, now);
    const allowed = w.count < limit;
    if (allowed) w.count++;
    return { allowed, limit, remaining: Math.max(0, limit - w.count), resetAt: w.start + this.windowMs };
  }

  /**
   * Counts a request and says whether it is allowed, as `hit` does, without building a verdict
   * (the ping path calls this per request and asks `hit` only for a refusal's Retry-After).
   */
  take(key: K, limit: number, now: number): boolean {
    const w = this.windowOf(key, now);
    if (w.count >= limit) return false;
    w.count++;
    return true;
  }

  /** The verdict `hit` would give, without counting a request (limits that count only failures). */
  peek(key: K, limit: number, now: number): WindowVerdict {
    const w = this.windowOf(key, now);
    return { allowed: w.count < limit, limit, remaining: Math.max(0, limit - w.count), resetAt: w.start + this.windowMs };
  }

  /** Counts `amount` (bytes, say) whatever the limit: for budgets that are cut to, not refused. */
  spend(key: K, amount: number, now: number): void {
    this.windowOf(key, now).count += amount;
  }

  /**
   * Takes back a request `hit` counted and allowed, while its window is the one it was counted in:
   * for limits on failures whose verdict comes later (a password hash), each attempt is counted
   * before it is judged, so attempts sent at once are all counted, and one that succeeds is taken back.
   */
  giveBack(key: K, counted: WindowVerdict): void {
    const w = this.windows.get(key);
    if (!counted.allowed || !w || w.start + this.windowMs !== counted.resetAt || w.count === 0) return;
    if (--w.count === 0) this.windows.delete(key);
  }

  /** The key's current window, a new one if its last has ended. */
  private windowOf(key: K, now: number): { start: number; count: number } {
    this.sweep(now);
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    return w;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}

export function retryAfterSeconds(v: WindowVerdict, now: number): number {
  return Math.max(1, Math.ceil((v.resetAt - now) / 1000));
}
