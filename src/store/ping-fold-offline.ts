import type { Logger } from "../lib/logger.ts";
import { openStore } from "./database.ts";
import { PingJournal } from "./ping-journal.ts";
import { WriteQueue } from "./write-queue.ts";
import { FoldScheduler } from "./ping-fold-scheduler.ts";

/**
 * Opens the SQLite store of a data directory as `vigil serve` would (its schema brought up to this
 * build's) and folds every ping it journaled but did not fold (a server that was killed, a
 * restored backup's ping_journal table), the way the server's own start-up does, on this thread;
 * then closes it. What a copy to PostgreSQL needs first: PostgreSQL has no ping journal. Returns how
 * many pings were folded; throws when some could not be.
 */
export async function foldJournaledPings(dataDir: string, region: string, log: Logger): Promise<number> {
  const store = openStore(dataDir);
  const writes = new WriteQueue(store.db, { log });
  let journal: PingJournal | null = null;
  try {
    journal = PingJournal.open(store, { dataDir, region, writes });
    const pending = journal.size;
    await new FoldScheduler(journal, writes, log).foldAll();
    await journal.forgetCarried();
    if (journal.size > 0) throw new Error(`${journal.size} journaled pings could not be folded; the log says why`);
    return pending;
  } finally {
    journal?.close();
    await writes.close();
    await store.close();
  }
}
