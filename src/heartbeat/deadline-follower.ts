/**
 * Heartbeat deadlines are judged by the leader alone (README "Several instances"), but pings are
 * taken by every instance, and each writes the monitor's next deadline (`heartbeat_deadline_at`)
 * to the database without the leader hearing of it. The leader's timers learn them here:
 *
 * - on taking the leadership, every pending deadline is read, as a single instance does at start
 *   (an instance that leads from its start has just read them in the heartbeat service: not again);
 * - then, every `pollMs`, the deadlines due within the next few polls are read again. A deadline
 *   only matters once it is near, and one that pings keep pushing later never gets near, so a poll
 *   reads only the monitors about to go late, not every heartbeat monitor.
 *
 * A timer that fires on a deadline a ping has since moved is harmless: the evaluation reads the
 * row and finds nothing due. The heartbeat service follows only where the ping store is shared by
 * instances (store/ping-store.ts `sharedByInstances`): alone on its database, an instance sets
 * every deadline itself.
 */
import type { AppContext } from "../context.ts";
import { logWriteFailure } from "../lib/storage-errors.ts";
import type { Db } from "../store/database.ts";
import { listHeartbeatDeadlines, listHeartbeatDeadlinesBefore } from "../store/heartbeat.ts";

export interface DeadlineSink {
  /** the heartbeat service's timers: this monitor's deadline is `at` */
  set(monitorId: number, at: number): void;
  /** monitors that are up without a deadline (written by an older build, or by hand): judge them now */
  evaluate(monitorIds: number[]): void;
}

const DEADLINE_POLL_MS = 1_000;

/**
 * Every pending deadline into the timers, and the monitors up without one to be judged now: what
 * the heartbeat service does at start-up, and a new leader here. Returns what it found
 * (`overdue`: deadlines at or before `now`).
 */
export async function loadDeadlines(db: Db, sink: DeadlineSink, now: number): Promise<{ deadlines: number; unscheduled: number; overdue: number }> {
  const rows = await listHeartbeatDeadlines(db);
  const unscheduled: number[] = [];
  let overdue = 0;
  for (const r of rows) {
    if (r.heartbeat_deadline_at === null) unscheduled.push(r.id);
    else {
      sink.set(r.id, r.heartbeat_deadline_at);
      if (r.heartbeat_deadline_at <= now) overdue++;
    }
  }
  if (unscheduled.length) sink.evaluate(unscheduled);
  return { deadlines: rows.length - unscheduled.length, unscheduled: unscheduled.length, overdue };
}

export function followHeartbeatDeadlines(ctx: AppContext, sink: DeadlineSink, pollMs = DEADLINE_POLL_MS): { stop(): void } {
  const log = ctx.log.child("heartbeat");
  // a deadline entering this window is read at least one poll before it falls due
  const horizonMs = 3 * pollMs;
  let timer: ReturnType<typeof setInterval> | null = null;
  let busy = false;
  let stopped = false;
  /** the next read is of every deadline: the leadership was just taken, or the last full read failed */
  let readEverything = true;

  const readAll = async () => {
    const { deadlines, unscheduled } = await loadDeadlines(ctx.db, sink, ctx.clock.now());
    log.info("heartbeat deadlines read by the new leader", { deadlines, unscheduled });
  };
  const readNear = async () => {
    for (const r of await listHeartbeatDeadlinesBefore(ctx.db, ctx.clock.now() + horizonMs)) sink.set(r.id, r.heartbeat_deadline_at);
  };
  const poll = async () => {
    if (busy || stopped || !ctx.cluster.leading) return;
    busy = true;
    const full = readEverything;
    try {
      readEverything = false;
      await (full ? readAll() : readNear());
    } catch (err) {
      if (full) readEverything = true;
      logWriteFailure(log, "reading the heartbeat deadlines failed", err);
    } finally {
      busy = false;
    }
  };

  /** `readAll`: false only at start-up, where the heartbeat service has just read every deadline itself */
  const follow = (readAll = true) => {
    readEverything = readAll;
    if (timer) return;
    void poll();
    timer = setInterval(() => void poll(), pollMs);
  };
  const unfollow = () => {
    if (timer) clearInterval(timer);
    timer = null;
  };
  if (ctx.cluster.leading) follow(false);
  const off = ctx.cluster.onLeadership((leading) => (leading ? follow() : unfollow()));
  return {
    stop() {
      stopped = true;
      off();
      unfollow();
    },
  };
}
