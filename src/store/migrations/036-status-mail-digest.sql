-- 036 (issue 24): subscription mail that does not storm (README "Email subscriptions").
-- An incident opening or resolving on a page's monitor is noted in status_mail_changes (a row per
-- page, written in the state change's transaction; only inserted, so it never waits on a row the
-- mailer holds) instead of mailing at once; the page's notes become one mail per subscriber once
-- the oldest is --status-mail-period old, claimed by deleting them in the transaction that queues
-- the mail. An update written by people is mailed when it is published and again when its
-- incident status changes: mail_pending says a mail of it is owed, mailed_status what the last said.
CREATE TABLE status_mail_changes (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  status_page_id  INTEGER NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  monitor_id      INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  at              INTEGER NOT NULL,
  is_down         INTEGER NOT NULL    -- 1 an incident opened, 0 it resolved
);
CREATE INDEX status_mail_changes_page ON status_mail_changes(status_page_id, at);

ALTER TABLE status_page_updates ADD COLUMN mail_pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE status_page_updates ADD COLUMN mailed_status TEXT;
CREATE INDEX status_page_updates_mail_due ON status_page_updates(published_at) WHERE mail_pending = 1;
