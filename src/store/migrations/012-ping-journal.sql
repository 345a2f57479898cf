-- 012 (issue 9): an accepted plain ping is first appended here, rowid order and no other index, and
-- folded into monitor_events, checks and the monitor's bookkeeping about a second later, monitor by
-- monitor in id order (store/ping-journal.ts). Writing the two indexed rows and the UPDATE per ping
-- dirtied three random pages per ping in every commit (~4 KiB of WAL each); folded a second's pings
-- at a time, a monitor's rows share their pages. The ids come from the writer, never reused, so a
-- fold that meets an id already gone knows the ping was folded before.
CREATE TABLE ping_journal (
  id           INTEGER PRIMARY KEY,
  monitor_id   INTEGER NOT NULL,
  at           INTEGER NOT NULL,
  source_ip    TEXT,
  duration_ms  INTEGER,
  deadline_at  INTEGER
);

-- A counter every change the ping path must notice bumps: a heartbeat monitor's token, last edit,
-- pause, state or type, or its deletion. The ping writer reads it once per batch; while it stands
-- still, the rows it cached are still true and a plain ping needs no read of its row (that read was
-- ~8% of the server's CPU in the heartbeat bench profile).
CREATE TABLE heartbeat_epoch (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  n   INTEGER NOT NULL
);
INSERT INTO heartbeat_epoch (id, n) VALUES (1, 0);
CREATE TRIGGER heartbeat_monitor_changed AFTER UPDATE OF heartbeat_token, updated_at, is_paused, last_status, monitor_type ON monitors
  WHEN OLD.monitor_type = 'heartbeat'
  BEGIN UPDATE heartbeat_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER heartbeat_monitor_deleted AFTER DELETE ON monitors
  WHEN OLD.monitor_type = 'heartbeat'
  BEGIN UPDATE heartbeat_epoch SET n = n + 1 WHERE id = 1; END;
