import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { PrivateTargetPolicy } from "./auth/private-target-policy.ts";
import { soloCluster, type ClusterView } from "./cluster/view.ts";
import type { Config } from "./config/config.ts";
import type { Clock } from "./lib/clock.ts";
import { HOUR_MS } from "./domain/uptime.ts";
import { EventHub } from "./lib/event-hub.ts";
import { FixedWindowLimiter } from "./lib/fixed-window.ts";
import type { Logger } from "./lib/logger.ts";
import { createMetrics, type Metrics } from "./lib/metrics.ts";
import { PRIVATE_FILE_MODE, restrictToOwner } from "./lib/private-files.ts";
import { createSecretBox, parseSecretKey, type SecretBox } from "./lib/secret-box.ts";
import type { Db, Store } from "./store/database.ts";
import { nothingJournaled, type JournaledPings } from "./store/ping-journal.ts";
import { POSTGRES_WRITE_LANES, SQLITE_BATCH_BUDGET_MS, WriteQueue } from "./store/write-queue.ts";

/** What changed, announced by writers and heard by the scheduler, heartbeat timers, peers and UI. */
export interface AppEvents extends Record<string, unknown> {
  /**
   * a monitor was created, updated, paused/resumed or deleted (deleted: true); `remote` when another
   * instance on the database made the change and it was relayed here (cluster/change-relay.ts)
   */
  "monitor.changed": { monitorId: number; accountId: number; deleted?: boolean; remote?: boolean };
  /** a monitor's aggregate state changed (`remote`: on another instance, relayed) */
  "monitor.state": { monitorId: number; accountId: number; from: string; to: string; at: number; remote?: boolean };
  /**
   * a maintenance window was created, changed or deleted (after the commit); `left`: the monitors
   * this change took out of its maintenance while it was active, whose incidents may open now
   * (engine/window-boundaries.ts); `remote` as above
   */
  "maintenance_window.changed": { windowId: number; accountId: number; left: number[]; remote?: boolean };
  /**
   * changes of other instances may have been missed (the relay's connection was lost and came back):
   * whoever keeps monitor definitions in memory reads them all again
   */
  "monitors.resync": Record<string, never>;
}

/**
 * The one context `main.ts` builds and passes down: nothing is a singleton, so tests build their
 * own with a temp directory and a clock of their choosing.
 */
export interface AppContext {
  config: Config;
  store: Store;
  db: Db;
  log: Logger;
  clock: Clock;
  secrets: SecretBox;
  events: EventHub<AppEvents>;
  /** group commit for the hot write paths (check results); flushed on shutdown (start-services.ts) */
  writes: WriteQueue;
  /** Prometheus instruments of this instance (/metrics) */
  metrics: Metrics;
  /**
   * The per-account API rate limit windows (account id → one-minute window): one for every
   * endpoint an API token opens, /api/v1, /metrics and /peer/v1/peers (auth/token-gate.ts)
   */
  apiRateLimits: FixedWindowLimiter<number>;
  /** bytes of synthetic trace each account stored this hour (account id → window; engine/trace-budget.ts) */
  traceBytes: FixedWindowLimiter<number>;
  /**
   * Acknowledged pings not yet in monitor_events, checks and the monitor row: the heartbeat
   * service's ping journal while it runs, else nothing. Reads of those rows go through it.
   */
  pings: JournaledPings;
  /** which accounts' checks and notifications may reach private addresses */
  privateTargets: PrivateTargetPolicy;
  /**
   * this instance's place among the instances sharing the database: whether it leads, which
   * monitors it checks. One alone (it leads and checks everything) until cluster/service.ts joins it
   * to the others on PostgreSQL.
   */
  cluster: ClusterView;
}

export const SECRET_KEY_FILE = "secret.key";

/**
 * The AES key for secrets at rest: VIGIL_SECRET_KEY when given, else <data>/secret.key, created
 * with mode 0600 on first start. Losing it makes stored secrets unreadable, so it is never rotated
 * silently.
 */
export function loadSecretBox(dataDir: string, keyFromEnv: string | null): SecretBox {
  if (keyFromEnv) return createSecretBox(parseSecretKey(keyFromEnv));
  const path = join(dataDir, SECRET_KEY_FILE);
  if (!existsSync(path)) {
    writeFileSync(path, randomBytes(32).toString("hex") + "\n", { mode: PRIVATE_FILE_MODE, flag: "wx" });
    chmodSync(path, PRIVATE_FILE_MODE);
  }
  restrictToOwner(path);
  return createSecretBox(parseSecretKey(readFileSync(path, "utf8")));
}

export function buildContext(
  parts: Omit<AppContext, "db" | "events" | "writes" | "metrics" | "privateTargets" | "apiRateLimits" | "traceBytes" | "pings" | "cluster"> & { events?: EventHub<AppEvents>; writes?: WriteQueue; metrics?: Metrics },
): AppContext {
  const events = parts.events ?? new EventHub<AppEvents>((event, err) => parts.log.error("event listener failed", { event, error: String(err) }));
  const writes = parts.writes ?? new WriteQueue(parts.store.db, {
      log: parts.log.child("write-queue"),
      ...(parts.store.engine === "postgres" ? { lanes: POSTGRES_WRITE_LANES } : { batchBudgetMs: SQLITE_BATCH_BUDGET_MS }),
    });
  const privateTargets = new PrivateTargetPolicy(parts.store.db, parts.config.blockPrivateTargets, () => parts.clock.now());
  return {
    ...parts, db: parts.store.db, events, writes, metrics: parts.metrics ?? createMetrics(), privateTargets, apiRateLimits: new FixedWindowLimiter<number>(60_000),
    traceBytes: new FixedWindowLimiter<number>(HOUR_MS),
    pings: nothingJournaled(parts.store.db),
    cluster: soloCluster(parts.config.region),
  };
}
