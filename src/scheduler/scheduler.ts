import type { AppEvents } from "../context.ts";
import { logWriteFailure } from "../lib/storage-errors.ts";
import { failed, type CheckResult, type CheckStatus } from "../domain/check-result.ts";
import type { ProbeMonitor } from "../domain/monitor.ts";
import type { Clock } from "../lib/clock.ts";
import type { EventHub } from "../lib/event-hub.ts";
import type { Logger } from "../lib/logger.ts";
import type { Metrics } from "../lib/metrics.ts";
import type { MonitorSource, SchedulableMonitor } from "./db-source.ts";
import { LatenessHistogram, type LatenessSummary } from "./lateness.ts";
import { MinHeap, type HeapItem } from "../lib/min-heap.ts";
import { FairQueue } from "./fair-queue.ts";
import { NextRunWriter } from "./next-run-writer.ts";
import type { PatternThread } from "./pattern-thread.ts";
import { DEFAULT_PROBES, runProbe, type ProbeTable } from "./run-check.ts";
import type { SaturationReport } from "../domain/saturation-report.ts";
import { DEFAULT_SATURATION, SaturationWatch, type SaturationOptions } from "./saturation.ts";
import { effectiveIntervalMs, joinPhase, MAX_RECHECK_DELAY_MS, nextRegularRun, phaseOffset, recheckDelay } from "./timing.ts";

/** Where results go: the engine on the leader, the spool on a probe. */
export type ResultSink = (monitorId: number, region: string, result: CheckResult) => Promise<void>;

export interface SchedulerOptions {
  region: string;
  sink: ResultSink;
  source: MonitorSource;
  clock: Clock;
  log: Logger;
  maxConcurrent: number;
  /** checks of one account in flight at once while other accounts' monitors are scheduled too (default: half of maxConcurrent) */
  maxPerAccount?: number;
  /** heard for 'monitor.changed', so edits take effect without a restart */
  events?: EventHub<AppEvents>;
  probes?: ProbeTable;
  extraCa?: string;
  blockPrivateTargets?: boolean;
  /** --rdap-bootstrap, handed to domain probes */
  rdapBootstrapUrl?: string;
  /** runs the monitors' regular expressions, account by account (pattern-thread.ts); absent, checks match them on this thread */
  patterns?: Pick<PatternThread, "forAccount">;
  /** cap of the re-check delay after a first failure (default 10 s; tests shorten it) */
  recheckMaxMs?: number;
  /** how long next_run_at changes gather before one write (default 500 ms) */
  persistDelayMs?: number;
  /** how often lateness is logged at debug (default 60 s) */
  statsEveryMs?: number;
  /** abort margin beyond timeout_ms (default 1 s) */
  abortMarginMs?: number;
  /** when the scheduler counts as saturated (default: DEFAULT_SATURATION; tests shorten it) */
  saturation?: Partial<SaturationOptions>;
  /** where lateness, skipped runs and latency set aside under saturation are also published */
  metrics?: Pick<Metrics, "schedulerLateness" | "schedulerRunsSkipped" | "latencyNotJudged">;
}

export interface SchedulerStats extends LatenessSummary {
  scheduled: number;
  in_flight: number;
  waiting: number;
}

