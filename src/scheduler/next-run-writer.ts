import type { Logger } from "../lib/logger.ts";
import { logWriteFailure } from "../lib/storage-errors.ts";

/**
 * Gathers next_run_at changes and writes them together a moment later: with thousands of monitors
 * a write per run would cost a statement and a commit per run, while one gathered write joins the
 * check results' group commit (the leader's persist goes through the write queue).
 */
export class NextRunWriter {
  private pending = new Map<number, number | null>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly persist: ((times: ReadonlyMap<number, number | null>) => Promise<void>) | undefined,
    private readonly delayMs: number,
    private readonly log: Logger,
  ) {}

  /** Records a monitor's next run (null: not scheduled); the last value per monitor wins. */
  set(id: number, at: number | null): void {
    if (!this.persist) return;
    this.pending.set(id, at);
    this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
  }

  /** Writes what is gathered now; resolves when it (and any earlier write) is done. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.persist || this.pending.size === 0) return this.chain;
    const batch = this.pending;
    this.pending = new Map();
    const persist = this.persist;
    this.chain = this.chain
      .then(() => persist(batch))
      .catch((err) => logWriteFailure(this.log, "writing next_run_at failed", err, { monitors: batch.size }));
    return this.chain;
  }
}
