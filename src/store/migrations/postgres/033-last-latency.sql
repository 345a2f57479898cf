-- 033 (issue 23): /metrics has each monitor's latency of its last check in each region
-- (README "Per-monitor metrics"), read at scrape time from the region's view, which every recorded
-- check already rewrites; the check row it names may since have been packed into a block or deleted.
-- Filled here from the check rows still present.
ALTER TABLE monitor_region_states ADD COLUMN last_latency_ms bigint;
UPDATE monitor_region_states AS r SET last_latency_ms = c.latency_ms FROM checks AS c WHERE c.id = r.last_check_id;
