/**
 * On PostgreSQL, ping batches in flight side by side. One write queue runs one transaction at a
 * time, and on PostgreSQL a batch spends most of its time waiting on round trips and the commit's
 * WAL flush, with a core idle (BENCHMARKS.md, "heartbeat on PostgreSQL"): several lanes, each a
 * PingBatches on a write queue (so a connection) of its own, overlap those waits. A monitor always
 * goes to the same lane, so its pings are still written in the order they arrived, and lanes never
 * take the same monitor rows' locks. SQLite keeps one lane: it has one writer, and its journal
 * answers pings without waiting on the database.
 */
import type { AppContext } from "../context.ts";
import { WriteQueue } from "../store/write-queue.ts";
import type { PingOutcome, PingRequest } from "./apply-batch.ts";
import { PingBatches, type PingBatchesOptions, type PingPath } from "./ping-batches.ts";

/** lanes on PostgreSQL: each holds one pooled connection while it writes */
export const POSTGRES_PING_LANES = 4;

export class PingLanes {
  private readonly lanes: PingBatches[];
  private readonly queues: WriteQueue[] = [];

  constructor(ctx: AppContext, path: PingPath, o: PingBatchesOptions) {
    if (path.journal !== null) {
      this.lanes = [new PingBatches(ctx, path, o)];
      return;
    }
    this.lanes = [];
    for (let i = 0; i < POSTGRES_PING_LANES; i++) {
      // a lane's refused writes count for readiness as the shared queue's do
      const writes = new WriteQueue(ctx.db, { log: ctx.log.child("write-queue"), reportTo: ctx.writes });
      this.queues.push(writes);
      this.lanes.push(new PingBatches(ctx, path, { ...o, writes }));
    }
  }

  submit(ping: PingRequest): Promise<PingOutcome> {
    return this.lane(ping.monitorId).submit(ping);
  }

  evaluate(ids: number[]): void {
    if (this.lanes.length === 1) return this.lanes[0]!.evaluate(ids);
    const by = new Map<PingBatches, number[]>();
    for (const id of ids) {
      const lane = this.lane(id);
      let list = by.get(lane);
      if (!list) by.set(lane, (list = []));
      list.push(id);
    }
    for (const [lane, list] of by) lane.evaluate(list);
  }

  forget(monitorId: number): void {
    this.lane(monitorId).forget(monitorId);
  }

  get pending(): number {
    let n = 0;
    for (const l of this.lanes) n += l.pending;
    return n;
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.close()));
    await Promise.all(this.queues.map((q) => q.close()));
  }

  private lane(monitorId: number): PingBatches {
    return this.lanes[monitorId % this.lanes.length]!;
  }
}
