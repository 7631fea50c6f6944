-- Crash accounting (docs/reliability.md, "Interruptions are earned"): recovery charges an
-- interruption only where a start is durably known. A worker claims with start_known = 0 and
-- sets it (one fenced row write, markStarted) only before it runs a job with a crash history; a
-- recovery of a row whose start is not known requeues it without a charge and counts it in
-- uncharged_recoveries instead (which gives the job its crash history).
ALTER TABLE soniq_jobs ADD COLUMN start_known INTEGER NOT NULL DEFAULT 1
  CHECK (start_known IN (0, 1));
ALTER TABLE soniq_jobs ADD COLUMN uncharged_recoveries INTEGER NOT NULL DEFAULT 0
  CHECK (uncharged_recoveries >= 0);
