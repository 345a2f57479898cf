-- 022 (issue 19): a ping is never lost for its size. A body up to 10 MiB is accepted and its first
-- 64 KiB read; a failure ping keeps its first 10 KiB on its timeline event (not only its first line),
-- and an event whose body was longer than what was kept says how long it was.
ALTER TABLE monitor_events ADD COLUMN body TEXT;
ALTER TABLE monitor_events ADD COLUMN body_bytes INTEGER;
