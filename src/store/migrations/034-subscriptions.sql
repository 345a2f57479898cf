-- 034 (issue 24): email subscriptions to status pages (README "Status pages", subscriptions).
-- A subscriber is pending until its confirmation link is followed (before confirm_expires_at);
-- its token is in every mail's unsubscribe link, so it is kept as given (it can only confirm or
-- end this one subscription). Mail waits in status_mail_queue until the SMTP server took it:
-- written in the transaction that caused it, deleted once sent, so a restart loses none.
CREATE TABLE status_page_subscribers (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  status_page_id      INTEGER NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  email               TEXT    NOT NULL,
  token               TEXT    NOT NULL,
  confirmed_at        INTEGER,
  confirm_expires_at  INTEGER NOT NULL,
  created_at          INTEGER NOT NULL
);
CREATE UNIQUE INDEX status_page_subscribers_page_email ON status_page_subscribers(status_page_id, email);
CREATE UNIQUE INDEX status_page_subscribers_token ON status_page_subscribers(token);

CREATE TABLE status_mail_queue (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  subscriber_id    INTEGER NOT NULL REFERENCES status_page_subscribers(id) ON DELETE CASCADE,
  subject          TEXT    NOT NULL,
  body             TEXT    NOT NULL,
  link             TEXT    NOT NULL,           -- the confirmation link, or the unsubscribe link
  kind             TEXT    NOT NULL,           -- confirm, notice
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,
  created_at       INTEGER NOT NULL
);
CREATE INDEX status_mail_queue_due ON status_mail_queue(next_attempt_at);
