-- 025 (issue 22): a certificate or domain registration close to expiry reaches a person (docs/
-- notifications.md "Expiry alerts"). The monitor keeps the issuer of the certificate its last check
-- saw, and which expiry date and stage (1 warn window, 2 seven days, 3 one day) it last alerted
-- about, so each stage is sent once, across restarts and instances; the alert's timeline event
-- names the date.
ALTER TABLE monitors ADD COLUMN ssl_last_issuer text;
ALTER TABLE monitors ADD COLUMN expiry_alerted_not_after bigint;
ALTER TABLE monitors ADD COLUMN expiry_alert_stage integer NOT NULL DEFAULT 0;
ALTER TABLE monitor_events ADD COLUMN expires_at bigint;
