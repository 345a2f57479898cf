-- 013 (issue 9): the ping journal moves to its own database file (<data>/pings.db, store/ping-journal.ts),
-- written by the serving thread and folded into monitor_events and checks by a worker thread with its
-- own connection, so the fold's work is off the thread that serves pings and a plain ping's commit never
-- takes this database's write lock. Which journal entries a monitor already has folded is its
-- watermark, moved by the fold's UPDATE of the row in the same transaction: a second fold of an
-- entry (the worker and a reader's settle racing, or a replay after a crash) writes nothing again.
-- ping_journal stays: it holds what a build before this one journaled, and what `vigil backup` copies
-- of pings.db; start-up folds it and empties it.
ALTER TABLE monitors ADD COLUMN heartbeat_journal_through INTEGER;
