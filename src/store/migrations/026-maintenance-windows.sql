-- 026 (issue 23): maintenance windows (README "Maintenance windows", docs/maintenance-windows.md).
-- A window is one-off (starts_at, ends_at) or recurring (schedule, duration_sec, read in timezone).
-- active_from/active_until hold its current or next span: written with every change of the window
-- and moved on by the leading instance when a span ends, so every instance decides "in maintenance"
-- from the row and its clock alone. settled_until is the end of the last span the leader acted on
-- (the incidents of monitors still down), so an end that passed while Vigil was stopped is acted on
-- once, at the next start.
CREATE TABLE maintenance_windows (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name           TEXT    NOT NULL,
  description    TEXT,
  is_enabled     INTEGER NOT NULL DEFAULT 1,
  timezone       TEXT    NOT NULL DEFAULT 'UTC',
  starts_at      INTEGER,                -- one-off: epoch ms
  ends_at        INTEGER,
  schedule       TEXT,                   -- recurring: 5-field cron
  duration_sec   INTEGER,
  active_from    INTEGER,                -- the current or next span; null: none (disabled, or over)
  active_until   INTEGER,
  settled_until  INTEGER,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);
CREATE INDEX maintenance_windows_account ON maintenance_windows(account_id, id);
CREATE INDEX maintenance_windows_until ON maintenance_windows(active_until);

CREATE TABLE maintenance_window_monitors (
  window_id   INTEGER NOT NULL REFERENCES maintenance_windows(id) ON DELETE CASCADE,
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  PRIMARY KEY (window_id, monitor_id)
) WITHOUT ROWID;
CREATE INDEX maintenance_window_monitors_monitor ON maintenance_window_monitors(monitor_id);
