-- Accounts, API tokens and probe peers: the first released schema.

CREATE TABLE accounts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT    NOT NULL UNIQUE,
  plan        TEXT    NOT NULL CHECK (plan IN ('free', 'pro', 'enterprise')),
  created_at  INTEGER NOT NULL
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
  queue_length  INTEGER                    -- results the probe still had spooled at last contact
);

CREATE TABLE kv (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);
