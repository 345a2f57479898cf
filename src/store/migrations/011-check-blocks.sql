-- 011 (issue 9): checks older than about an hour are packed, one row per monitor per UTC hour
-- ('h'), merged into one per UTC day ('d') once the day is over; the checks table keeps the recent
-- ones. A check row costs ~63 bytes with its index; packed (store/check-block-codec.ts) ~3, which
-- is what keeps 30 days of 10,000 monitors at 60 s under 2 GiB. The counts let a page of checks
-- skip whole blocks without unpacking them.
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
