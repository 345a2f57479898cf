-- 035 (issue 25): external ids, the names a configuration file gives resources (README "Configuration
-- as code"). Optional, and unique within the account for each kind of resource: the partial indexes
-- let any number of resources have none.
ALTER TABLE monitors ADD COLUMN external_id text;
ALTER TABLE monitor_groups ADD COLUMN external_id text;
ALTER TABLE notification_channels ADD COLUMN external_id text;
ALTER TABLE maintenance_windows ADD COLUMN external_id text;
ALTER TABLE status_pages ADD COLUMN external_id text;
CREATE UNIQUE INDEX monitors_account_external_id ON monitors(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX monitor_groups_account_external_id ON monitor_groups(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX notification_channels_account_external_id ON notification_channels(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX maintenance_windows_account_external_id ON maintenance_windows(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX status_pages_account_external_id ON status_pages(account_id, external_id) WHERE external_id IS NOT NULL;
