-- Rate limits (docs/flow-control.md, "Rate limits"): a rate-limited job stores its limit in its
-- Soniq metadata (`meta` = {"concurrency":{"key":"…"},"rate":{"limit":n,"per":ms}}), so it is a
-- keyed job (migration 012's indexes). The claim records one row here per rate-limited job it
-- starts, under its key, until the start leaves the window (`expires_at`, milliseconds since the
-- epoch, = the start + the job's `per`); the claims that record starts delete expired rows.
CREATE TABLE soniq_rate_starts (
  key         TEXT    NOT NULL,
  expires_at  INTEGER NOT NULL
);
CREATE INDEX soniq_rate_starts_key ON soniq_rate_starts (key, expires_at);
CREATE INDEX soniq_rate_starts_expiry ON soniq_rate_starts (expires_at);
-- Keys paused by a handler (`ctx.rateLimited(ms, { scope: "key" })`): the claim takes no job of
-- a key until its `until` (milliseconds since the epoch).
CREATE TABLE soniq_rate_pauses (
  key    TEXT    PRIMARY KEY,
  until  INTEGER NOT NULL
);
-- A queue paused by a handler (`ctx.rateLimited(ms, { scope: "queue" })`) is `paused` until
-- `paused_until` (ms); NULL is an operator's pause (until a resume).
ALTER TABLE soniq_queues ADD COLUMN paused_until INTEGER;
