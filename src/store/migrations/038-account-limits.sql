-- 038 (issue 32): per-account limits on monitors (README "Security", Limits). NULL takes the plan's
-- default; a number set with `vigil account update --max-monitors N --min-interval-sec S` wins.
ALTER TABLE accounts ADD COLUMN max_monitors INTEGER CHECK (max_monitors >= 0);
ALTER TABLE accounts ADD COLUMN min_interval_sec INTEGER CHECK (min_interval_sec >= 10);
