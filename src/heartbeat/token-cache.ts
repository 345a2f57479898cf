/**
 * token → monitor id for every heartbeat monitor, so a ping needs no SELECT. Warmed at start-up,
 * corrected on `monitor.changed`. A change bumps a generation counter, and a lookup that started
 * before the change does not write its (possibly rotated-out) answer back.
 */
import type { Db } from "../store/database.ts";
import { findHeartbeatIdByToken, findHeartbeatToken, listHeartbeatTokens } from "../store/heartbeat.ts";

export class TokenCache {
  private byToken = new Map<string, number>();
  private byId = new Map<number, string>();
  private generation = 0;

  constructor(private readonly db: Db) {}

  async warm(): Promise<number> {
    for (const r of await listHeartbeatTokens(this.db)) this.put(r.heartbeat_token, r.id);
    return this.byToken.size;
  }

  /**
   * The monitor a token belongs to, or null. A hit answers synchronously (no promise per ping); a
   * miss asks the store (a monitor created a moment ago).
   */
  resolve(token: string): number | Promise<number | null> {
    const hit = this.byToken.get(token);
    if (hit !== undefined) return hit;
    return this.lookup(token);
  }

  private async lookup(token: string): Promise<number | null> {
    const gen = this.generation;
    const id = await findHeartbeatIdByToken(this.db, token);
    if (id !== null && gen === this.generation) this.put(token, id);
    return id;
  }

  /** Drops what is known of a monitor at once (rotation answers 404 from this moment) and reloads it. */
  changed(monitorId: number, deleted: boolean): Promise<void> {
    this.generation++;
    this.forget(monitorId);
    if (deleted) return Promise.resolve();
    const gen = this.generation;
    return findHeartbeatToken(this.db, monitorId).then((token) => {
      if (token && gen === this.generation) this.put(token, monitorId);
    });
  }

  get size(): number {
    return this.byToken.size;
  }

  private put(token: string, id: number): void {
    const old = this.byId.get(id);
    if (old !== undefined && old !== token) this.byToken.delete(old);
    this.byId.set(id, token);
    this.byToken.set(token, id);
  }

  private forget(id: number): void {
    const old = this.byId.get(id);
    if (old !== undefined) this.byToken.delete(old);
    this.byId.delete(id);
  }
}