interface Entry extends HeapItem {
  id: number;
  def: SchedulableMonitor;
  intervalMs: number;
  offset: number;
  /** the run due at `key` is off the phase (first run, re-check): the one after joins the phase */
  offPhase: boolean;
  /** set while a run is in flight */
  running: AbortController | null;
  waiting: boolean;
  lastStatus: CheckStatus | null;
  removed: boolean;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * When each monitor runs. One min-heap keyed by due time and one timer armed for its top, so ten
 * thousand monitors cost ten thousand small objects, not ten thousand timers. Due monitors wait for
 * one of `maxConcurrent` slots, each account's in turn and within its share (fair-queue.ts); a
 * monitor still running when due again is skipped (and the skip counted and logged), so one
 * monitor never runs twice at once.
 */
export class Scheduler {
  private heap = new MinHeap<Entry>();
  private entries = new Map<number, Entry>();
  private readonly ready: FairQueue<Entry>;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private armedFor = Infinity;
  private statsTimer: ReturnType<typeof setInterval> | null = null;
  private reloads = new Map<number, Promise<void>>();
  /** ids with a run in flight, kept apart from entries: a monitor paused and resumed mid-run gets a
   * new entry while the old run finishes, and must still not run twice at once */
  private runningIds = new Set<number>();
  private unsubscribe: (() => void) | null = null;
  private idleWaiters: (() => void)[] = [];
  private lateness = new LatenessHistogram();
  private readonly load: SaturationWatch;
  private loadTimer: ReturnType<typeof setInterval> | null = null;
  /** checks per millisecond the scheduled monitors ask for, kept as entries come and go */
  private askedPerMs = 0;
  private stopped = false;
  private started = false;
  private reconciling: Promise<void> = Promise.resolve();
  /** for each reconciliation under way, the monitors reloaded since it read the source */
  private reloadedDuring = new Set<Set<number>>();
  private readonly probes: ProbeTable;
  private readonly times: NextRunWriter;

  constructor(private readonly o: SchedulerOptions) {
    this.probes = o.probes ?? DEFAULT_PROBES;
    this.times = new NextRunWriter(o.source.persistNextRuns?.bind(o.source), o.persistDelayMs ?? 500, o.log);
    this.load = new SaturationWatch({ ...DEFAULT_SATURATION, ...o.saturation }, o.log, () => o.clock.now());
    this.ready = new FairQueue(o.maxConcurrent, o.maxPerAccount ?? Math.ceil(o.maxConcurrent / 2));
  }

  /** Loads every schedulable monitor and starts the clock. */
  async start(): Promise<void> {
    const now = this.o.clock.now();
    const defs = await this.o.source.loadAll();
    for (const def of defs) this.place(def, now);
    this.unsubscribe = this.o.events?.on("monitor.changed", (e) => void this.reload(e.monitorId, e.deleted === true)) ?? null;
    const every = this.o.statsEveryMs ?? 60_000;
    this.statsTimer = setInterval(() => this.o.log.debug("lateness", { ...this.stats(), buckets: undefined }), every);
    this.statsTimer.unref?.();
    this.loadTimer = setInterval(() => this.load.tick(this.loadNow()), this.o.saturation?.tickMs ?? DEFAULT_SATURATION.tickMs);
    this.loadTimer.unref?.();
    this.started = true;
    this.o.log.info("scheduler started", { monitors: defs.length, region: this.o.region, max_concurrent: this.o.maxConcurrent, max_per_account: this.ready.perAccount });
    this.arm();
  }

  /**
   * Brings the scheduled monitors to the source's current list, when the set this process checks
   * changed as a whole (an instance of its region came or went, README "Several instances"; or
   * changes may have been missed). Monitors no longer listed are dropped, a run in flight still
   * finishing and recording; new ones are placed as at start, so a monitor handed over from
   * another instance keeps the cadence its stored next run says; the rest take their current
   * definition. Reconciliations run one at a time; monitors reloaded meanwhile are left to the reload.
   */
  reconcile(): Promise<{ added: number; removed: number; scheduled: number }> {
    const next = this.reconciling.then(() => this.applyReconcile());
    this.reconciling = next.then(
      () => {},
      () => {},
    );
    return next;
  }

  private async applyReconcile(): Promise<{ added: number; removed: number; scheduled: number }> {
    let added = 0;
    let removed = 0;
    if (this.stopped || !this.started) return { added, removed, scheduled: this.entries.size };
    const reloaded = new Set<number>();
    this.reloadedDuring.add(reloaded);
    try {
      const defs = await this.o.source.loadAll();
      if (this.stopped) return { added, removed, scheduled: this.entries.size };
      const now = this.o.clock.now();
      const listed = new Set<number>();
      for (const def of defs) {
        listed.add(def.id);
        if (reloaded.has(def.id)) continue;
        const e = this.entries.get(def.id);
        if (e) this.refresh(e, def);
        else {
          this.place(def, now);
          added++;
        }
      }
      for (const e of [...this.entries.values()]) {
        if (listed.has(e.id) || reloaded.has(e.id)) continue;
        this.removeEntry(e, false);
        removed++;
      }
    } finally {
      this.reloadedDuring.delete(reloaded);
    }
    this.arm();
    return { added, removed, scheduled: this.entries.size };
  }

