/**
 * The heartbeat service: the ping endpoint, the group-commit intake, the ping journal's fold and the
 * deadline timers, started once per leader process from start-services.ts.
 *
 * Start-up rebuilds the timers from monitors.heartbeat_deadline_at; a deadline that passed while the
 * server was down fires at once, and the conditional UPDATE in applyStateChange keeps a transition
 * that did commit before a crash from firing twice. `monitor.changed` (pause, resume, edits,
 * deletion, token rotation) re-evaluates the monitor without a restart.
 *
 * On SQLite, pings the last run acknowledged but did not fold out of the journal, and those a
 * restored backup carries (the ping_journal table), are folded before the timers are rebuilt, so the
 * deadlines are judged from every acknowledged ping. Then the fold worker takes over the folding.
 * PostgreSQL has no journal: each batch is written by its own transaction (PingPath).
 */
import { followHeartbeatDeadlines } from "../cluster/deadline-follower.ts";
import type { AppContext } from "../context.ts";
import type { Logger } from "../lib/logger.ts";
import type { Service } from "../lib/service.ts";
import type { SqliteStore } from "../store/database.ts";
import { listHeartbeatDeadlines } from "../store/heartbeat.ts";
import { nothingJournaled, PingJournal } from "../store/ping-journal.ts";
import { preparePingStatements } from "../store/ping-statements.ts";
import { postgresPingStatements } from "../store/postgres-ping-statements.ts";
import { DeadlineTimers } from "./deadline-timers.ts";
import { heartbeatEndpoint } from "./endpoint.ts";
import { FOLD_SLICE, FoldScheduler } from "./fold-scheduler.ts";
import { startFoldThread } from "./fold-thread.ts";
import { PingBatches, type Committed, type PingPath } from "./ping-batches.ts";
import { TokenCache } from "./token-cache.ts";

/** after a batch failed to commit, its evaluations are tried again this much later */
const RETRY_MS = 1000;

export async function startHeartbeatService(ctx: AppContext): Promise<Service> {
  const log = ctx.log.child("heartbeat");
  const tokens = new TokenCache(ctx.db);

  const onCommitted = (r: Committed) => {
    for (const [id, at] of r.deadlines) timers.set(id, at);
    for (const t of r.transitions) {
      log.info("transition", { monitor_id: t.monitorId, from: t.from, to: t.to, at: new Date(t.at).toISOString(), late_ms: t.lateMs });
    }
    for (const s of r.stateChanges) ctx.events.emit("monitor.state", s);
  };
  const journaling = ctx.store.engine === "sqlite" ? openJournal(ctx, ctx.store, log) : null;
  const path: PingPath = journaling
    ? { journal: journaling.journal, stmts: preparePingStatements(journaling.store.sqlite, ctx.config.region) }
    : { journal: null, stmts: postgresPingStatements(ctx.config.region) };
  const batches = new PingBatches(ctx, path, {
    afterBatch: () => journaling?.folds.soon(),
    onCommitted,
    onEvaluateFailed: (ids) => {
      for (const id of ids) timers.set(id, ctx.clock.now() + RETRY_MS);
    },
    log,
  });
  // with several instances on PostgreSQL, only the leader judges deadlines (README "Several instances")
  const timers = new DeadlineTimers(ctx.clock, (ids) => ctx.cluster.leading && batches.evaluate(ids));
  await journaling?.start();

  const cached = await tokens.warm();
  const rows = await listHeartbeatDeadlines(ctx.db);
  const unscheduled: number[] = [];
  for (const r of rows) {
    if (r.heartbeat_deadline_at === null) unscheduled.push(r.id);
    else timers.set(r.id, r.heartbeat_deadline_at);
  }
  if (unscheduled.length) batches.evaluate(unscheduled);
  log.info("heartbeat timers rebuilt", { monitors: cached, deadlines: timers.size, overdue: rows.filter((r) => r.heartbeat_deadline_at !== null && r.heartbeat_deadline_at <= ctx.clock.now()).length });

  // deadlines set by pings other instances took: the leader reads them from the database
  const follower = followHeartbeatDeadlines(ctx, { set: (id, at) => timers.set(id, at), evaluate: (ids) => batches.evaluate(ids) });

  ctx.metrics.gauge("vigil_heartbeat_deadlines", "Heartbeat monitors with a pending deadline timer", () => timers.size);
  ctx.metrics.gauge("vigil_heartbeat_queue_length", "Pings and deadline evaluations waiting to be written", () => batches.pending);
  ctx.metrics.gauge("vigil_heartbeat_journaled_pings", "Acknowledged pings in the ping journal, not yet folded into events and checks", () => journaling?.journal.size ?? 0);

  const off = ctx.events.on("monitor.changed", ({ monitorId, deleted, remote }) => {
    tokens.changed(monitorId, deleted === true).catch((err) => log.error("token cache reload failed", { monitor_id: monitorId, error: String(err) }));
    batches.forget(monitorId);
    if (deleted) timers.set(monitorId, null);
    // a change made on another instance was evaluated there
    else if (!remote) batches.evaluate([monitorId]);
  });

  const endpoint = heartbeatEndpoint(ctx, { resolveToken: (t) => tokens.resolve(t), submit: (p) => batches.submit(p) });
  return {
    name: "heartbeat",
    plugin: endpoint.plugin,
    routes: endpoint.routes,
    async stop(deadlineMs) {
      off();
      follower.stop();
      timers.stop();
      await Promise.race([
        (async () => {
          await batches.close();
          await journaling?.folds.close();
        })(),
        Bun.sleep(deadlineMs),
      ]);
      ctx.pings = nothingJournaled(ctx.db);
      journaling?.journal.close();
    },
  };
}

/**
 * The ping journal and its folds, SQLite's (README "Heartbeat monitors"). `start` folds what an
 * earlier run left, then hands the folding to the fold worker and the journal's reads to ctx.pings.
 */
function openJournal(ctx: AppContext, store: SqliteStore, log: Logger) {
  const journal = PingJournal.open(store, { dataDir: ctx.config.dataDir, region: ctx.config.region, writes: ctx.writes });
  const folds = new FoldScheduler(journal, ctx.writes, log);
  return {
    store,
    journal,
    folds,
    async start(): Promise<void> {
      if (journal.left > 0) await folds.foldAll();
      await journal.forgetCarried();
      if (journal.replayed > 0) log.info("folded the pings the last run journaled", { pings: journal.replayed });
      try {
        folds.useWorker(await startFoldThread({ databasePath: store.path, dataDir: ctx.config.dataDir, region: ctx.config.region, slice: FOLD_SLICE, onFolded: (m) => journal.folded(m), log }));
      } catch (err) {
        log.error("the fold worker could not start; the serving thread folds the ping journal", { error: err instanceof Error ? err.message : String(err) });
      }
      ctx.pings = journal;
    },
  };
}
