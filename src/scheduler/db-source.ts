import type { AppContext } from "../context.ts";
import type { ProbeMonitor } from "../domain/monitor.ts";
import { rowToProbeMonitor, runsInRegion } from "../engine/probe-monitor.ts";
import { findMonitorRow, listSchedulableMonitors, setNextRunTimes } from "../store/schedule.ts";
import type { MonitorRow } from "../store/tables.ts";

/** A monitor as the scheduler holds it: timing fields, and a way to build the probe's view per run. */
export interface SchedulableMonitor {
  id: number;
  /** whose monitor: the account's runs share the slots as fair-queue.ts says, and its checks' patterns
   * take turns with other accounts' (pattern-thread.ts) */
  accountId: number;
  intervalSec: number;
  nextRunAt: number | null;
  lastCheckedAt: number | null;
  /** builds the probe's view (secrets opened) for one run; may throw MonitorDefinitionError */
  build(): ProbeMonitor;
}

/** Where the scheduler's monitors come from: the leader's own store, or (probe role) the leader's feed. */
export interface MonitorSource {
  loadAll(): Promise<SchedulableMonitor[]>;
  /** the monitor's current definition, or null when it is gone, paused or not run here */
  loadOne(monitorId: number): Promise<SchedulableMonitor | null>;
  /** records next_run_at values (null = not scheduled); absent when nothing is persisted */
  persistNextRuns?(times: ReadonlyMap<number, number | null>): Promise<void>;
}

function schedulable(row: MonitorRow, region: string): boolean {
  return row.is_paused === 0 && row.monitor_type !== "heartbeat" && runsInRegion(row, region);
}

/**
 * The leader's source: its own database; next_run_at writes ride the check results' group commit.
 * With several instances on the database, only the monitors this one checks (`owns`, its share of
 * the region: README "Several instances"); it writes no next run of a monitor it does not check,
 * so the one that took it over keeps the cadence stored there.
 */
export function dbMonitorSource(ctx: AppContext, region: string, owns: (monitorId: number) => boolean = () => true): MonitorSource {
  const toSchedulable = (row: MonitorRow): SchedulableMonitor => ({
    id: row.id,
    accountId: row.account_id,
    intervalSec: row.interval_sec,
    nextRunAt: row.next_run_at,
    lastCheckedAt: row.last_checked_at,
    build: () => rowToProbeMonitor(row, ctx.secrets, ctx.privateTargets.blocks(row.account_id)),
  });
  return {
    async loadAll() {
      return (await listSchedulableMonitors(ctx.db)).filter((r) => schedulable(r, region) && owns(r.id)).map(toSchedulable);
    },
    async loadOne(id) {
      if (!owns(id)) return null;
      const row = await findMonitorRow(ctx.db, id);
      return row && schedulable(row, region) ? toSchedulable(row) : null;
    },
    persistNextRuns: async (times) => {
      await Promise.all(inParts(mine(times, owns), NEXT_RUNS_PER_JOB).map((part) => ctx.writes.runByKey(part, (lane) => (trx) => setNextRunTimes(trx, lane))));
    },
  };
}

/**
 * Next runs written by one write job at most. The write queue lets the event loop turn between jobs
 * once a batch has run for its budget (store/write-queue.ts); the half-second of next runs of
 * 100,000 monitors a minute was one job that held the serving thread for 4-8 ms.
 */
const NEXT_RUNS_PER_JOB = 200;

function inParts<K, V>(entries: ReadonlyMap<K, V>, size: number): ReadonlyMap<K, V>[] {
  if (entries.size <= size) return [entries];
  const parts: Map<K, V>[] = [];
  for (const [k, v] of entries) {
    if (parts.length === 0 || parts.at(-1)!.size >= size) parts.push(new Map());
    parts.at(-1)!.set(k, v);
  }
  return parts;
}

/** The next runs of the monitors this instance checks: an unscheduled one handed over is not reset. */
function mine(times: ReadonlyMap<number, number | null>, owns: (monitorId: number) => boolean): ReadonlyMap<number, number | null> {
  for (const id of times.keys()) if (!owns(id)) return new Map([...times].filter(([id]) => owns(id)));
  return times;
}
