-- 030 (issue 24): groups and tags of monitors, and status page updates written by people (README
-- "Groups, tags and status page updates").
-- A monitor's group is one of its account's monitor_groups; group_id holds no foreign key (SQLite
-- cannot add one to a column that exists), so deleting a group sets it to NULL in the same
-- transaction (store/groups.ts). Group ids written before this version named no group: each distinct
-- one becomes a group "Group <id>" of its account, and its monitors move to it.
CREATE TABLE monitor_groups (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name         TEXT    NOT NULL,
  description  TEXT,
  sort_order   INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX monitor_groups_account_name ON monitor_groups(account_id, name);
INSERT INTO monitor_groups (account_id, name, sort_order, created_at, updated_at)
  SELECT account_id, 'Group ' || group_id, 0, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM monitors WHERE group_id IS NOT NULL GROUP BY account_id, group_id;
UPDATE monitors SET group_id = (SELECT g.id FROM monitor_groups g WHERE g.account_id = monitors.account_id AND g.name = 'Group ' || monitors.group_id)
  WHERE group_id IS NOT NULL;
CREATE INDEX monitors_account_group ON monitors(account_id, group_id, id);

-- Tags, one row each: ?tag= (every tag given must be present) reads monitor_tags_account_tag once per tag.
CREATE TABLE monitor_tags (
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  account_id  INTEGER NOT NULL,
  tag         TEXT    NOT NULL,
  PRIMARY KEY (monitor_id, tag)
) WITHOUT ROWID;
CREATE INDEX monitor_tags_account_tag ON monitor_tags(account_id, tag, monitor_id);

CREATE TABLE status_page_updates (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  status_page_id  INTEGER NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  title           TEXT    NOT NULL,
  body            TEXT    NOT NULL DEFAULT '',
  kind            TEXT    NOT NULL,          -- incident, maintenance, info
  status          TEXT,                      -- incidents only: investigating, identified, monitoring, resolved
  published_at    INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
CREATE INDEX status_page_updates_page ON status_page_updates(status_page_id, published_at);

CREATE TABLE status_page_update_monitors (
  update_id   INTEGER NOT NULL REFERENCES status_page_updates(id) ON DELETE CASCADE,
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  PRIMARY KEY (update_id, monitor_id)
) WITHOUT ROWID;
CREATE INDEX status_page_update_monitors_monitor ON status_page_update_monitors(monitor_id);
