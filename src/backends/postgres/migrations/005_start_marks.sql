-- Crash accounting (docs/reliability.md, "Interruptions are earned"): recovery charges an
-- interruption only where a start is durably known. A worker claims with start_known = false and
-- sets it (one fenced row write, markStarted) only before it runs a job with a crash history; a
-- recovery of a row whose start is not known requeues it without a charge and counts it in
-- uncharged_recoveries instead (which gives the job its crash history).
ALTER TABLE soniq_jobs ADD COLUMN start_known boolean NOT NULL DEFAULT true;
ALTER TABLE soniq_jobs ADD COLUMN uncharged_recoveries integer NOT NULL DEFAULT 0
  CONSTRAINT soniq_jobs_uncharged_recoveries_check CHECK (uncharged_recoveries >= 0);
