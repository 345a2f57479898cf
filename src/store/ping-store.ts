/**
 * The heartbeat service's one way to the store (docs/architecture.md "One heartbeat ping"): a batch
 * of pings and deadline evaluations is taken and written, readers settle what was taken, and the
 * store says what it can do. Two implementations, chosen here, once, by the store's engine:
 * SQLite's appends the plain pings its cached rows vouch for to the ping journal and folds them
 * into their rows later (ping-store-sqlite.ts); PostgreSQL's writes every batch in one transaction
 * of gathered rows (ping-store-postgres.ts). Code outside store/ never asks which it has.
 *
 * Why the batch's statements are lent to `write` rather than handed out: on SQLite they run on the
 * one connection, which is only safe inside the write queue's transaction, and every ping the
 * store took must be in a monitor's rows before a batch reads them. `write` does both, so no
 * caller can get it wrong.
 */
import type { HeartbeatOp } from "../domain/heartbeat-ping.ts";
import type { Logger } from "../lib/logger.ts";
import type { Db, Store } from "./database.ts";
import type { JournaledPings } from "./ping-journal.ts";
import type { BatchStatements } from "./ping-statements.ts";
import { openJournaledPingStore } from "./ping-store-sqlite.ts";
import { openGatheredPingStore } from "./ping-store-postgres.ts";
import type { WriteQueue } from "./write-queue.ts";

/** What `take` made durable on its own. */
export interface Taken {
  /** the places in the batch of the pings it took: each of them is accepted */
  accepted: readonly number[];
  /** the deadlines those pings leave their monitors with */
  deadlines: ReadonlyMap<number, number | null>;
  /** the places of the ops left for `write`, in order */
  rest: readonly number[];
}

export interface PingStore {
  /**
   * Takes the ops of a batch this store can make durable on its own, without a transaction of the
   * main database, and says which they are; the rest are for `write`. Throws when they could not
   * be written (a full disk): then none of them was.
   */
  take(ops: readonly HeartbeatOp[]): Taken;
  /**
   * One transaction of the write queue for `ops`: `apply` does their work with the batch's
   * statements, on `trx`, and its value is returned once the transaction has committed. Every ping
   * of those monitors taken before is in their rows by then.
   */
  write<T>(ops: readonly HeartbeatOp[], apply: (trx: Db, stmts: BatchStatements) => Promise<T>): Promise<T>;
  /** A monitor changed: nothing remembered of its row vouches for its next pings. */
  forget(monitorId: number): void;
  /** what readers of checks, events and a monitor's last ping are given while this store runs (ctx.pings) */
  readonly reads: JournaledPings;
  /** pings taken and acknowledged, not yet in their rows */
  readonly waiting: number;
  /**
   * Other instances may take pings on this database, and write deadlines this process's timers
   * never hear of (README "Several instances"): the leader then reads them from the database.
   */
  readonly sharedByInstances: boolean;
  /** Told after each batch: pings may have been taken. */
  afterBatch(): void;
  /** Writes what an earlier run took and left, then starts whatever helps this run (a fold worker). */
  start(): Promise<void>;
  /** Writes every ping taken so far into its rows. */
  settleAll(): Promise<void>;
  /** Writes what is left and lets go of its files. */
  close(): Promise<void>;
}

export interface PingStoreOptions {
  /** where the ping journal's files are, on SQLite */
  dataDir: string;
  /** this instance's region, for the pings' checks */
  region: string;
  writes: WriteQueue;
  log: Logger;
}

export function openPingStore(store: Store, o: PingStoreOptions): PingStore {
  return store.engine === "sqlite" ? openJournaledPingStore(store, o) : openGatheredPingStore(store.db, o);
}
