/**
 * The heartbeat service: the ping endpoint, the group-commit intake and the deadline timers,
 * started once per leader process from start-services.ts.
 *
 * Start-up rebuilds the timers from monitors.heartbeat_deadline_at; a deadline that passed while the
 * server was down fires at once, and the conditional UPDATE in applyStateChange keeps a transition
 * that did commit before a crash from firing twice. `monitor.changed` (pause, resume, edits,
 * deletion, token rotation) re-evaluates the monitor without a restart.
 *
 * Pings the last run acknowledged but did not fold out of the journal, and those a restored backup
 * carries (the ping_journal table), are folded before the timers are rebuilt, so the deadlines are
 * judged from every acknowledged ping. Then the fold worker takes over the folding.
 */
import type { AppContext } from "../context.ts";
import type { Service } from "../lib/service.ts";
import { listHeartbeatDeadlines } from "../store/heartbeat.ts";
import { openPingJournal, readJournalBatches } from "../store/ping-journal-file.ts";
import { carriedPings, preparePingFold, storedEntry, watermarks, type StoredEntry } from "../store/ping-journal.ts";
import { preparePingStatements } from "../store/ping-statements.ts";
import { DeadlineTimers } from "./deadline-timers.ts";
import { heartbeatEndpoint } from "./endpoint.ts";
import { PendingPings } from "./pending-pings.ts";
import { startFoldThread } from "./fold-thread.ts";
import { FOLD_SLICE, PingWriter, type Committed } from "./ping-writer.ts";
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
  const file = openPingJournal(ctx.config.dataDir);
  const carried = carriedPings(ctx.store.sqlite);
  const fromTable = carried.all();
  const onDisk = readJournalBatches(ctx.config.dataDir);
  const lastBatch = onDisk.reduce((n, b) => Math.max(n, b.id), 0);
  const marks = watermarks(ctx.store.sqlite);
  const found = [...fromTable.map(storedEntry), ...onDisk.flatMap((b) => b.entries)];
  // new entries are numbered above every entry and watermark there is, or a new one could be taken for folded
  let lastId = 0;
  for (const e of found) if (e[0] > lastId) lastId = e[0];
  for (const mark of marks.values()) if (mark > lastId) lastId = mark;
  const pending = new PendingPings(lastId, lastBatch);
  const unfolded = (e: StoredEntry) => e[0] > (marks.get(e[1]) ?? Infinity);
  // in id order, whichever place they come from: a monitor's pending entries must be
  const replay = found.filter(unfolded).sort((a, b) => a[0] - b[0]);
  for (const e of replay) pending.add(e);
  const left = replay.length;
  const writer = new PingWriter(ctx, preparePingStatements(ctx.store.sqlite, ctx.config.region), { file, fold: preparePingFold(ctx.store.sqlite, ctx.config.region), pending }, log, onCommitted, (ids) => {
    for (const id of ids) timers.set(id, ctx.clock.now() + RETRY_MS);
  });
  const timers = new DeadlineTimers(ctx.clock, (ids) => writer.evaluate(ids));
  if (left > 0 || lastBatch > 0) await writer.foldAll();
  if (fromTable.length > 0 && pending.size === 0) await ctx.writes.run(async () => carried.clearThrough(fromTable.at(-1)!.id));
  if (left > 0) log.info("folded the pings the last run journaled", { pings: left });
  try {
    writer.useWorker(await startFoldThread({ databasePath: ctx.store.path, dataDir: ctx.config.dataDir, region: ctx.config.region, slice: FOLD_SLICE, onFolded: (m) => writer.folded(m), log }));
  } catch (err) {
    log.error("the fold worker could not start; the serving thread folds the ping journal", { error: err instanceof Error ? err.message : String(err) });
  }
  ctx.pings = { lastPingAt: (id) => pending.lastPingAt(id), settle: (id) => writer.settle(id) };

  const cached = await tokens.warm();
  const rows = await listHeartbeatDeadlines(ctx.db);
  const unscheduled: number[] = [];
  for (const r of rows) {
    if (r.heartbeat_deadline_at === null) unscheduled.push(r.id);
    else timers.set(r.id, r.heartbeat_deadline_at);
  }
  if (unscheduled.length) writer.evaluate(unscheduled);
  log.info("heartbeat timers rebuilt", { monitors: cached, deadlines: timers.size, overdue: rows.filter((r) => r.heartbeat_deadline_at !== null && r.heartbeat_deadline_at <= ctx.clock.now()).length });

  ctx.metrics.gauge("vigil_heartbeat_deadlines", "Heartbeat monitors with a pending deadline timer", () => timers.size);
  ctx.metrics.gauge("vigil_heartbeat_queue_length", "Pings and deadline evaluations waiting to be written", () => writer.pending);
  ctx.metrics.gauge("vigil_heartbeat_journaled_pings", "Acknowledged pings in the ping journal, not yet folded into events and checks", () => writer.journaled);

  const off = ctx.events.on("monitor.changed", ({ monitorId, deleted }) => {
    tokens.changed(monitorId, deleted === true).catch((err) => log.error("token cache reload failed", { monitor_id: monitorId, error: String(err) }));
    writer.forget(monitorId);
    if (deleted) timers.set(monitorId, null);
    else writer.evaluate([monitorId]);
  });

  const endpoint = heartbeatEndpoint(ctx, { resolveToken: (t) => tokens.resolve(t), submit: (p) => writer.submit(p) });
  return {
    name: "heartbeat",
    plugin: endpoint.plugin,
    routes: endpoint.routes,
    async stop(deadlineMs) {
      off();
      timers.stop();
      await Promise.race([writer.close(), Bun.sleep(deadlineMs)]);
      ctx.pings = undefined;
      file.close();
    },
  };
}