  /**
   * Picks up a monitor's current definition (created, edited, paused, resumed, deleted). Reloads of
   * one monitor run in order, so a quick pause-resume cannot be applied backwards.
   */
  reload(monitorId: number, deleted = false): Promise<void> {
    const prev = this.reloads.get(monitorId) ?? Promise.resolve();
    const next = prev
      .then(() => this.applyReload(monitorId, deleted))
      .catch((err) => this.o.log.error("reloading a monitor failed", { monitor_id: monitorId, error: String(err) }))
      .finally(() => {
        if (this.reloads.get(monitorId) === next) this.reloads.delete(monitorId);
      });
    this.reloads.set(monitorId, next);
    return next;
  }

  /** Makes a monitor due now (an operator's "check now", and tests). False when it is not scheduled. */
  runNow(monitorId: number): boolean {
    const e = this.entries.get(monitorId);
    if (!e || this.stopped) return false;
    e.offPhase = true;
    this.heap.update(e, this.o.clock.now());
    this.arm();
    return true;
  }

  /** When a monitor is next due, or null when it is not scheduled here. */
  nextRunAt(monitorId: number): number | null {
    const e = this.entries.get(monitorId);
    return e && this.heap.has(e) ? e.key : null;
  }

  /** true from start() until stop(): /readyz reports a stopped scheduler as not ready */
  get running(): boolean {
    return this.started && !this.stopped;
  }

  stats(): SchedulerStats {
    return { scheduled: this.entries.size, in_flight: this.ready.inFlight, waiting: this.ready.waiting, ...this.lateness.summary() };
  }

  /** Whether checks start on time, as of the last verdict (taken every second). */
  saturation(): SaturationReport {
    return this.load.report();
  }

  private loadNow() {
    const oldest = this.ready.oldestDueAt();
    return {
      inFlight: this.ready.inFlight,
      maxConcurrent: this.o.maxConcurrent,
      waiting: this.ready.waiting,
      oldestWaitMs: oldest !== null ? Math.max(0, this.o.clock.now() - oldest) : 0,
      askedPerSec: Math.max(0, this.askedPerMs * 1000),
    };
  }

  /** Stops scheduling, lets in-flight checks finish until the deadline, aborts the rest, flushes. */
  async stop(deadlineMs: number): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    if (this.statsTimer) clearInterval(this.statsTimer);
    if (this.loadTimer) clearInterval(this.loadTimer);
    this.timer = null;
    this.ready.clear();
    const idle = new Promise<void>((resolve) => (this.ready.inFlight === 0 ? resolve() : this.idleWaiters.push(resolve)));
    let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = await Promise.race([idle.then(() => false), new Promise<boolean>((r) => (deadlineTimer = setTimeout(() => r(true), Math.max(0, deadlineMs))))]);
    clearTimeout(deadlineTimer);
    if (timedOut) {
      const running = [...this.entries.values()].filter((e) => e.running);
      this.o.log.warn("aborting checks still running at shutdown", { count: running.length });
      for (const e of running) e.running!.abort(new Error("shutting down"));
      // aborted probes settle promptly; their results are dropped
      await Promise.race([idle, Bun.sleep(250)]);
    }
    await this.times.flush();
    this.o.log.info("scheduler stopped", { runs: this.lateness.summary().runs });
  }

