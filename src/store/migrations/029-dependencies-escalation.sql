-- 029 (issue 23): dependencies, reminders and escalation (README "Dependencies, reminders and
-- escalation"). A monitor names the monitors it depends on and, optionally, how often its down alert
-- is repeated and where it escalates after how long. An incident that opened while a parent was down
-- names the parent's incident and holds its alerts back until every parent is up again; the
-- reminders and escalations of an open incident are due rows, claimed once each by the engine.
ALTER TABLE monitors ADD COLUMN alert_repeat_minutes INTEGER;
ALTER TABLE monitors ADD COLUMN escalate_after_minutes INTEGER;

CREATE TABLE monitor_dependencies (
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  parent_id   INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  PRIMARY KEY (monitor_id, parent_id)
) WITHOUT ROWID;
CREATE INDEX monitor_dependencies_parent ON monitor_dependencies(parent_id);

CREATE TABLE monitor_escalation_channels (
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  channel_id  INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
  PRIMARY KEY (monitor_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX monitor_escalation_channels_channel ON monitor_escalation_channels(channel_id);

ALTER TABLE incidents ADD COLUMN parent_incident_id INTEGER REFERENCES incidents(id) ON DELETE SET NULL;
ALTER TABLE incidents ADD COLUMN held_for_parent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE incidents ADD COLUMN escalated_at INTEGER;
-- deleting a monitor deletes its incidents, and each one's children are looked up by this
CREATE INDEX incidents_parent ON incidents(parent_incident_id) WHERE parent_incident_id IS NOT NULL;

CREATE TABLE incident_followups (
  incident_id  INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  kind         TEXT    NOT NULL CHECK (kind IN ('repeat', 'escalate')),
  due_at       INTEGER NOT NULL,
  PRIMARY KEY (incident_id, kind)
) WITHOUT ROWID;
CREATE INDEX incident_followups_due ON incident_followups(due_at);
