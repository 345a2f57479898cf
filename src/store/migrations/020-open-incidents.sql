-- 020 (issue 19): /metrics counts open incidents at every scrape; incidents are never pruned, so the
-- count reads this partial index (one entry per open incident) instead of the whole history.
CREATE INDEX incidents_open ON incidents(monitor_id) WHERE status = 'open';