  private async applyReload(monitorId: number, deleted: boolean): Promise<void> {
    if (this.stopped) return;
    for (const set of this.reloadedDuring) set.add(monitorId);
    const def = deleted ? null : await this.o.source.loadOne(monitorId);
    if (this.stopped) return;
    const e = this.entries.get(monitorId);
    if (!def) {
      if (!e) return;
      this.removeEntry(e, deleted);
      if (!deleted) this.times.set(monitorId, null);
      this.o.log.debug("monitor unscheduled", { monitor_id: monitorId, deleted });
    } else if (!e) {
      // new or resumed (no next run stored): checked at once (docs/monitors.md "Scheduling"); one
      // handed over from another instance keeps the next run that instance stored
      this.place(def, this.o.clock.now());
      this.o.log.debug("monitor scheduled", { monitor_id: monitorId });
    } else {
      this.refresh(e, def);
    }
    for (const set of this.reloadedDuring) set.add(monitorId);
    this.arm();
  }

  /** Schedules a monitor not scheduled yet: at start, or handed over from another instance. */
  private place(def: SchedulableMonitor, now: number): void {
    // a stored future next_run_at is kept across restarts; a new or overdue monitor runs at once
    // (the concurrency cap paces a crowd of them), and one stored too far ahead (its interval
    // was shortened while the service was down) rejoins its phase
    const intervalMs = effectiveIntervalMs(def.intervalSec);
    const stored = def.lastCheckedAt !== null ? def.nextRunAt : null;
    if (stored === null || stored <= now) this.add(def, now, true);
    else if (stored - now > intervalMs * 1.5) this.add(def, joinPhase(now, intervalMs, phaseOffset(def.id, intervalMs)), false);
    else this.add(def, stored, false);
  }

  /** A scheduled monitor's new definition; a changed interval rejoins its phase unless the next run is sooner. */
  private refresh(e: Entry, def: SchedulableMonitor): void {
    const intervalMs = effectiveIntervalMs(def.intervalSec);
    e.def = def;
    if (intervalMs === e.intervalMs) return;
    this.askedPerMs += 1 / intervalMs - 1 / e.intervalMs;
    e.intervalMs = intervalMs;
    e.offset = phaseOffset(e.id, intervalMs);
    const rejoin = joinPhase(this.o.clock.now(), intervalMs, e.offset);
    if (!this.heap.has(e) || rejoin < e.key) {
      this.heap.update(e, rejoin);
      e.offPhase = false;
      this.times.set(e.id, rejoin);
    }
  }

  private add(def: SchedulableMonitor, dueAt: number, offPhase: boolean): void {
    const intervalMs = effectiveIntervalMs(def.intervalSec);
    const e: Entry = { id: def.id, def, key: dueAt, heapIndex: -1, intervalMs, offset: phaseOffset(def.id, intervalMs), offPhase, running: null, waiting: false, lastStatus: null, removed: false };
    this.entries.set(def.id, e);
    this.ready.scheduled(def.accountId, 1);
    this.askedPerMs += 1 / intervalMs;
    this.heap.push(e);
    if (def.nextRunAt !== dueAt) this.times.set(def.id, dueAt);
  }

  private removeEntry(e: Entry, abort: boolean): void {
    e.removed = true;
    this.heap.remove(e);
    this.entries.delete(e.id);
    this.ready.scheduled(e.def.accountId, -1);
    this.askedPerMs -= 1 / e.intervalMs;
    if (abort && e.running) e.running.abort(new Error("monitor deleted"));
  }

