-- 019 (issue 19): http monitors may judge a redirect itself instead of following it, so an expected
-- 301/302 can be met (README, Monitors). Existing monitors keep following redirects.
ALTER TABLE monitors ADD COLUMN follow_redirects INTEGER NOT NULL DEFAULT 1;
