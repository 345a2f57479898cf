-- Vigil: the whole schema, as a fresh data directory gets it.
-- An older data directory is brought here by src/store/migrations/NNN-*.sql, applied in order; a test
-- checks that both paths give the same tables, columns and indexes.
-- Times are epoch milliseconds (INTEGER): compact, sortable, and portable to PostgreSQL's bigint.
-- Booleans are 0/1. JSON values are TEXT.

CREATE TABLE accounts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT    NOT NULL UNIQUE,
  plan        TEXT    NOT NULL CHECK (plan IN ('free', 'pro', 'enterprise')),
  created_at  INTEGER NOT NULL,
  -- NULL: the instance's --block-private-targets; 1 block, 0 allow (README, Security)
  block_private_targets INTEGER CHECK (block_private_targets IN (0, 1)),
  -- NULL: the plan's default (README "Security", Limits)
  max_monitors     INTEGER CHECK (max_monitors >= 0),
  min_interval_sec INTEGER CHECK (min_interval_sec >= 10)
);

CREATE TABLE api_tokens (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  label        TEXT,
  token_hash   TEXT    NOT NULL UNIQUE,
  scopes       TEXT    NOT NULL,           -- comma-separated scope names
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at   INTEGER
);

CREATE TABLE peers (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  region        TEXT    NOT NULL,
  label         TEXT,
  token_hash    TEXT    NOT NULL UNIQUE,
  created_at    INTEGER NOT NULL,
  revoked_at    INTEGER,
  last_seen_at  INTEGER,
  last_lag_ms   INTEGER,                   -- how old the newest delivered result was on arrival
  last_skew_ms  INTEGER,                   -- probe clock minus leader clock at last contact
  queue_length  INTEGER,                   -- results the probe still had spooled at last contact
  all_accounts  INTEGER NOT NULL DEFAULT 0 -- 1: the peer serves every account; 0: those in peer_accounts
);

-- The accounts a peer serves: it is sent their monitors and may report for them, no others.
CREATE TABLE peer_accounts (
  peer_id     INTEGER NOT NULL REFERENCES peers(id) ON DELETE CASCADE,
  account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  PRIMARY KEY (peer_id, account_id)
);