  /** Points the one timer at the earliest due entry, unless it already is. */
  private arm(): void {
    if (this.stopped) return;
    const top = this.heap.peek();
    const at = top ? top.key : Infinity;
    if (this.timer && at === this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = at;
    if (!top) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - this.o.clock.now()));
    this.timer = setTimeout(() => this.onTimer(), delay);
  }

  private onTimer(): void {
    this.timer = null;
    this.armedFor = Infinity;
    if (this.stopped) return;
    this.takeDue();
    this.pump();
    this.arm();
  }

  /**
   * Moves the runs due by now to the waiting line. Called on the timer and also whenever a check
   * finishes: the timer fires only when the event loop comes round to timers, after every socket
   * event that is ready, and with thousands of checks a minute those finishing checks are the
   * sooner chance to start the next ones on time (BENCHMARKS.md, the scheduler's start lateness).
   */
  private takeDue(): void {
    const now = this.o.clock.now();
    for (let top = this.heap.peek(); top && top.key <= now; top = this.heap.peek()) {
      this.heap.pop();
      this.due(top, now);
    }
  }

  private due(e: Entry, now: number): void {
    const dueAt = e.key;
    if (e.running || e.waiting || this.runningIds.has(e.id)) {
      // never two runs of one monitor at once: this run is skipped, the next keeps the cadence
      this.lateness.skip();
      this.o.metrics?.schedulerRunsSkipped.inc();
      this.o.log.info("run skipped: the previous check is still running", { monitor_id: e.id, due_at: dueAt });
      this.schedule(e, dueAt, now);
      return;
    }
    e.waiting = true;
    this.ready.push(e, e.def.accountId, dueAt);
  }

  /** Starts waiting runs while there are free slots (and shares) for them. */
  private pump(): void {
    while (!this.stopped) {
      const run = this.ready.next();
      if (!run) return;
      run.item.waiting = false;
      if (!run.item.removed) void this.execute(run.item, run.dueAt, run.account);
    }
  }

  private schedule(e: Entry, dueAt: number, now: number): void {
    const next = e.offPhase ? joinPhase(now, e.intervalMs, e.offset) : nextRegularRun(dueAt, now, e.intervalMs, e.offset);
    e.offPhase = false;
    this.heap.update(e, next);
    this.times.set(e.id, next);
  }

  private async execute(e: Entry, dueAt: number, account: number): Promise<void> {
    const started = this.o.clock.now();
    const lateness = started - dueAt;
    this.lateness.observe(lateness);
    this.load.observeStart(lateness);
    this.o.metrics?.schedulerLateness.observe(Math.max(0, lateness) / 1000);
    // the next run is placed now, so the cadence does not drift by the check's duration
    if (!this.heap.has(e)) this.schedule(e, dueAt, started);
    const controller = new AbortController();
    e.running = controller;
    this.runningIds.add(e.id);
    this.ready.started(account);
    try {
      let result: CheckResult;
      let monitor: ProbeMonitor | null = null;
      try {
        monitor = e.def.build();
        result = await runProbe(monitor, { probes: this.probes, now: () => this.o.clock.now(), extraCa: this.o.extraCa, blockPrivateTargets: this.o.blockPrivateTargets, rdapBootstrapUrl: this.o.rdapBootstrapUrl, patterns: this.o.patterns?.forAccount(e.def.accountId), signal: controller.signal, marginMs: this.o.abortMarginMs });
      } catch (err) {
        // a definition that cannot be run (unreadable secret, bad stored JSON) is a failed check
        result = failed(started, "internal_error", (err as Error).message);
      }
      if (controller.signal.aborted && (this.stopped || e.removed)) return; // shutdown or deletion: not a real result
      if (monitor) result = this.load.judge(result, monitor.api_max_latency_ms, started, lateness, () => this.o.metrics?.latencyNotJudged.inc());
      try {
        await this.o.sink(e.id, this.o.region, result);
      } catch (err) {
        // a full disk fails every result: reported once a minute rather than once per check
        logWriteFailure(this.o.log, "recording a check result failed", err, { monitor_id: e.id });
      }
      this.afterResult(e, result);
    } finally {
      e.running = null;
      this.runningIds.delete(e.id);
      this.ready.finished(account);
      if (this.ready.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
      if (!this.stopped) this.takeDue();
      this.pump();
      this.arm();
    }
  }

  /** After a region's first failure it re-checks within min(interval, 10 s): docs/monitors.md "Scheduling". */
  private afterResult(e: Entry, result: CheckResult): void {
    const firstFailure = result.status === "down" && e.lastStatus !== "down";
    e.lastStatus = result.status;
    if (!firstFailure || e.removed || this.stopped) return;
    const at = this.o.clock.now() + recheckDelay(e.intervalMs, this.o.recheckMaxMs ?? MAX_RECHECK_DELAY_MS);
    if (this.heap.has(e) && at >= e.key) return;
    e.offPhase = true;
    this.heap.update(e, at);
    this.times.set(e.id, at);
  }
}
