import { randomBytes } from "node:crypto";

/**
 * Which monitors changed since a probe last looked, so the definitions feed sends only those.
 *
 * Every `monitor.changed` (create, edit, pause, resume, delete; announced after the commit) gets the
 * next sequence number. A cursor is `<epoch>.<seq>`: the epoch is random per leader process, so a
 * cursor from before a leader restart (whose in-memory log is gone) earns a full snapshot instead
 * of a wrong "nothing changed". Kept in memory on purpose: the writers of monitor definitions are
 * this process's own API handlers and, with several instances on one database, the other
 * instances', whose changes are relayed here (README "Several instances"); every change is announced,
 * and a restart, or a probe moving to another instance, costs that probe one full download.
 */
export class MonitorChangeLog {
  private epoch = randomBytes(6).toString("hex");
  private seq = 0;
  /** monitor id → sequence of its latest change and the account that owns the monitor */
  private latest = new Map<number, { seq: number; accountId: number }>();
  private waiters = new Set<() => void>();

  record(monitorId: number, accountId: number): void {
    this.latest.set(monitorId, { seq: ++this.seq, accountId });
    for (const w of [...this.waiters]) w();
  }

  get cursor(): string {
    return `${this.epoch}.${this.seq}`;
  }

  /**
   * Forgets what changed: every cursor given so far earns a full snapshot. For when changes may have
   * been missed (another instance's, while the relay between instances was cut: README "Several
   * instances"). Held long-polls are woken to fetch it.
   */
  reset(): void {
    this.epoch = randomBytes(6).toString("hex");
    this.latest.clear();
    for (const w of [...this.waiters]) w();
  }

  /** The sequence a cursor stands for, or null when it is absent, malformed or of another epoch. */
  parse(cursor: string | null): number | null {
    if (!cursor) return null;
    const m = /^([0-9a-f]{12})\.(\d{1,15})$/.exec(cursor);
    if (!m || m[1] !== this.epoch) return null;
    const seq = Number(m[2]);
    return seq <= this.seq ? seq : null;
  }

  /**
   * Monitor ids changed after `seq`, of the accounts `inScope` accepts: a peer never learns that a
   * monitor of another account changed or was deleted.
   */
  changedSince(seq: number, inScope: (accountId: number) => boolean): number[] {
    const out: number[] = [];
    for (const [id, c] of this.latest) if (c.seq > seq && inScope(c.accountId)) out.push(id);
    return out.sort((a, b) => a - b);
  }

  /** Resolves on the next change, after `ms`, on abort, or when the log is woken (shutdown). */
  waitForChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Ends every wait now (the server is stopping). */
  wakeAll(): void {
    for (const w of [...this.waiters]) w();
  }

  get waiting(): number {
    return this.waiters.size;
  }
}
