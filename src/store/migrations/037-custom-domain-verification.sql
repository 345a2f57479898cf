-- 037 (issue 32): a status page's custom domain serves only once verified (README "Custom domains").
-- custom_domain is what the page's owner asked for, and any number of pages may ask for the same
-- name; verified_domain (the old custom_domain column, renamed, still UNIQUE) is the name the page
-- serves, set when a DNS TXT record at _vigil-challenge.<name> held custom_domain_token. Domains
-- stored before this were never proven: they become requests waiting for their record.
ALTER TABLE status_pages RENAME COLUMN custom_domain TO verified_domain;
ALTER TABLE status_pages ADD COLUMN custom_domain TEXT;
ALTER TABLE status_pages ADD COLUMN custom_domain_token TEXT;
ALTER TABLE status_pages ADD COLUMN custom_domain_verified_at INTEGER;
UPDATE status_pages SET custom_domain = verified_domain, custom_domain_token = lower(hex(randomblob(16))), verified_domain = NULL WHERE verified_domain IS NOT NULL;

-- Confirmation mail an older build queued carries a link made from the Host of the request that
-- asked for it, whatever host that named; asking again queues one with a link to --base-url.
DELETE FROM status_mail_queue WHERE kind = 'confirm';
