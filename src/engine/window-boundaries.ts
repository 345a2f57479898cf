import type { AppContext } from "../context.ts";
import { windowSpanAt } from "../domain/maintenance-schedule.ts";
import type { Service } from "../lib/service.ts";
import { monitorIdsByWindow, nextBoundary, settleSpan, spansToSettle, windowPlanOf, windowsStartedBetween } from "../store/maintenance-windows.ts";
import type { MaintenanceWindowRow } from "../store/tables.ts";
import { openIncidentsLeftByMaintenance } from "./maintenance-end.ts";

/**
 * The ends of maintenance windows, acted on once (docs/maintenance-windows.md "How it works"): this
 * runs on the leading instance only (cluster/leader-only.ts). Whether a monitor is in maintenance
 * needs no timer: every instance reads it from the window's stored span. What needs one is the end
 * of a span: the window's monitors that are still down open their incident then, and a recurring
 * window's next span is stored. One timer waits for the nearest start or end of any window, driven
 * by the stored spans (croner computes them); it is set again after every change of a window,
 * here or on another instance, and on start, where ends that passed while Vigil was stopped are
 * acted on at once.
 */

/** Longest wait without a look at the windows, so a change whose announcement was lost is late by this at most. */
const MAX_WAIT_MS = 60_000;

export async function startWindowBoundaries(ctx: AppContext): Promise<Service> {
  const log = ctx.log.child("maintenance-windows");
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  let lookedAt = ctx.clock.now();

  /** A span that ended: its monitors still down open their incidents, then the next span is stored. */
  const settle = async (w: MaintenanceWindowRow, now: number) => {
    const until = w.active_until!;
    const next = w.is_enabled === 1 ? windowSpanAt(windowPlanOf(w), now) : null;
    // nothing ended when the next span holds already: one cut after many chained occurrences goes
    // on where it stopped, and after a stop Vigil may start inside the next occurrence
    const goesOn = next !== null && next.from <= now;
    if (!goesOn) await openIncidentsLeftByMaintenance(ctx, (await monitorIdsByWindow(ctx.db, [w.id])).get(w.id) ?? []);
    if (await settleSpan(ctx.db, w.id, until, next)) {
      if (!goesOn) log.info("maintenance window ended", { window_id: w.id, account_id: w.account_id, ended_at: new Date(until).toISOString(), late_ms: now - until, next_starts_at: next ? new Date(next.from).toISOString() : null });
    }
  };

  const pass = async () => {
    const now = ctx.clock.now();
    for (const w of await windowsStartedBetween(ctx.db, lookedAt, now)) log.info("maintenance window started", { window_id: w.id, account_id: w.account_id, ends_at: new Date(w.active_until!).toISOString() });
    lookedAt = now;
    for (const w of await spansToSettle(ctx.db, now)) await settle(w, now);
    const next = await nextBoundary(ctx.db, now);
    const wait = next === null ? MAX_WAIT_MS : Math.min(MAX_WAIT_MS, Math.max(0, next - ctx.clock.now()));
    if (timer) clearTimeout(timer);
    if (!stopped) timer = setTimeout(() => void look(), wait);
  };

  /** One pass at a time; a call during a pass runs one more right after it. */
  const look = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = pass()
      .catch((err) => {
        log.error("maintenance window pass failed; trying again", { error: String(err) });
        if (timer) clearTimeout(timer);
        if (!stopped) timer = setTimeout(() => void look(), 1000);
      })
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          void look();
        }
      });
    return running;
  };

  const offs = [ctx.events.on("maintenance_window.changed", () => void look()), ctx.events.on("monitors.resync", () => void look())];
  await look();
  return {
    name: "maintenance-windows",
    async stop(deadlineMs) {
      stopped = true;
      for (const off of offs) off();
      if (timer) clearTimeout(timer);
      if (running) await Promise.race([running, Bun.sleep(Math.max(0, deadlineMs))]);
    },
  };
}

/**
 * A change of a window made on this instance that took monitors out of maintenance (the window was
 * deleted, disabled, moved, or let them go while active): those still down open their incident now,
 * here, once, on the instance that made the change (README "Maintenance windows").
 */
export function followWindowChanges(ctx: AppContext): Service {
  const log = ctx.log.child("maintenance-windows");
  let pending: Promise<unknown> = Promise.resolve();
  const off = ctx.events.on("maintenance_window.changed", (e) => {
    if (e.remote || e.left.length === 0) return;
    pending = pending.then(() => openIncidentsLeftByMaintenance(ctx, e.left)).catch((err) => log.error("could not open the incidents of monitors a window change left down", { window_id: e.windowId, error: String(err) }));
  });
  return {
    name: "maintenance-window-changes",
    async stop(deadlineMs) {
      off();
      await Promise.race([pending, Bun.sleep(Math.max(0, deadlineMs))]);
    },
  };
}
