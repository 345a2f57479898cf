-- 015 (issue 18): a peer token serves the accounts it was created for (`vigil peer create --account`),
-- or every account when created with --all-accounts. Peers created before this version were made
-- for the whole instance, so they keep serving every account; new rows default to none.
ALTER TABLE peers ADD COLUMN all_accounts INTEGER NOT NULL DEFAULT 0;
UPDATE peers SET all_accounts = 1;

CREATE TABLE peer_accounts (
  peer_id     INTEGER NOT NULL REFERENCES peers(id) ON DELETE CASCADE,
  account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  PRIMARY KEY (peer_id, account_id)
);
