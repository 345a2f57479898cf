-- 023 (issue 21): several `vigil serve` instances on one PostgreSQL database (README "Several
-- instances"). Each live instance keeps a row in `instances`, renewed every few seconds; `leases`
-- names the instance that holds the once-only work. Both expiries are set and judged by the
-- database's clock, never an instance's.
CREATE TABLE instances (
  id          text    PRIMARY KEY,       -- random, new at each start
  region      text    NOT NULL,          -- its --region: it shares that region's checks
  host        text    NOT NULL,          -- machine name and port, for operators
  pid         integer NOT NULL,
  version     text    NOT NULL,
  started_at  bigint  NOT NULL,          -- epoch ms, database clock
  renewed_at  bigint  NOT NULL,
  expires_at  bigint  NOT NULL           -- dead once the database's clock passes it
);
CREATE INDEX instances_expiry ON instances(expires_at);

CREATE TABLE leases (
  name        text    PRIMARY KEY,       -- 'leader'
  holder      text    NOT NULL,          -- an instances.id
  acquired_at bigint  NOT NULL,          -- epoch ms, database clock
  expires_at  bigint  NOT NULL
);
