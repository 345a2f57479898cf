-- 014 (issue 18): the private-target rule per account. NULL follows the instance's
-- --block-private-targets (the default for new accounts); 1 blocks and 0 allows private, loopback and
-- link-local targets for that account's checks and notifications, whatever the instance flag says.
ALTER TABLE accounts ADD COLUMN block_private_targets INTEGER CHECK (block_private_targets IN (0, 1));
