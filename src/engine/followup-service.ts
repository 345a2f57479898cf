import type { AppContext } from "../context.ts";
import { logWriteFailure } from "../lib/storage-errors.ts";
import type { Service } from "../lib/service.ts";
import { releaseStrandedHolds } from "./dependencies.ts";
import { fireDueFollowups, planMissingFollowups } from "./followups.ts";

export interface FollowupServiceOptions {
  /** how often due reminders and escalations are looked for (default 1 s) */
  pollMs?: number;
  /** every how many passes held incidents and changed settings are swept (default 5) */
  sweepEvery?: number;
}

/**
 * The leader's loop over incident follow-ups (README "Dependencies, reminders and escalation"):
 * every second it sends the reminders and escalations that fell due (by ctx.clock, so tests move
 * time instead of waiting), and every few seconds it releases held incidents no parent holds any
 * more and plans follow-ups for incidents whose monitor's settings changed. Everything it reads is
 * in the database, so a restart, or another instance taking the leadership, carries on where it was.
 */
export async function startFollowupService(ctx: AppContext, o: FollowupServiceOptions = {}): Promise<Service> {
  const pollMs = o.pollMs ?? 1000;
  const sweepEvery = o.sweepEvery ?? 5;
  const log = ctx.log.child("followups");
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let passes = 0;

  const pass = async () => {
    const sweep = passes++ % sweepEvery === 0;
    const released = sweep ? await releaseStrandedHolds(ctx) : 0;
    const planned = sweep ? await planMissingFollowups(ctx) : 0;
    const fired = await fireDueFollowups(ctx, ctx.clock.now());
    return { released, planned, fired };
  };
  const loop = async () => {
    timer = null;
    try {
      await pass();
    } catch (err) {
      if (!stopped) logWriteFailure(log, "follow-up pass failed", err);
    }
    if (!stopped) timer = setTimeout(() => void (running = loop()), pollMs);
  };

  // the first pass before this returns: what fell due while Vigil was stopped goes out at start
  try {
    log.info("incident follow-ups started: due reminders and escalations sent", await pass());
  } catch (err) {
    logWriteFailure(log, "follow-up pass failed", err);
  }
  let running: Promise<void> = Promise.resolve();
  timer = setTimeout(() => void (running = loop()), pollMs);
  return {
    name: "followups",
    async stop(deadlineMs) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await Promise.race([running, Bun.sleep(deadlineMs)]);
    },
  };
}