CREATE TABLE monitors (
  id                            INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id                    INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name                          TEXT    NOT NULL,
  monitor_type                  TEXT    NOT NULL,
  target                        TEXT,
  method                        TEXT    NOT NULL DEFAULT 'GET',
  interval_sec                  INTEGER NOT NULL,
  timeout_ms                    INTEGER NOT NULL,
  group_id                      INTEGER,
  is_paused                     INTEGER NOT NULL DEFAULT 0,
  is_in_maintenance             INTEGER NOT NULL DEFAULT 0,
  last_status                   TEXT    NOT NULL DEFAULT 'unknown',
  last_checked_at               INTEGER,
  next_run_at                   INTEGER,
  state_changed_at              INTEGER,
  created_at                    INTEGER NOT NULL,
  updated_at                    INTEGER NOT NULL,
  synthetic_trace_body_detail   TEXT    NOT NULL DEFAULT 'truncated',
  regions                       TEXT,    -- JSON array of region names; NULL = every region
  -- http
  editor_ui_profile             TEXT,
  port                          INTEGER,
  expected_http_codes           TEXT,
  keyword                       TEXT,
  api_expected_content_type     TEXT,
  api_expected_body_contains    TEXT,
  api_max_latency_ms            INTEGER,
  synthetic_enabled             INTEGER NOT NULL DEFAULT 0,
  api_json_assertions_json      TEXT,
  api_headers_json              TEXT,
  api_body                      TEXT,
  synthetic_steps_json          TEXT,
  api_auth_type                 TEXT    NOT NULL DEFAULT 'none',
  api_auth_basic_user           TEXT,
  api_auth_api_key_header       TEXT,
  api_auth_bearer_token_enc     TEXT,    -- AES-256-GCM sealed, see src/lib/secret-box.ts
  api_auth_basic_pass_enc       TEXT,
  api_auth_api_key_value_enc    TEXT,
  tls_verify                    INTEGER NOT NULL DEFAULT 1,
  -- http and ssl
  ssl_expiry_warn_days          INTEGER,
  ssl_expiry_last_not_after     INTEGER,
  -- dns
  dns_record_type               TEXT,
  dns_resolver                  TEXT,
  dns_expected_answer           TEXT,
  -- heartbeat
  heartbeat_token               TEXT UNIQUE,
  heartbeat_period_sec          INTEGER,
  heartbeat_grace_sec           INTEGER,
  heartbeat_notify_on_late      INTEGER NOT NULL DEFAULT 0,
  heartbeat_payload_policy      TEXT    NOT NULL DEFAULT 'none',
  heartbeat_payload_status_key  TEXT,
  heartbeat_last_ping_at        INTEGER,
  heartbeat_last_start_at       INTEGER,
  heartbeat_schedule            TEXT,
  heartbeat_timezone            TEXT,
  heartbeat_deadline_at         INTEGER, -- when the next state transition is due; rebuilt timers use it
  heartbeat_journal_through     INTEGER, -- the newest ping journal entry folded into this monitor's rows
  follow_redirects              INTEGER NOT NULL DEFAULT 1, -- http: 0 judges the first answer, redirect or not
  -- websocket
  ws_send                       TEXT,
  ws_expect                     TEXT,
  -- grpc
  grpc_service                  TEXT,    -- NULL on other types; '' asks about the whole server
  grpc_tls                      INTEGER NOT NULL DEFAULT 0,
  -- smtp
  smtp_security                 TEXT,    -- none, starttls, tls; NULL on other types
  -- postgres, mysql, redis
  db_password_enc               TEXT,    -- AES-256-GCM sealed, as the api_auth_* secrets
  db_query                      TEXT,
  db_tls                        INTEGER NOT NULL DEFAULT 0,
  redis_username                TEXT,
  -- docker
  docker_host                   TEXT,    -- NULL: unix:///var/run/docker.sock
  -- domain
  domain_expiry_warn_days       INTEGER,
  domain_expires_at             INTEGER, -- the registration expiry the last check found
  ssl_last_issuer               TEXT,    -- issuer (O, else CN) of the certificate the last check saw
  expiry_alerted_not_after      INTEGER, -- the expiry date the last monitor.expiring alert was about
  expiry_alert_stage            INTEGER NOT NULL DEFAULT 0, -- how far it got: 1 warn window, 2 seven days, 3 one day (docs/notifications.md "Expiry alerts")
  -- alerting (README "Dependencies, reminders and escalation"); NULL: no reminders, no escalation
  alert_repeat_minutes          INTEGER,
  escalate_after_minutes        INTEGER,
  external_id  TEXT   -- optional, unique in the account (README "Configuration as code")
);
CREATE UNIQUE INDEX monitors_account_external_id ON monitors(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX monitors_account ON monitors(account_id, id);
CREATE INDEX monitors_account_status ON monitors(account_id, last_status, id);
CREATE INDEX monitors_account_type ON monitors(account_id, monitor_type, id);
-- Substring search over name and target (?q=): trigram full-text index, kept by triggers
-- (migration 010 says why; SQLite only, a PostgreSQL port would use pg_trgm).
CREATE VIRTUAL TABLE monitors_search USING fts5(name, target, content='monitors', content_rowid='id', tokenize='trigram', columnsize=0);
CREATE TRIGGER monitors_search_insert AFTER INSERT ON monitors BEGIN
  INSERT INTO monitors_search(rowid, name, target) VALUES (new.id, new.name, new.target);
END;
CREATE TRIGGER monitors_search_delete AFTER DELETE ON monitors BEGIN
  INSERT INTO monitors_search(monitors_search, rowid, name, target) VALUES ('delete', old.id, old.name, old.target);
END;
CREATE TRIGGER monitors_search_update AFTER UPDATE OF name, target ON monitors BEGIN
  INSERT INTO monitors_search(monitors_search, rowid, name, target) VALUES ('delete', old.id, old.name, old.target);
  INSERT INTO monitors_search(rowid, name, target) VALUES (new.id, new.name, new.target);
END;

-- Each region's view of a monitor: the consensus rule reads these, not the whole check history.
CREATE TABLE monitor_region_states (
  monitor_id        INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  region            TEXT    NOT NULL,
  last_status       TEXT    NOT NULL,
  last_checked_at   INTEGER NOT NULL,
  consecutive_down  INTEGER NOT NULL DEFAULT 0,
  last_check_id     INTEGER,
  last_latency_ms   INTEGER,          -- of the region's last check, for /metrics (migration 028)
  PRIMARY KEY (monitor_id, region)
) WITHOUT ROWID;

CREATE TABLE checks (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  monitor_id            INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  region                TEXT    NOT NULL,
  status                TEXT    NOT NULL,
  checked_at            INTEGER NOT NULL,
  latency_ms            INTEGER,
  http_code             INTEGER,
  error_code            TEXT,
  error_message         TEXT,
  degraded_reason       TEXT,
  resolved_ip           TEXT,
  ssl_not_after         INTEGER,
  dns_answer            TEXT,    -- JSON array
  synthetic_trace_json  TEXT,    -- JSON object
  result_uid            TEXT,    -- set on results delivered by probe peers; the leader ignores a repeat
  -- the connection's moments in ms from the request's start (README, Checks): null when not measured
  dns_ms                INTEGER,
  connect_ms            INTEGER,
  tls_ms                INTEGER,
  ttfb_ms               INTEGER
);
CREATE INDEX checks_monitor_time ON checks(monitor_id, checked_at);
CREATE UNIQUE INDEX checks_result_uid ON checks(result_uid) WHERE result_uid IS NOT NULL;

-- Checks older than about an hour, packed (store/check-block-codec.ts): one row per monitor per UTC
-- hour ('h'), merged into one per UTC day ('d') once the day is over. The counts let a page of
-- checks skip whole blocks without unpacking them.
CREATE TABLE check_blocks (
  monitor_id      INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  block_start     INTEGER NOT NULL,
  span            TEXT    NOT NULL CHECK (span IN ('h', 'd')),
  first_at        INTEGER NOT NULL,  -- its oldest check: retention skips a block it has already trimmed
  up_count        INTEGER NOT NULL,
  degraded_count  INTEGER NOT NULL,
  down_count      INTEGER NOT NULL,
  data            BLOB    NOT NULL,
  PRIMARY KEY (monitor_id, block_start)
) WITHOUT ROWID;

-- Hourly ('h') and daily ('d') summaries kept long after raw checks are pruned.
CREATE TABLE check_rollups (
  monitor_id      INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  granularity     TEXT    NOT NULL CHECK (granularity IN ('h', 'd')),
  bucket_start    INTEGER NOT NULL,
  up_count        INTEGER NOT NULL DEFAULT 0,
  degraded_count  INTEGER NOT NULL DEFAULT 0,
  down_count      INTEGER NOT NULL DEFAULT 0,
  latency_count   INTEGER NOT NULL DEFAULT 0,
  latency_sum     INTEGER NOT NULL DEFAULT 0,
  latency_min     INTEGER,
  latency_max     INTEGER,
  latency_p50     INTEGER,
  latency_p95     INTEGER,
  latency_p99     INTEGER,
  PRIMARY KEY (monitor_id, granularity, bucket_start)
) WITHOUT ROWID;

CREATE TABLE incidents (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id          INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  monitor_id          INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  status              TEXT    NOT NULL CHECK (status IN ('open', 'resolved')),
  started_at          INTEGER NOT NULL,
  resolved_at         INTEGER,
  duration_ms         INTEGER,
  failure_count       INTEGER NOT NULL DEFAULT 0,
  last_error_code     TEXT,
  last_error_message  TEXT,
  last_http_code      INTEGER,
  root_check_id       INTEGER,
  resolved_check_id   INTEGER,
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL,
  -- opened while a monitor it depends on was down: that monitor's incident
  parent_incident_id  INTEGER REFERENCES incidents(id) ON DELETE SET NULL,
  held_for_parent     INTEGER NOT NULL DEFAULT 0,  -- 1: its alerts wait until every parent is up
  escalated_at        INTEGER                      -- its down alert went to the escalation channels
);
CREATE INDEX incidents_account_started ON incidents(account_id, started_at, id);
CREATE INDEX incidents_monitor_status ON incidents(monitor_id, status);
-- open incidents only: /metrics counts them at every scrape, and the history is never pruned
CREATE INDEX incidents_open ON incidents(monitor_id) WHERE status = 'open';
-- deleting a monitor deletes its incidents, and each one's children are looked up by this
CREATE INDEX incidents_parent ON incidents(parent_incident_id) WHERE parent_incident_id IS NOT NULL;

-- The timeline: heartbeat pings and every state transition ("flip") of any monitor.
CREATE TABLE monitor_events (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  monitor_id   INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  kind         TEXT    NOT NULL,   -- ping | start | fail | transition | token_rotated | expiring
  at           INTEGER NOT NULL,
  result       TEXT,               -- pings: accepted | rejected | ignored
  reason       TEXT,
  source_ip    TEXT,
  from_state   TEXT,
  to_state     TEXT,
  duration_ms  INTEGER,            -- pings after a /start: the run's duration
  body         TEXT,               -- a failure ping's body, its first 10 KiB (docs/heartbeats.md "Timeline events")
  body_bytes   INTEGER,            -- the ping body's size as sent, when it was longer than what was kept
  expires_at   INTEGER             -- expiring: the certificate's or registration's expiry date
);
CREATE INDEX monitor_events_monitor_at ON monitor_events(monitor_id, at);

-- The ping journal lives in files of its own (<data>/ping-journal/, store/ping-journal-file.ts). This
-- table holds what a build before migration 013 journaled here, and the unfolded entries `vigil backup`
-- copies out of the journal; start-up folds it and empties it.
CREATE TABLE ping_journal (
  id           INTEGER PRIMARY KEY,
  monitor_id   INTEGER NOT NULL,
  at           INTEGER NOT NULL,
  source_ip    TEXT,
  duration_ms  INTEGER,
  deadline_at  INTEGER
);

-- Bumped by every change the ping path must notice (heartbeat/apply-batch.ts reads it per batch).
CREATE TABLE heartbeat_epoch (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  n   INTEGER NOT NULL
);
INSERT INTO heartbeat_epoch (id, n) VALUES (1, 0);
CREATE TRIGGER heartbeat_monitor_changed AFTER UPDATE OF heartbeat_token, updated_at, is_paused, last_status, monitor_type ON monitors
  WHEN OLD.monitor_type = 'heartbeat'
  BEGIN UPDATE heartbeat_epoch SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER heartbeat_monitor_deleted AFTER DELETE ON monitors
  WHEN OLD.monitor_type = 'heartbeat'
  BEGIN UPDATE heartbeat_epoch SET n = n + 1 WHERE id = 1; END;

CREATE TABLE status_pages (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id          INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name                TEXT    NOT NULL,
  slug                TEXT    NOT NULL UNIQUE,
  headline            TEXT,
  description         TEXT,
  is_public           INTEGER NOT NULL DEFAULT 1,
  is_enabled          INTEGER NOT NULL DEFAULT 1,
  is_token_protected  INTEGER NOT NULL DEFAULT 0,
  access_token        TEXT,
  public_theme        TEXT    NOT NULL DEFAULT 'light',
  verified_domain     TEXT UNIQUE,   -- custom_domain once verified: the host it serves at / (README "Custom domains")
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL,
  external_id  TEXT,   -- optional, unique in the account (README "Configuration as code")
  custom_domain              TEXT,      -- the host name asked for; several pages may ask for one
  custom_domain_token        TEXT,      -- the value the TXT record at _vigil-challenge.<custom_domain> must hold
  custom_domain_verified_at  INTEGER
);
CREATE UNIQUE INDEX status_pages_account_external_id ON status_pages(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX status_pages_account ON status_pages(account_id, id);

CREATE TABLE status_page_monitors (
  status_page_id  INTEGER NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  monitor_id      INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  position        INTEGER NOT NULL,
  PRIMARY KEY (status_page_id, monitor_id)
) WITHOUT ROWID;
CREATE INDEX status_page_monitors_monitor ON status_page_monitors(monitor_id);

CREATE TABLE notification_channels (
  id                        INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id                INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name                      TEXT    NOT NULL,
  channel_type              TEXT    NOT NULL,
  is_enabled                INTEGER NOT NULL DEFAULT 1,
  default_for_new_monitors  INTEGER NOT NULL DEFAULT 0,
  config_json               TEXT    NOT NULL DEFAULT '{}',  -- non-secret settings
  secrets_enc               TEXT,                           -- sealed JSON of write-only settings
  created_at                INTEGER NOT NULL,
  updated_at                INTEGER NOT NULL,
  external_id  TEXT   -- optional, unique in the account (README "Configuration as code")
);
CREATE UNIQUE INDEX notification_channels_account_external_id ON notification_channels(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX notification_channels_account ON notification_channels(account_id, id);

CREATE TABLE monitor_channels (
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  channel_id  INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
  PRIMARY KEY (monitor_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX monitor_channels_channel ON monitor_channels(channel_id);

-- The monitors a monitor depends on (its parents): while one of them is down, its own incidents
-- alert nobody until they all are up again.
CREATE TABLE monitor_dependencies (
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  parent_id   INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  PRIMARY KEY (monitor_id, parent_id)
) WITHOUT ROWID;
CREATE INDEX monitor_dependencies_parent ON monitor_dependencies(parent_id);

-- Where a monitor's incident escalates once it has been open escalate_after_minutes.
CREATE TABLE monitor_escalation_channels (
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  channel_id  INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
  PRIMARY KEY (monitor_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX monitor_escalation_channels_channel ON monitor_escalation_channels(channel_id);

-- The outbox: one row per alert and channel, written in the transaction of the state change.
CREATE TABLE alerts (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id       INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  monitor_id       INTEGER REFERENCES monitors(id) ON DELETE SET NULL,
  channel_id       INTEGER NOT NULL REFERENCES notification_channels(id) ON DELETE CASCADE,
  event            TEXT    NOT NULL,
  delivery_id      TEXT    NOT NULL UNIQUE,
  payload_json     TEXT    NOT NULL,
  status           TEXT    NOT NULL DEFAULT 'pending',  -- pending | sending | delivered | failed
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  delivered_at     INTEGER
);
CREATE INDEX alerts_due ON alerts(status, next_attempt_at);
-- deleting a monitor sets its alerts' monitor_id to NULL: without this, every delete read the whole outbox
CREATE INDEX alerts_monitor ON alerts(monitor_id);

CREATE TABLE alert_attempts (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  alert_id     INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
  at           INTEGER NOT NULL,
  ok           INTEGER NOT NULL,
  status_code  INTEGER,
  error        TEXT
);
CREATE INDEX alert_attempts_alert ON alert_attempts(alert_id);

-- What an open incident still has coming: its next reminder ('repeat') and its escalation, each due
-- at a time; the engine claims a due row with a conditional update, so it fires once.
CREATE TABLE incident_followups (
  incident_id  INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  kind         TEXT    NOT NULL CHECK (kind IN ('repeat', 'escalate')),
  due_at       INTEGER NOT NULL,
  PRIMARY KEY (incident_id, kind)
) WITHOUT ROWID;
CREATE INDEX incident_followups_due ON incident_followups(due_at);

CREATE TABLE users (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  username       TEXT    NOT NULL UNIQUE,
  password_hash  TEXT    NOT NULL,
  created_at     INTEGER NOT NULL
);

CREATE TABLE sessions (
  id_hash     TEXT    PRIMARY KEY,
  user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token  TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);

-- Probe side: results waiting for the leader, and the definitions it last pulled.
CREATE TABLE spool (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  result_uid    TEXT    NOT NULL UNIQUE,
  payload_json  TEXT    NOT NULL,
  created_at    INTEGER NOT NULL
);

CREATE TABLE kv (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);

-- Several instances on one PostgreSQL database (README "Several instances"): each live instance's
-- row, renewed every few seconds, and the lease of the once-only work; expiries are the database's
-- clock. Empty on SQLite, where one instance owns everything.
CREATE TABLE instances (
  id          TEXT    PRIMARY KEY,       -- random, new at each start
  region      TEXT    NOT NULL,          -- its --region: it shares that region's checks
  host        TEXT    NOT NULL,          -- machine name and port, for operators
  pid         INTEGER NOT NULL,
  version     TEXT    NOT NULL,
  started_at  INTEGER NOT NULL,          -- epoch ms, database clock
  renewed_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL           -- dead once the database's clock passes it
);
CREATE INDEX instances_expiry ON instances(expires_at);

CREATE TABLE leases (
  name        TEXT    PRIMARY KEY,       -- 'leader'
  holder      TEXT    NOT NULL,          -- an instances.id
  acquired_at INTEGER NOT NULL,          -- epoch ms, database clock
  expires_at  INTEGER NOT NULL
);

-- Maintenance windows (README "Maintenance windows", docs/maintenance-windows.md).
-- A window is one-off (starts_at, ends_at) or recurring (schedule, duration_sec, read in timezone).
-- active_from/active_until hold its current or next span: written with every change of the window
-- and moved on by the leading instance when a span ends, so every instance decides "in maintenance"
-- from the row and its clock alone. settled_until is the end of the last span the leader acted on
-- (the incidents of monitors still down), so an end that passed while Vigil was stopped is acted on
-- once, at the next start.
CREATE TABLE maintenance_windows (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name           TEXT    NOT NULL,
  description    TEXT,
  is_enabled     INTEGER NOT NULL DEFAULT 1,
  timezone       TEXT    NOT NULL DEFAULT 'UTC',
  starts_at      INTEGER,                -- one-off: epoch ms
  ends_at        INTEGER,
  schedule       TEXT,                   -- recurring: 5-field cron
  duration_sec   INTEGER,
  active_from    INTEGER,                -- the current or next span; null: none (disabled, or over)
  active_until   INTEGER,
  settled_until  INTEGER,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  external_id  TEXT   -- optional, unique in the account (README "Configuration as code")
);
CREATE UNIQUE INDEX maintenance_windows_account_external_id ON maintenance_windows(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX maintenance_windows_account ON maintenance_windows(account_id, id);
CREATE INDEX maintenance_windows_until ON maintenance_windows(active_until);

CREATE TABLE maintenance_window_monitors (
  window_id   INTEGER NOT NULL REFERENCES maintenance_windows(id) ON DELETE CASCADE,
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  PRIMARY KEY (window_id, monitor_id)
) WITHOUT ROWID;
CREATE INDEX maintenance_window_monitors_monitor ON maintenance_window_monitors(monitor_id);
-- Groups and tags of monitors, status page updates written by people (README "Groups, tags and
-- status page updates"). monitors.group_id names one of its account's monitor_groups; it holds no
-- foreign key, so deleting a group sets it to NULL in the same transaction (store/groups.ts).
CREATE TABLE monitor_groups (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name         TEXT    NOT NULL,
  description  TEXT,
  sort_order   INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  external_id  TEXT   -- optional, unique in the account (README "Configuration as code")
);
CREATE UNIQUE INDEX monitor_groups_account_external_id ON monitor_groups(account_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX monitor_groups_account_name ON monitor_groups(account_id, name);
CREATE INDEX monitors_account_group ON monitors(account_id, group_id, id);

-- Tags, one row each: ?tag= (every tag given must be present) reads monitor_tags_account_tag once per tag.
CREATE TABLE monitor_tags (
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  account_id  INTEGER NOT NULL,
  tag         TEXT    NOT NULL,
  PRIMARY KEY (monitor_id, tag)
) WITHOUT ROWID;
CREATE INDEX monitor_tags_account_tag ON monitor_tags(account_id, tag, monitor_id);

CREATE TABLE status_page_updates (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  status_page_id  INTEGER NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  title           TEXT    NOT NULL,
  body            TEXT    NOT NULL DEFAULT '',
  kind            TEXT    NOT NULL,          -- incident, maintenance, info
  status          TEXT,                      -- incidents only: investigating, identified, monitoring, resolved
  published_at    INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  mail_pending    INTEGER NOT NULL DEFAULT 0,  -- 1: subscribers are owed a mail of it (README "Email subscriptions")
  mailed_status   TEXT                       -- the status the last mail of it said
);
CREATE INDEX status_page_updates_page ON status_page_updates(status_page_id, published_at);
CREATE INDEX status_page_updates_mail_due ON status_page_updates(published_at) WHERE mail_pending = 1;

CREATE TABLE status_page_update_monitors (
  update_id   INTEGER NOT NULL REFERENCES status_page_updates(id) ON DELETE CASCADE,
  monitor_id  INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  PRIMARY KEY (update_id, monitor_id)
) WITHOUT ROWID;
CREATE INDEX status_page_update_monitors_monitor ON status_page_update_monitors(monitor_id);

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

-- incidents opening and resolving on a page's monitors, not yet mailed: one mail per subscriber
-- once the oldest is --status-mail-period old (README "Email subscriptions")
CREATE TABLE status_mail_changes (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  status_page_id  INTEGER NOT NULL REFERENCES status_pages(id) ON DELETE CASCADE,
  monitor_id      INTEGER NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  at              INTEGER NOT NULL,
  is_down         INTEGER NOT NULL    -- 1 an incident opened, 0 it resolved
);
CREATE INDEX status_mail_changes_page ON status_mail_changes(status_page_id, at);
