-- 010 (issue 9): a trigram index over monitor names and targets for GET /api/v1/monitors?q=, and an
-- index on alerts(monitor_id) for monitor deletes.
-- The search is a case-insensitive substring match; without an index it read and lower-cased every
-- monitor row (~26 ms of SQLite for 100,000 monitors, 100-200 ms per request under load). FTS5
-- with the trigram tokenizer answers substring phrases of 3+ characters from the index. SQLite
-- only, on purpose: a PostgreSQL port would use pg_trgm. External content: the text stays in
-- monitors, the triggers keep the index in step (updates only when name or target is written).
-- columnsize=0: no per-row size table (only ranking uses it); an index write costs ~25% less.
CREATE VIRTUAL TABLE monitors_search USING fts5(name, target, content='monitors', content_rowid='id', tokenize='trigram', columnsize=0);
INSERT INTO monitors_search(monitors_search) VALUES ('rebuild');
CREATE TRIGGER monitors_search_insert AFTER INSERT ON monitors BEGIN
  INSERT INTO monitors_search(rowid, name, target) VALUES (new.id, new.name, new.target);
END;
CREATE TRIGGER monitors_search_delete AFTER DELETE ON monitors BEGIN
  INSERT INTO monitors_search(monitors_search, rowid, name, target) VALUES ('delete', old.id, old.name, old.target);
END;
CREATE TRIGGER monitors_search_update AFTER UPDATE OF name, target ON monitors BEGIN
  INSERT INTO monitors_search(monitors_search, rowid, name, target) VALUES ('delete', old.id, old.name, old.target);
  INSERT INTO monitors_search(rowid, name, target) VALUES (new.id, new.name, new.target);
END;

-- Deleting a monitor sets its alerts' monitor_id to NULL (ON DELETE SET NULL); without an index on
-- the column every monitor delete read the whole alert outbox, which only grows.
CREATE INDEX alerts_monitor ON alerts(monitor_id);
