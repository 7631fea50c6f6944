-- Rate limits (docs/flow-control.md, "Rate limits"): a rate-limited job stores its limit in its
-- Soniq metadata (`meta` = {"concurrency":{"key":"…"},"rate":{"limit":n,"per":ms}}), so it is a
-- keyed job (migration 015's indexes). The keyed claim (src/backends/postgres/keyed-claim.ts)
-- records one row here per rate-limited job it starts, under its key, until the start leaves the
-- window (`expires_at` = the start + the job's `per`): a key's live rows are its starts in the
-- window. The same claim deletes expired rows, so the table holds at most one window's starts
-- per key, and nothing for an application that declares no rate limits.
CREATE TABLE soniq_rate_starts (
  key         text        NOT NULL,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX soniq_rate_starts_key_idx ON soniq_rate_starts (key, expires_at);
CREATE INDEX soniq_rate_starts_expiry_idx ON soniq_rate_starts (expires_at);
-- Keys paused by a handler (`ctx.rateLimited(ms, { scope: "key" })`): the keyed claim takes no
-- job of a key until its `until`, and deletes the rows that have passed.
CREATE TABLE soniq_rate_pauses (
  key    text        PRIMARY KEY,
  until  timestamptz NOT NULL
);
-- A queue paused by a handler (`ctx.rateLimited(ms, { scope: "queue" })`) is `paused` until
-- `paused_until`; NULL is an operator's pause (until a resume). Claims read a queue as paused only
-- while `paused_until` is NULL or still ahead, so a timed pause ends without a write.
ALTER TABLE soniq_queues ADD COLUMN paused_until timestamptz;
