-- Leader leases for maintenance work (crash recovery, pruning): one row per lease name, held by
-- one worker incarnation until expires_at (INTEGER ms, database clock).
CREATE TABLE soniq_leases (
  name       TEXT    NOT NULL PRIMARY KEY,
  holder     TEXT    NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
