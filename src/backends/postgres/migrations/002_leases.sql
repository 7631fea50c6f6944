-- Leader leases for maintenance work (crash recovery, pruning): one row per lease name, held by
-- one worker incarnation until expires_at (database clock).
CREATE TABLE soniq_leases (
  name       text        PRIMARY KEY,
  holder     text        NOT NULL,
  expires_at timestamptz NOT NULL
);
