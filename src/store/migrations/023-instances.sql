-- 023 (issue 21): several `vigil serve` instances on one PostgreSQL database (README "Several
-- instances"). Each live instance keeps a row in `instances`, renewed every few seconds; `leases`
-- names the instance that holds the once-only work. Both expiries are set and judged by the
-- database's clock, never an instance's. On SQLite one instance owns everything and both stay empty.
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
