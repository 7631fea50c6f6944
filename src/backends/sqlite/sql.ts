/**
 * The runtime SQL of the SQLite backend: every statement named, with its parameters and results.
 * Parameters are better-sqlite3 named parameters (`@name`, bound from an object). Times are
 * INTEGER milliseconds since the epoch; "now" is the database's clock ({@link NOW_MS}), or the
 * `@now` a transaction read once through {@link SQL.now}; durations are milliseconds (`@…Ms`).
 * "→ changes" means the caller reads the number of changed rows. Each statement is prepared
 * once per connection (see connection.ts).
 */

import { columnNames, DEAD_LETTERS, JOBS, LIST_FIELDS, selectList } from "../shared/columns.js";
import {
  SQLITE_KEY,
  SQLITE_LIMIT,
  SQLITE_RATE_LIMIT,
  SQLITE_RATE_PER,
  sqliteKeyOfMeta,
} from "../shared/concurrency-meta.js";
import { sqliteQueuePaused } from "../shared/queue-pause.js";
import { NOW_MS } from "./clock.js";
import { FLOW_SQL } from "./flow-sql.js";
import {
  CLAIMED_COLUMNS,
  CONTROL_COLUMNS,
  DEAD_LETTER_COLUMNS,
  JOB_COLUMNS,
  WORKER_COLUMNS,
} from "./rows.js";
import { NOT_IN_REMOTE_CUSTODY, SUBMISSION_SQL } from "./submission-sql.js";

/**
 * The owner fence of every finishing write (docs/backends.md, "Fencing"): `@id`, `@workerId`,
 * `@claimToken`.
 */
const OWNED =
  "id = @id AND status = 'processing' AND worker_id = @workerId AND claim_token = @claimToken";

/** As {@link OWNED}, for the owner crash recovery read (either may be NULL: `IS`, not `=`). */
const STALE_OWNED =
  "id = @id AND status = 'processing' AND worker_id IS @workerId AND claim_token IS @claimToken";

/** A queued job by id (`@id`): what a cancel of a job that is not running finds. */
const QUEUED_ID = "id = @id AND status = 'queued'";

/** The order claims take jobs in (backend.ts `Backend.claim`), `id` last as a stable tie-break. */
const CLAIM_ORDER = "priority, scheduled_at, created_at, id";

/** The dead-letter columns a move into `soniq_dead_letter_jobs` writes, in table order. */
const DEAD_LETTER_INSERT = `INSERT INTO soniq_dead_letter_jobs (${columnNames(DEAD_LETTERS)})`;

/** Skips rows of queues that are paused or have a `max_running` (the claim's filter). */
const UNRESTRICTED = `AND queue NOT IN (SELECT name FROM soniq_queues
      WHERE ${sqliteQueuePaused()} OR max_running IS NOT NULL)`;

/**
 * A fresh random claim token per row (a version 4 UUID in lower case, like `randomUUID()`):
 * `randomblob` and `random` are evaluated for each row an UPDATE changes.
 */
const NEW_CLAIM_TOKEN = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4'
    || substr(hex(randomblob(2)), 2) || '-' || substr('89AB', 1 + (abs(random()) % 4), 1)
    || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;

/** The columns of `soniq_jobs` and of `soniq_finished_jobs`: the same, in table order (migration 008). */
const JOB_TABLE_COLUMNS = columnNames(JOBS);

/** What a finishing write changes besides the status and the finish times. */
interface FinishSet {
  /** Expression for `attempts` (default: unchanged). */
  attempts?: string;
  /** Expression for `result` (default: unchanged). */
  result?: string;
}

/**
 * The finished jobs kept, from the counters (`soniq_job_counts`, migration 008), never from the
 * finished table: `status` (`done`, `cancelled`) and `n`, per `queue` too when `perQueue`. Each
 * is what moved in minus what left (pruned, deleted, run again).
 */
function finishedCounts(perQueue: boolean): string {
  const queue = perQueue ? "queue, " : "";
  return `SELECT ${queue}substr(kind, 1, instr(kind || '_', '_') - 1) AS status,
      sum(CASE WHEN kind IN ('done_gone', 'cancelled_gone') THEN -n ELSE n END) AS n
    FROM soniq_job_counts WHERE kind IN ('done', 'cancelled', 'done_gone', 'cancelled_gone')
    GROUP BY ${queue}substr(kind, 1, instr(kind || '_', '_') - 1)`;
}

/**
 * The move of a finished job (docs/backends.md, "Two tables: live jobs and finished jobs"), first
 * half: copies the live rows matching `where` into `soniq_finished_jobs` as `status`, with
 * `finished_at = updated_at = now` and `result_expires_at = now + @retentionMs` (`now` an SQL
 * expression). → `dedup_key`, `result_expires_at`, `queue`, `started_at`, `scheduled_at` (and
 * `extra`) of the copied row (the caller counts it: {@link SQL.countFinished}). The caller
 * deletes the live row ({@link SQL.deleteJob}) in the same transaction, and only when a row was
 * copied: a refused fence moves nothing.
 */
function finishMove(
  status: "done" | "cancelled",
  where: string,
  now: string,
  set: FinishSet = {},
  extra = "",
): string {
  return `INSERT INTO soniq_finished_jobs (${JOB_TABLE_COLUMNS})
    SELECT id, name, queue, args, '${status}', priority, ${set.attempts ?? "attempts"},
      max_attempts, interruptions, scheduled_at, created_at, ${now}, started_at, ${now},
      worker_id, claim_token, last_error, ${set.result ?? "result"}, ${now} + @retentionMs,
      dedup_key, meta, start_known, uncharged_recoveries, trace_context, version, checkpoint, steps
    FROM soniq_jobs WHERE ${where}
    RETURNING dedup_key, result_expires_at, queue, started_at, scheduled_at${extra}`;
}

/**
 * As {@link finishMove} for a retention of 0: the live rows matching `where` are deleted, nothing
 * is kept. → `dedup_key`, `queue`, `started_at`, `scheduled_at` (and `extra`) of the deleted row.
 */
function finishDrop(where: string, extra = ""): string {
  return `DELETE FROM soniq_jobs WHERE ${where}
    RETURNING dedup_key, queue, started_at, scheduled_at${extra}`;
}

/**
 * The due queued rows that also match `filter`, in claim order, at most `@limit` (`@now`) → ids.
 * Only jobs named in `@names` (a JSON array; NULL: any name): a row of another name is walked
 * past and left untouched (rolling deploys). Only jobs whose version is at most `@versions`'s
 * entry for their name (a JSON object, name → highest version the claimer runs; NULL: any
 * version): a row of a higher version is walked past the same way, for an upgraded worker (job
 * versions); a version-1 row never reads the object. Reads the partial claim index only. Rows
 * with a concurrency key are left to {@link keyedDueIdsStatement}.
 */
function dueIdsStatement(filter: string): string {
  return `SELECT id FROM soniq_jobs
    WHERE status = 'queued' AND scheduled_at <= @now ${filter} AND ${SQLITE_KEY} IS NULL
      AND (@names IS NULL OR name IN (SELECT value FROM json_each(@names)))
      AND (version = 1 OR @versions IS NULL
           OR version <= json_extract(@versions, '$.' || json_quote(name)))
    ORDER BY ${CLAIM_ORDER} LIMIT @limit`;
}

/**
 * The keyed claim's read (docs/flow-control.md): the ids of due queued jobs with a concurrency
 * key that fit their key's limit — a job is taken while its key's processing rows plus the jobs
 * of that key before it stays within its own limit — in fairness order: rank within the key
 * first (every key's first job, then every key's second…), then claim order; at most `@limit`.
 * A job with a rate limit (`meta.rate`) is taken only while its key's starts in the window
 * (`soniq_rate_starts` rows not expired at `@now`) plus the jobs of that key before it stay within
 * its rate limit (the claim then records its start: {@link SQL.chargeRateStarts}); a job with a
 * rate limit only has no concurrency limit (NULL). No job of a key paused in `soniq_rate_pauses`
 * (until after `@now`) is taken.
 * `filter` as {@link dueIdsStatement}'s, plus `@names`/`@versions`. Run inside the claim's
 * `BEGIN IMMEDIATE`, so the counts hold across every process sharing the file.
 */
function keyedDueIdsStatement(filter: string): string {
  return `WITH running AS (
      SELECT ${SQLITE_KEY} AS k, count(*) AS n FROM soniq_jobs
      WHERE status = 'processing' AND ${SQLITE_KEY} IS NOT NULL GROUP BY ${SQLITE_KEY}
    ), started AS (
      SELECT key AS k, count(*) AS n FROM soniq_rate_starts WHERE expires_at > @now GROUP BY key
    ), candidates AS (
      SELECT id, priority, scheduled_at, created_at, ${SQLITE_KEY} AS k, ${SQLITE_LIMIT} AS lim,
             ${SQLITE_RATE_LIMIT} AS rate_lim,
             row_number() OVER (PARTITION BY ${SQLITE_KEY} ORDER BY ${CLAIM_ORDER}) AS rn
      FROM soniq_jobs
      WHERE status = 'queued' AND ${SQLITE_KEY} IS NOT NULL AND scheduled_at <= @now ${filter}
        AND (@names IS NULL OR name IN (SELECT value FROM json_each(@names)))
        AND (version = 1 OR @versions IS NULL
             OR version <= json_extract(@versions, '$.' || json_quote(name)))
    )
    SELECT c.id FROM candidates AS c LEFT JOIN running AS r ON r.k = c.k
      LEFT JOIN started AS st ON st.k = c.k
      LEFT JOIN soniq_rate_pauses AS p ON p.key = c.k AND p.until > @now
    WHERE p.key IS NULL AND (c.lim IS NULL OR coalesce(r.n, 0) + c.rn <= c.lim)
      AND (c.rate_lim IS NULL OR coalesce(st.n, 0) + c.rn <= c.rate_lim)
    ORDER BY c.rn, c.priority, c.scheduled_at, c.created_at, c.id LIMIT @limit`;
}

/**
 * The keyed claim's rotating pass in one statement (docs/flow-control.md, "Fairness";
 * transactions.ts `keyedRotation`): the keys with a queued keyed job walked in key order (one
 * probe of `soniq_jobs_keyed_claim` per key) from just after `@cursor` (NULL: from the first key),
 * then, when `@cursor` is not NULL, wrapping round to the keys up to it; per key its head — the
 * first due queued job in claim order that passes `filter` and `@names`/`@versions` — taken while
 * the key has room (its processing rows below the head's limit, its starts in the window at `@now`
 * below the head's rate limit, not paused) → `k`, `id`, in walk order, at most `@limit`. The walk
 * is a recursive CTE read lazily: it stops at the `@limit`-th head. A row of `walk` with a NULL
 * `k` marks the end of the keys after `@cursor` (phase 0 → 1).
 */
function keyedPassStatement(filter: string): string {
  const nextKey = (after: string, upto: string) => `(SELECT ${SQLITE_KEY} FROM soniq_jobs
        WHERE status = 'queued' AND ${SQLITE_KEY} IS NOT NULL AND ${SQLITE_KEY} > ${after}
          AND ${upto} ORDER BY ${SQLITE_KEY} LIMIT 1)`;
  return `WITH RECURSIVE walk(k, phase) AS (
      SELECT ${nextKey("coalesce(@cursor, '')", "1")}, 0
      UNION ALL
      SELECT CASE WHEN w.k IS NULL THEN ${nextKey("''", `${SQLITE_KEY} <= @cursor`)}
                  ELSE ${nextKey("w.k", `(w.phase = 0 OR ${SQLITE_KEY} <= @cursor)`)} END,
             CASE WHEN w.k IS NULL THEN 1 ELSE w.phase END
      FROM walk AS w WHERE w.k IS NOT NULL OR (w.phase = 0 AND @cursor IS NOT NULL)
    )
    SELECT w.k AS k, j.id AS id FROM walk AS w CROSS JOIN soniq_jobs AS j
    WHERE w.k IS NOT NULL
      AND j.id = (SELECT id FROM soniq_jobs
        WHERE status = 'queued' AND ${SQLITE_KEY} IS NOT NULL AND ${SQLITE_KEY} = w.k
          AND scheduled_at <= @now ${filter}
          AND (@names IS NULL OR name IN (SELECT value FROM json_each(@names)))
          AND (version = 1 OR @versions IS NULL
               OR version <= json_extract(@versions, '$.' || json_quote(name)))
        ORDER BY ${CLAIM_ORDER} LIMIT 1)
      AND NOT EXISTS (SELECT 1 FROM soniq_rate_pauses AS p WHERE p.key = w.k AND p.until > @now)
      AND (json_extract(j.meta, '$.concurrency.limit') IS NULL
           OR (SELECT count(*) FROM soniq_jobs AS r
               WHERE r.status = 'processing' AND r.${SQLITE_KEY} = w.k
                 AND r.${SQLITE_KEY} IS NOT NULL)
              < json_extract(j.meta, '$.concurrency.limit'))
      AND (json_extract(j.meta, '$.rate.limit') IS NULL
           OR (SELECT count(*) FROM soniq_rate_starts AS st
               WHERE st.key = w.k AND st.expires_at > @now) < json_extract(j.meta, '$.rate.limit'))
    LIMIT @limit`;
}

/**
 * Whether `j` has one of the statuses `@statuses` (a JSON array) as operators read them
 * (contract: `JobListStatus`): a `queued` row is `queued` when due (`scheduled_at <=` the
 * database clock, as a claim decides) and `scheduled` before; any other row by its stored status.
 */
const STATUS_IN = `(CASE WHEN j.status <> 'queued' THEN j.status
    WHEN j.scheduled_at <= ${NOW_MS} THEN 'queued' ELSE 'scheduled' END)
  IN (SELECT value FROM json_each(@statuses))`;

/**
 * The job filter of the admin lists over `soniq_jobs` aliased `j`; each parameter is NULL when
 * its filter is not given: `@statuses` (with `scheduled`: {@link STATUS_IN}), `@queues`,
 * `@names`, `@ids` (JSON arrays), `@dedupKey`, `@errorText` (`last_error` contains it), `@argsPath` (a JSON path such as `$."user"."id"`) and
 * `@argsValue` (the value there as text; JSON `true`/`false` read as those words),
 * `@createdAfter`/`@createdBefore`, `@finishedAfter`/`@finishedBefore` (ms).
 */
const JOB_FILTER = `(@statuses IS NULL OR ${STATUS_IN})
    AND (@queues IS NULL OR j.queue IN (SELECT value FROM json_each(@queues)))
    AND (@names IS NULL OR j.name IN (SELECT value FROM json_each(@names)))
    AND (@ids IS NULL OR j.id IN (SELECT value FROM json_each(@ids)))
    AND (@dedupKey IS NULL OR j.dedup_key = @dedupKey)
    AND (@errorText IS NULL OR instr(j.last_error, @errorText) > 0)
    AND (@argsPath IS NULL OR (CASE json_type(j.args, @argsPath)
          WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'
          ELSE CAST(json_extract(j.args, @argsPath) AS TEXT) END) = @argsValue)
    AND (@createdAfter IS NULL OR j.created_at >= @createdAfter)
    AND (@createdBefore IS NULL OR j.created_at < @createdBefore)
    AND (@finishedAfter IS NULL OR j.finished_at >= @finishedAfter)
    AND (@finishedBefore IS NULL OR j.finished_at < @finishedBefore)`;

/**
 * The dead-letter filter over `soniq_dead_letter_jobs` aliased `d`: `@reasons`, `@queues`,
 * `@names`, `@ids` (JSON arrays or NULL), `@deadAfter`/`@deadBefore` (ms or NULL).
 */
const DEAD_FILTER = `(@reasons IS NULL OR d.reason IN (SELECT value FROM json_each(@reasons)))
    AND (@queues IS NULL OR d.queue IN (SELECT value FROM json_each(@queues)))
    AND (@names IS NULL OR d.name IN (SELECT value FROM json_each(@names)))
    AND (@ids IS NULL OR d.id IN (SELECT value FROM json_each(@ids)))
    AND (@deadAfter IS NULL OR d.dead_at >= @deadAfter)
    AND (@deadBefore IS NULL OR d.dead_at < @deadBefore)`;

/** {@link JOB_COLUMNS} qualified by the alias `j`. */
const JOB_COLUMNS_J = selectList(JOBS, "sqlite", { alias: "j" });

/** The list columns (no result) qualified by the alias `j`. */
const JOB_LIST_COLUMNS_J = selectList(JOBS, "sqlite", { alias: "j", fields: LIST_FIELDS });

/** `j`'s id is a UUIDv7 (shared/cursor.ts `isTimeOrderedId`): listed by id. */
const TIME_ORDERED = "substr(j.id, 15, 1) = '7'";

/**
 * `j` is a legacy row (its id is not a UUIDv7; the WHERE of the `…_legacy_order` partial
 * indexes, written the same way so that they serve it) after the cursor `@beforeMs`, `@beforeId`.
 */
const LEGACY_AFTER = "substr(j.id, 15, 1) <> '7' AND (j.created_at, j.id) < (@beforeMs, @beforeId)";

/**
 * Rows of each job table a listing page reads at most (`jobListCuts`): a bound on the work of a
 * page whatever the history and the filter.
 */
export const LIST_WINDOW = 5000;

/** An id above every job id (a listing's first page), for `@beforeId`. */
export const ID_MAX = "\u{10FFFF}";

/** A time above every `created_at` (ms; a listing's first page), for `@beforeMs`. */
export const TIME_MAX = Number.MAX_SAFE_INTEGER;

/**
 * One table's part of a job listing: `j` (`table`) with its controls, filtered by
 * {@link JOB_FILTER}, `where`, and the table's flag. The flags say which job tables a listing or
 * a count reads, from its status filter (admin-params.ts `jobFilterParams`): `@live` 1 to read
 * `soniq_jobs`, `@finished` 1 to read `soniq_finished_jobs`; a table the filter cannot match is
 * not read at all (a constant term: SQLite tests it once, before the loop).
 */
function jobListArm(table: "soniq_jobs" | "soniq_finished_jobs", where: string): string {
  const flag = table === "soniq_jobs" ? "@live" : "@finished";
  return `SELECT ${JOB_LIST_COLUMNS_J}, ${CONTROL_COLUMNS}
    FROM ${table} AS j LEFT JOIN soniq_job_controls AS c ON c.job_id = j.id
    WHERE ${flag} = 1 AND ${where} AND ${JOB_FILTER}`;
}

/**
 * A schedule row with its last job's status (`last_job_status`: `queued` or `processing` while
 * that job is live, NULL once it finished or is gone).
 */
const SCHEDULE_SELECT = `SELECT s.id, s.job_name, s.queue, s.priority, s.max_attempts, s.args,
    s.cron, s.every_seconds, s.timezone, s.start_at, s.end_at, s.missed_policy, s.missed_grace,
    s.missed_within, s.missed_max, s.overlap, s.history_limit, s.next_run_at, s.last_run_at,
    s.last_job_id, s.paused, s.revision, s.created_at, s.updated_at, s.job_version,
    j.status AS last_job_status
  FROM soniq_schedules AS s LEFT JOIN soniq_jobs AS j ON j.id = s.last_job_id`;

/** The name of one statement of {@link SQL}. */
export type StatementName = keyof typeof SQL;

/** Every runtime statement of the SQLite backend, by name. */
export const SQL = {
  /** → `now`: the database clock, ms. */
  now: `SELECT ${NOW_MS} AS now`,

  /**
   * `@dedupKey`, `@now` → `id` of the job holding that dedup key (`soniq_dedup_keys`: a live job,
   * or a finished one whose hold has not passed), if any.
   */
  dedupHolder: `SELECT job_id AS id FROM soniq_dedup_keys
    WHERE dedup_key = @dedupKey AND (held_until IS NULL OR held_until > @now)`,

  /**
   * `@dedupKey`, `@id`, `@now`: job `@id` takes the key — inserted when absent, taken over when
   * its hold has passed (`held_until <= @now`), held again (`held_until = NULL`) when `@id` is
   * already its job. → changes (1: taken; 0: another job holds it, see {@link SQL.dedupHolder}).
   */
  takeDedupKey: `INSERT INTO soniq_dedup_keys (dedup_key, job_id, held_until)
    VALUES (@dedupKey, @id, NULL)
    ON CONFLICT (dedup_key) DO UPDATE SET job_id = excluded.job_id, held_until = NULL
    WHERE soniq_dedup_keys.job_id = excluded.job_id
      OR (soniq_dedup_keys.held_until IS NOT NULL AND soniq_dedup_keys.held_until <= @now)`,

  /**
   * `@dedupKey`, `@id`, `@heldUntil` (ms): a finished job keeps its key until its retention
   * passes, if it still holds it.
   */
  holdDedupKey: `UPDATE soniq_dedup_keys SET held_until = @heldUntil
    WHERE dedup_key = @dedupKey AND job_id = @id`,

  /** `@dedupKey`, `@id`: releases the key, if job `@id` holds it. */
  releaseDedupKey: "DELETE FROM soniq_dedup_keys WHERE dedup_key = @dedupKey AND job_id = @id",

  /**
   * `@id`, `@name`, `@queue`, `@args` (JSON text), `@priority`, `@maxAttempts`, `@scheduledAt`
   * (ms), `@now`, `@dedupKey` (or NULL), `@meta` (JSON text or NULL), `@traceContext` (or NULL),
   * `@version`: inserts one `queued` job.
   */
  insertJob: `INSERT INTO soniq_jobs (id, name, queue, args, status, priority, max_attempts,
      scheduled_at, created_at, updated_at, dedup_key, meta, trace_context, version, ${SQLITE_KEY})
    VALUES (@id, @name, @queue, @args, 'queued', @priority, @maxAttempts,
      @scheduledAt, @now, @now, @dedupKey, @meta, @traceContext, @version,
      ${sqliteKeyOfMeta("@meta")})`,

  /**
   * Hand-off at enqueue (contract/hand-off.ts): `@queue`, `@now` → one row per `queued` job, at
   * most `HAND_OFF_PROBE_ROWS` + 1 of them (transactions.ts), `blocks` 1 for a due row of
   * `@queue`. Walks the partial claim index only, so it costs at most that many index entries
   * whatever the table holds: the job is handed off only when every queued row was seen and none
   * blocks.
   */
  handOffProbe: `SELECT (queue = @queue AND scheduled_at <= @now) AS blocks
    FROM soniq_jobs INDEXED BY soniq_jobs_claim WHERE status = 'queued' LIMIT @rows`,

  /** `@queue` → a row when that queue is paused or has a `max_running` (never handed off). */
  queueRestricted: `SELECT 1 FROM soniq_queues
    WHERE name = @queue AND (${sqliteQueuePaused()} OR max_running IS NOT NULL)`,

  /**
   * As {@link SQL.insertJob} for a job due now, inserted already claimed by `@workerId` (what
   * {@link SQL.claimByIds} writes: `processing`, a fresh random token, `started_at = @now`, start
   * not known) → its claimed columns (`CLAIMED_COLUMNS`).
   */
  insertClaimedJob: `INSERT INTO soniq_jobs (id, name, queue, args, status, priority, max_attempts,
      scheduled_at, created_at, updated_at, dedup_key, meta, trace_context, worker_id,
      claim_token, started_at, start_known, version, ${SQLITE_KEY})
    VALUES (@id, @name, @queue, @args, 'processing', @priority, @maxAttempts,
      @now, @now, @now, @dedupKey, @meta, @traceContext, @workerId,
      ${NEW_CLAIM_TOKEN}, @now, 0, @version, ${sqliteKeyOfMeta("@meta")})
    RETURNING ${CLAIMED_COLUMNS}`,

  /**
   * → `restricted` 1 when any queue is paused or has a `max_running` (`soniq_queues`), else 0.
   * The claim reads it first: without such a queue it needs no queue filter and no room count.
   */
  restrictedQueueExists: `SELECT EXISTS (SELECT 1 FROM soniq_queues
      WHERE ${sqliteQueuePaused()} OR max_running IS NOT NULL) AS restricted`,

  /**
   * `@now`, `@limit` → the ids of the first due queued jobs of every queue, in claim order. The
   * claim's read when no queue is paused or limited ({@link SQL.restrictedQueueExists}).
   */
  dueIds: dueIdsStatement(""),

  /** As {@link SQL.dueIds}, restricted to `@queues` (a JSON array of queue names). */
  dueIdsInQueues: dueIdsStatement("AND queue IN (SELECT value FROM json_each(@queues))"),

  /** As {@link SQL.dueIds}, skipping queues that are paused or have a `max_running`. */
  dueIdsUnrestricted: dueIdsStatement(UNRESTRICTED),

  /** As {@link SQL.dueIdsInQueues}, skipping queues that are paused or have a `max_running`. */
  dueIdsInQueuesUnrestricted: dueIdsStatement(
    `AND queue IN (SELECT value FROM json_each(@queues)) ${UNRESTRICTED}`,
  ),

  /**
   * Rate limits (docs/flow-control.md): `@ids` (a JSON array of just-claimed job ids), `@now` →
   * records one start per rate-limited job among them, under its key, expiring its window
   * (`per` ms) later.
   */
  chargeRateStarts: `INSERT INTO soniq_rate_starts (key, expires_at)
    SELECT ${SQLITE_KEY}, @now + ${SQLITE_RATE_PER} FROM soniq_jobs
    WHERE id IN (SELECT value FROM json_each(@ids)) AND ${SQLITE_RATE_PER} IS NOT NULL`,

  /**
   * `@now` → `ms`: milliseconds until the earliest live start expires among keys with a due
   * queued rate-limited job (when the first of their windows frees a start; NULL: none).
   */
  nextRateWindow: `SELECT min(st.expires_at) - @now AS ms FROM soniq_rate_starts AS st
    WHERE st.expires_at > @now
      AND EXISTS (SELECT 1 FROM soniq_jobs
                  WHERE status = 'queued' AND ${SQLITE_KEY} IS NOT NULL AND ${SQLITE_KEY} = st.key
                    AND ${SQLITE_RATE_PER} IS NOT NULL AND scheduled_at <= @now)`,

  /**
   * `@key`, `@now`, `@delayMs` → pauses the key until `@now + @delayMs` (a later pause is kept);
   * deletes pauses that have passed.
   */
  pauseKey: `INSERT INTO soniq_rate_pauses (key, until) VALUES (@key, @now + @delayMs)
    ON CONFLICT (key) DO UPDATE SET until = max(until, excluded.until)`,

  /**
   * `@queue`, `@now`, `@delayMs` → pauses the queue until `@now + @delayMs` (a later timed pause
   * is kept; an operator's pause, without `paused_until`, is left alone).
   */
  pauseQueue: `INSERT INTO soniq_queues AS q (name, paused, paused_until, updated_at)
    VALUES (@queue, 1, @now + @delayMs, @now)
    ON CONFLICT (name) DO UPDATE SET paused = 1,
      paused_until = CASE WHEN q.paused = 1 AND q.paused_until > @now
                          THEN max(q.paused_until, excluded.paused_until)
                          ELSE excluded.paused_until END,
      updated_at = @now
    WHERE q.paused = 0 OR q.paused_until IS NOT NULL`,

  /** `@now` → deletes the key pauses that have passed. */
  prunePauses: "DELETE FROM soniq_rate_pauses WHERE until <= @now",

  /** `@now` → deletes the starts that left their window. */
  pruneRateStarts: "DELETE FROM soniq_rate_starts WHERE expires_at <= @now",

  /** Keyed jobs ({@link keyedDueIdsStatement}) of every queue not paused or limited. */
  keyedDueIds: keyedDueIdsStatement(UNRESTRICTED),

  /** As {@link SQL.keyedDueIds}, restricted to `@queues` (a JSON array of queue names). */
  keyedDueIdsInQueues: keyedDueIdsStatement(
    `AND queue IN (SELECT value FROM json_each(@queues)) ${UNRESTRICTED}`,
  ),

  /**
   * → a row when any keyed job is queued (due or not, any queue), else none: one probe of
   * `soniq_jobs_keyed_claim` (migration 012), empty while no job has a key. A claim runs no keyed
   * read without it (transactions.ts `keyedJobQueued`).
   */
  keyedQueued: `SELECT 1 FROM soniq_jobs
    WHERE status = 'queued' AND ${SQLITE_KEY} IS NOT NULL LIMIT 1`,

  /**
   * → `allKeyed` 1 when every queued row (due or not, any queue) has a concurrency key, else 0: the
   * entries of the partial claim index counted against those of `soniq_jobs_keyed_claim`, both
   * read from the indexes alone (no row, no `meta` parsed). After a read without a key that found
   * nothing, the claim asks it instead of running that read again while the answer is 1
   * (transactions.ts `claimDue`).
   */
  allQueuedKeyed: `SELECT (SELECT count(*) FROM soniq_jobs INDEXED BY soniq_jobs_claim
        WHERE status = 'queued')
      = (SELECT count(*) FROM soniq_jobs INDEXED BY soniq_jobs_keyed_claim
        WHERE status = 'queued' AND ${SQLITE_KEY} IS NOT NULL) AS allKeyed`,

  keyedPass: keyedPassStatement(UNRESTRICTED),

  /** As {@link SQL.keyedPass}, restricted to `@queues` (a JSON array of queue names). */
  keyedPassInQueues: keyedPassStatement(
    `AND queue IN (SELECT value FROM json_each(@queues)) ${UNRESTRICTED}`,
  ),

  /** As {@link SQL.keyedDueIds}, for one queue `@queue` with a `max_running`. */
  keyedDueIdsInLimitedQueue: keyedDueIdsStatement("AND queue = @queue"),

  /** As {@link SQL.dueIds}, for one queue `@queue` with a `max_running`. */
  dueIdsInLimitedQueue: dueIdsStatement("AND queue = @queue"),

  /**
   * `@queues` (JSON array, or NULL for every queue) → `name`, `maxRunning`, `processing` (its
   * processing rows) of each queue that is not paused and has a `max_running`, in name order.
   * Read inside the claim's `BEGIN IMMEDIATE`, so the counts hold across every process sharing
   * the file; the room is shared/claim-policy.ts `limitedRoom`.
   */
  limitedQueues: `SELECT q.name, q.max_running AS maxRunning, (SELECT count(*) FROM soniq_jobs AS j
        WHERE j.status = 'processing' AND j.queue = q.name) AS processing
    FROM soniq_queues AS q
    WHERE NOT ${sqliteQueuePaused("q")} AND q.max_running IS NOT NULL
      AND (@queues IS NULL OR q.name IN (SELECT value FROM json_each(@queues)))
    ORDER BY q.name`,

  /**
   * `@ids` (a JSON array of ids the claim's read chose), `@now`, `@workerId`, `@startKnown`
   * (0/1): each of those rows still `queued` becomes `processing` with the owner and a fresh
   * random token, `started_at = updated_at = @now`, attempts unchanged → their rows
   * (`CLAIMED_COLUMNS`), in no particular order. Run inside the same `BEGIN IMMEDIATE` as the read
   * (the file's write lock is held from the start, so the rows read are the rows updated,
   * exactly once across every process sharing the file). Not one
   * `UPDATE … WHERE id IN (SELECT … LIMIT)`: SQLite materialises that subquery, even when nothing
   * is due (docs/performance.md, "Why the hot statements look as they do"); this pair skips the
   * write when nothing is due.
   */
  claimByIds: `UPDATE soniq_jobs
    SET status = 'processing', worker_id = @workerId, claim_token = ${NEW_CLAIM_TOKEN},
        started_at = @now, updated_at = @now, start_known = @startKnown
    WHERE status = 'queued' AND id IN (SELECT value FROM json_each(@ids))
    RETURNING ${CLAIMED_COLUMNS}`,

  /**
   * Success, fenced ({@link OWNED}): `@result` (JSON text or NULL), `@retentionMs` (> 0). Copies
   * the job into `soniq_finished_jobs` as `done`, `attempts + 1`, `finished_at = updated_at =
   * now`, `result_expires_at = now + @retentionMs` ({@link finishMove}; the caller deletes the
   * live row). → `dedup_key`, `result_expires_at`.
   */
  completeMove: finishMove("done", OWNED, NOW_MS, { attempts: "attempts + 1", result: "@result" }),

  /** Success with a retention of 0, fenced: deletes the job ({@link finishDrop}). → `dedup_key`. */
  completeDrop: finishDrop(OWNED),

  /**
   * Failure with attempts left, fenced: `@error`, `@delayMs`. `queued`, `attempts + 1`,
   * `last_error`, due at now + `@delayMs`, owner cleared. → `queue` of the changed row (the
   * caller counts it as `failed` in the same transaction: finished-counts.ts).
   */
  retry: `UPDATE soniq_jobs
    SET status = 'queued', attempts = attempts + 1, last_error = @error,
        scheduled_at = ${NOW_MS} + @delayMs, updated_at = ${NOW_MS},
        worker_id = NULL, claim_token = NULL
    WHERE ${OWNED}
    RETURNING queue`,

  /**
   * Copies the job into the DLQ, fenced: `@error`, `@reason`, `@now`, `@increment` (1 to count
   * an attempt, else 0); `updated_at = dead_at = @now`. → `dedup_key`, `queue` of the copied
   * row. The caller deletes the job ({@link SQL.deleteJob}), releases its key
   * ({@link SQL.releaseDedupKey}) and counts it (`dead`) in the same transaction.
   */
  deadLetter: `${DEAD_LETTER_INSERT}
    SELECT id, name, queue, args, priority, attempts + @increment,
      max_attempts, interruptions, scheduled_at, created_at, @now, started_at,
      finished_at, worker_id, claim_token, @error, dedup_key, @reason, @now, version, meta
    FROM soniq_jobs WHERE ${OWNED}
    RETURNING dedup_key, queue`,

  /** `@id`: deletes the live job row (the second half of a move to the DLQ or to the finished jobs). */
  deleteJob: "DELETE FROM soniq_jobs WHERE id = @id",

  /**
   * Snooze, fenced: `@delayMs`. `queued`, due at now + `@delayMs`, owner cleared, attempts
   * unchanged. → `queue` of the changed row.
   */
  snooze: `UPDATE soniq_jobs
    SET status = 'queued', scheduled_at = ${NOW_MS} + @delayMs, updated_at = ${NOW_MS},
        worker_id = NULL, claim_token = NULL
    WHERE ${OWNED}
    RETURNING queue`,

  /**
   * NACK, fenced: the NACK field contract (docs/shutdown.md; `queued`, owner cleared,
   * `updated_at = scheduled_at = now`; attempts and `last_error` untouched). → `queue`.
   */
  /**
   * Start mark, fenced ({@link OWNED}): the claim is durably known to have started
   * (`start_known = 1`), so a crash recovery of it charges an interruption. → changes.
   */
  markStarted: `UPDATE soniq_jobs SET start_known = 1 WHERE ${OWNED}`,

  /**
   * Fenced ({@link OWNED}): `@checkpoint` (NULL: kept) and `@steps` (NULL: kept), and
   * `"resume": true` in `meta`; with a checkpoint, counts it there (`checkpoints`, and
   * `checkpointAt` in epoch ms: the job timeline's, docs/checkpoints.md). → changes.
   */
  checkpoint: `UPDATE soniq_jobs
    SET checkpoint = COALESCE(@checkpoint, checkpoint), steps = COALESCE(@steps, steps),
        meta = CASE WHEN @checkpoint IS NULL
                 THEN json_set(COALESCE(meta, '{}'), '$.resume', json('true'))
                 ELSE json_set(COALESCE(meta, '{}'), '$.resume', json('true'),
                   '$.checkpoints', COALESCE(json_extract(meta, '$.checkpoints'), 0) + 1,
                   '$.checkpointAt', ${NOW_MS}) END
    WHERE ${OWNED}`,

  /** Fenced ({@link OWNED}) → `checkpoint`, `steps` of the owned row (none: not the owner). */
  resumeRead: `SELECT checkpoint, steps FROM soniq_jobs WHERE ${OWNED}`,
  /** `@id`: clears a queued job's checkpoint, its count and its steps. → changes. */
  resumeClear: `UPDATE soniq_jobs SET checkpoint = NULL, steps = NULL, updated_at = ${NOW_MS},
      meta = json_remove(meta, '$.checkpoints', '$.checkpointAt')
    WHERE ${QUEUED_ID}`,
  /** `@id` → `checkpoint`, `steps` of a queued job (an operator's read). */
  resumeReadQueued: `SELECT checkpoint, steps FROM soniq_jobs WHERE ${QUEUED_ID}`,

  /**
   * Fenced ({@link OWNED}): frozen (queued, owner cleared, `@steps`, `@error` as `last_error`,
   * due at `@frozenUntil`; attempts untouched). → changes.
   */
  freezeStep: `UPDATE soniq_jobs
    SET status = 'queued', worker_id = NULL, claim_token = NULL, steps = @steps,
        last_error = @error, scheduled_at = @frozenUntil, updated_at = ${NOW_MS}
    WHERE ${OWNED}`,

  /**
   * An operator's answer for a frozen job (`@id`, `@expected`, `@steps`): due now; the freeze's
   * `last_error` (`frozen: …`) cleared, any other error kept. → `queue`.
   */
  stepsResolve: `UPDATE soniq_jobs
    SET steps = @steps, scheduled_at = ${NOW_MS}, updated_at = ${NOW_MS},
        last_error = CASE WHEN last_error LIKE 'frozen:%' THEN NULL ELSE last_error END
    WHERE ${QUEUED_ID} AND steps = @expected
    RETURNING queue`,

  nack: `UPDATE soniq_jobs
    SET status = 'queued', worker_id = NULL, claim_token = NULL,
        updated_at = ${NOW_MS}, scheduled_at = ${NOW_MS}
    WHERE ${OWNED}
    RETURNING queue`,

  /**
   * Batched NACK of claimed, never-started rows (the prefetch window), ONE statement: `@items` a
   * JSON array of `[id, workerId, claimToken]`; the `nack` field contract, each row fenced on its
   * own owner and found by primary key. → `id`, `queue` of every row that changed.
   */
  nackMany: `UPDATE soniq_jobs
    SET status = 'queued', worker_id = NULL, claim_token = NULL,
        updated_at = ${NOW_MS}, scheduled_at = ${NOW_MS}
    FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS worker_id,
                 json_extract(value, '$[2]') AS claim_token
          FROM json_each(@items)) AS b
    WHERE soniq_jobs.id = b.id AND soniq_jobs.status = 'processing'
      AND soniq_jobs.worker_id = b.worker_id AND soniq_jobs.claim_token = b.claim_token
    RETURNING soniq_jobs.id AS id, soniq_jobs.queue AS queue`,

  /** `@id` → `queue`, `dedup_key` of the dead-letter entry. */
  deadLetterEntry: "SELECT queue, dedup_key FROM soniq_dead_letter_jobs WHERE id = @id",

  /**
   * `@id`, `@now`: copies the dead-letter entry back into `soniq_jobs` as `queued`, due at
   * `@now`, attempts and interruptions 0; owner, times of the run and result cleared;
   * `last_error`, `created_at`, `dedup_key`, `version` and `meta` kept — `meta` without the
   * checkpoint markers (`resume`, `checkpoints`, `checkpointAt`: the dead letter does not keep
   * the checkpoint and steps they describe), its concurrency key written to `concurrency_key` as
   * every insert does (docs/flow-control.md, "Stored"). The caller then runs
   * {@link SQL.deleteDeadLetter} in the same transaction.
   */
  replay: `INSERT INTO soniq_jobs (${JOB_TABLE_COLUMNS}, ${SQLITE_KEY})
    SELECT id, name, queue, args, 'queued', priority, 0, max_attempts, 0, @now,
      created_at, @now, NULL, NULL, NULL, NULL, last_error, NULL, NULL, dedup_key,
      json_remove(meta, '$.resume', '$.checkpoints', '$.checkpointAt'), 1, 0, NULL,
      version, NULL, NULL, ${sqliteKeyOfMeta("meta")}
    FROM soniq_dead_letter_jobs WHERE id = @id`,

  /** `@id`: deletes the dead-letter entry. */
  deleteDeadLetter: "DELETE FROM soniq_dead_letter_jobs WHERE id = @id",

  /**
   * `@id`, `@retentionMs` (> 0): cancels a queued job — copied into `soniq_finished_jobs` as
   * `cancelled`, `finished_at = updated_at = now`, `result_expires_at = now + @retentionMs`
   * ({@link finishMove}; the caller deletes the live row). → `dedup_key`, `result_expires_at`.
   */
  cancelQueuedMove: finishMove("cancelled", QUEUED_ID, NOW_MS),

  /** `@id`: cancels a queued job with a retention of 0 (deleted). → `dedup_key`. */
  cancelQueuedDrop: finishDrop(QUEUED_ID),

  /** `@id` → the job row (`JOB_COLUMNS`), live or finished. */
  getJob: `SELECT ${JOB_COLUMNS} FROM soniq_jobs WHERE id = @id
    UNION ALL SELECT ${JOB_COLUMNS} FROM soniq_finished_jobs WHERE id = @id`,

  /** `@id` → the dead-letter row (`DEAD_LETTER_COLUMNS`). */
  getDeadLetter: `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs WHERE id = @id`,

  /**
   * → per queue: `queue`, `queued`, `processing`, `done`, `cancelled`, `dead_letter` and
   * `oldest_age_ms` (the database's now minus the oldest due queued row's `scheduled_at`; 0 when
   * none is due), from one snapshot.
   */
  queueMetrics: `WITH t AS (SELECT ${NOW_MS} AS now),
    live AS (
      SELECT queue,
        count(*) FILTER (WHERE status = 'queued') AS queued,
        count(*) FILTER (WHERE status = 'processing') AS processing,
        min(scheduled_at) FILTER (WHERE status = 'queued' AND scheduled_at <= (SELECT now FROM t))
          AS oldest_due
      FROM soniq_jobs GROUP BY queue
    ),
    fin AS (
      SELECT queue, sum(n) FILTER (WHERE status = 'done') AS done,
        sum(n) FILTER (WHERE status = 'cancelled') AS cancelled
      FROM (${finishedCounts(true)}) GROUP BY queue HAVING sum(n) > 0
    ),
    dlq AS (SELECT queue, count(*) AS dead_letter FROM soniq_dead_letter_jobs GROUP BY queue),
    names AS (SELECT queue FROM live UNION SELECT queue FROM fin UNION SELECT queue FROM dlq)
    SELECT names.queue AS queue,
      coalesce(live.queued, 0) AS queued, coalesce(live.processing, 0) AS processing,
      coalesce(fin.done, 0) AS done, coalesce(fin.cancelled, 0) AS cancelled,
      coalesce(dlq.dead_letter, 0) AS dead_letter,
      coalesce((SELECT now FROM t) - live.oldest_due, 0) AS oldest_age_ms
    FROM names LEFT JOIN live ON live.queue = names.queue
      LEFT JOIN fin ON fin.queue = names.queue LEFT JOIN dlq ON dlq.queue = names.queue
    ORDER BY names.queue`,

  /**
   * → one row: `queued`, `processing` (`soniq_jobs`), `done`, `cancelled`
   * (`soniq_finished_jobs`), `jobs` (the rows of both), `dead_letter`, from one snapshot.
   */
  stats: `WITH live AS (SELECT
        count(*) FILTER (WHERE status = 'queued') AS queued,
        count(*) FILTER (WHERE status = 'processing') AS processing
      FROM soniq_jobs),
    fin AS (SELECT
        coalesce(sum(n) FILTER (WHERE status = 'done'), 0) AS done,
        coalesce(sum(n) FILTER (WHERE status = 'cancelled'), 0) AS cancelled
      FROM (${finishedCounts(false)}))
    SELECT live.queued, live.processing, fin.done, fin.cancelled,
      live.queued + live.processing + fin.done + fin.cancelled AS jobs,
      (SELECT count(*) FROM soniq_dead_letter_jobs) AS dead_letter
    FROM live, fin`,

  /**
   * → `version`: the newest migration recorded in `soniq_migrations` (0 when none). A worker's
   * registration reads it first and is refused when it is older than the build's newest.
   */
  newestMigration: "SELECT coalesce(max(version), 0) AS version FROM soniq_migrations",

  /**
   * `@id`, `@hostname`, `@pid`, `@queues` (JSON array text or NULL), `@concurrency`,
   * `@schemaVersion` (the newest migration this build has: the schema refuses an older one):
   * inserts (or replaces) the worker row as `running`, `started_at = last_heartbeat_at = now`.
   */
  registerWorker: `INSERT INTO soniq_workers (id, hostname, pid, queues, concurrency, status,
      started_at, last_heartbeat_at, stopped_at, schema_version, job_versions)
    VALUES (@id, @hostname, @pid, @queues, @concurrency, 'running', ${NOW_MS}, ${NOW_MS}, NULL,
      @schemaVersion, @jobVersions)
    ON CONFLICT (id) DO UPDATE SET
      hostname = excluded.hostname, pid = excluded.pid, queues = excluded.queues,
      concurrency = excluded.concurrency, status = excluded.status,
      started_at = excluded.started_at, last_heartbeat_at = excluded.last_heartbeat_at,
      stopped_at = NULL, schema_version = excluded.schema_version,
      job_versions = excluded.job_versions`,

  /** `@id`, `@status`: `last_heartbeat_at = now` and the worker's status. */
  heartbeat: `UPDATE soniq_workers SET last_heartbeat_at = ${NOW_MS}, status = @status
    WHERE id = @id`,

  /** `@id`: `stopped`, `stopped_at = now`. */
  markWorkerStopped: `UPDATE soniq_workers SET status = 'stopped', stopped_at = ${NOW_MS}
    WHERE id = @id`,

  /** `@id` → `status` of the worker row (none for an unknown id). */
  workerStatus: "SELECT status FROM soniq_workers WHERE id = @id",

  /** `@reason`: counts one worker exit with that reason (`soniq_worker_exits`). */
  countWorkerExit: `INSERT INTO soniq_worker_exits (exit_reason, exits, last_at)
    VALUES (@reason, 1, ${NOW_MS})
    ON CONFLICT (exit_reason) DO UPDATE SET exits = exits + 1, last_at = excluded.last_at`,

  /** → `exit_reason`, `exits`, `last_at` (ms): how workers ended. */
  workerExitCounts: "SELECT exit_reason, exits, last_at FROM soniq_worker_exits",

  /**
   * `@timeoutMs` → worker rows (`WORKER_COLUMNS`) plus `live` (0/1: not stopped and heartbeat
   * within the worker's declared `heartbeat_timeout_ms`, or `@timeoutMs` when it declared none),
   * newest `started_at` first.
   */
  listWorkers: `SELECT ${WORKER_COLUMNS},
      (status <> 'stopped'
        AND ${NOW_MS} - last_heartbeat_at <= COALESCE(heartbeat_timeout_ms, @timeoutMs)) AS live
    FROM soniq_workers ORDER BY started_at DESC, rowid DESC`,

  /**
   * `@limit` (-1: no limit): deletes at most that many finished rows whose retention has passed
   * (the expiry index). → changes.
   */
  pruneFinished: `DELETE FROM soniq_finished_jobs WHERE id IN (SELECT id FROM soniq_finished_jobs
    WHERE result_expires_at <= ${NOW_MS} LIMIT @limit)
    RETURNING queue, status, started_at, scheduled_at`,

  /**
   * `@queue`, `@kind` (`done`, `cancelled`, `done_gone`, `cancelled_gone`, `failed`, `dead`),
   * `@n`, `@waitS`
   * (seconds from due to start, summed): adds to this minute's counter (`soniq_job_counts`).
   */
  countFinished: `INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
    VALUES (@queue, @kind, (${NOW_MS} / 60000) * 60000, 0, @n, @waitS)
    ON CONFLICT (queue, kind, bucket, writer)
      DO UPDATE SET n = n + excluded.n, wait_s = wait_s + excluded.wait_s`,

  /**
   * `@cutoff` (ms): folds the counters of minutes before it into one row per queue and kind
   * (bucket 0), sums unchanged; {@link SQL.dropFoldedCounts} then deletes the folded minutes.
   */
  foldCounts: `INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
    SELECT queue, kind, 0, 0, sum(n), sum(wait_s) FROM soniq_job_counts
    WHERE bucket > 0 AND bucket < @cutoff GROUP BY queue, kind
    ON CONFLICT (queue, kind, bucket, writer)
      DO UPDATE SET n = n + excluded.n, wait_s = wait_s + excluded.wait_s`,

  /** `@cutoff` (ms): deletes the minutes {@link SQL.foldCounts} folded. */
  dropFoldedCounts: "DELETE FROM soniq_job_counts WHERE bucket > 0 AND bucket < @cutoff",

  /**
   * `@limit` (-1: no limit): forgets at most that many dedup keys whose hold has passed. →
   * changes.
   */
  pruneDedupKeys: `DELETE FROM soniq_dedup_keys WHERE dedup_key IN (
    SELECT dedup_key FROM soniq_dedup_keys WHERE held_until <= ${NOW_MS} LIMIT @limit)`,

  /**
   * `@now`, `@timeoutMs` (NULL: a stale heartbeat does not count as dead, only stopped or unknown
   * owners; a worker's declared `heartbeat_timeout_ms` wins over it), `@liveWorkerId` (the
   * caller's own incarnation, never not live; NULL: none) → every `processing` row whose owner is
   * not a live worker, as a `StaleClaim` (shared/recovery-policy.ts) with 0/1 for its booleans.
   */
  staleClaims: `SELECT j.id, j.name, j.queue, j.worker_id AS workerId, j.claim_token AS claimToken,
      j.interruptions, j.start_known AS startKnown,
      EXISTS (SELECT 1 FROM soniq_job_controls AS c
              WHERE c.job_id = j.id AND c.cancel_claim_token = j.claim_token) AS cancelRequested
    FROM soniq_jobs AS j
    WHERE j.status = 'processing' AND ${NOT_IN_REMOTE_CUSTODY}
      AND (@liveWorkerId IS NULL OR j.worker_id IS NOT @liveWorkerId)
      AND NOT EXISTS (
        SELECT 1 FROM soniq_workers AS w
        WHERE w.id = j.worker_id AND w.status <> 'stopped'
          AND (@timeoutMs IS NULL
               OR @now - w.last_heartbeat_at <= COALESCE(w.heartbeat_timeout_ms, @timeoutMs)))`,

  /**
   * Crash recovery's cancel, fenced ({@link STALE_OWNED}), `@now`, `@retentionMs` (> 0): copied
   * into `soniq_finished_jobs` as `cancelled`, finished now, kept `@retentionMs`
   * ({@link finishMove}). → `dedup_key`, `result_expires_at`.
   */
  cancelStaleMove: finishMove("cancelled", STALE_OWNED, "@now"),

  /** Crash recovery's cancel with a retention of 0, fenced: deleted. → `dedup_key`. */
  cancelStaleDrop: finishDrop(STALE_OWNED),

  /**
   * Crash recovery's requeue, fenced ({@link STALE_OWNED}), `@now`, `@interruptions` (the count
   * after this recovery), `@charge` (1: charged; 0: `uncharged_recoveries + 1`): `queued`, due at
   * `@now`, owner cleared, attempts untouched. → changes.
   */
  requeueStale: `UPDATE soniq_jobs
    SET status = 'queued', worker_id = NULL, claim_token = NULL, interruptions = @interruptions,
        uncharged_recoveries = uncharged_recoveries + 1 - @charge,
        scheduled_at = @now, updated_at = @now
    WHERE ${STALE_OWNED}`,

  /**
   * Crash recovery's dead-letter copy, fenced ({@link STALE_OWNED}), `@now`, `@interruptions`,
   * `@error`, `@reason`. → `dedup_key`, `queue` of the copied row. The caller deletes the job
   * ({@link SQL.deleteJob}), releases its key and counts it (`dead`) in the same transaction.
   */
  buryStale: `${DEAD_LETTER_INSERT}
    SELECT id, name, queue, args, priority, attempts, max_attempts, @interruptions,
      scheduled_at, created_at, @now, started_at, finished_at, worker_id, claim_token,
      @error, dedup_key, @reason, @now, version, meta
    FROM soniq_jobs WHERE ${STALE_OWNED}
    RETURNING dedup_key, queue`,

  /** `@workerId` → `id`, `claim_token` of the processing rows it owns. */
  ownedBy: `SELECT id, claim_token FROM soniq_jobs
    WHERE status = 'processing' AND worker_id = @workerId`,

  /**
   * `@notSeenForMs`, `@limit` (-1: no limit): deletes at most that many worker rows whose last
   * heartbeat is older. → changes.
   */
  forgetWorkers: `DELETE FROM soniq_workers WHERE id IN (SELECT id FROM soniq_workers
    WHERE ${NOW_MS} - last_heartbeat_at > @notSeenForMs LIMIT @limit)`,

  /**
   * `@name`, `@holder`, `@ttlMs`: takes or renews the lease when it is free, expired or already
   * `@holder`'s. → a row (`holder`) iff `@holder` holds it now.
   */
  tryLead: `INSERT INTO soniq_leases (name, holder, expires_at)
    VALUES (@name, @holder, ${NOW_MS} + @ttlMs)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE soniq_leases.holder = excluded.holder OR soniq_leases.expires_at < ${NOW_MS}
    RETURNING holder`,

  /** `@name`, `@holder`: gives the lease up if `@holder` holds it. */
  resign: "DELETE FROM soniq_leases WHERE name = @name AND holder = @holder",

  // ---- Operations (contract: admin-store.ts; tables of migration 005) ----

  /**
   * The time-ordered segment of a job listing (contract: admin-store.ts `Page`): {@link JOB_FILTER}
   * parameters, `@live`, `@finished` ({@link jobListArm}), `@beforeId` (the cursor's id, or {@link ID_MAX} for the
   * first page), `@limit` → the rows of both job tables whose id is a UUIDv7 and below
   * `@beforeId`, without their result (no list shows it; `jobDetail` reads it), plus controls,
   * by id descending. Each table is walked backwards along its primary key and the two walks are
   * merged: no sort, and a page costs its rows whatever the tables hold (test/sqlite/listing.test.ts).
   */
  jobListById: `${jobListArm("soniq_jobs", `${TIME_ORDERED} AND j.id < @beforeId AND j.id >= @lowId`)}
    UNION ALL ${jobListArm("soniq_finished_jobs", `${TIME_ORDERED} AND j.id < @beforeId AND j.id >= @lowId`)}
    ORDER BY id DESC LIMIT @limit`,

  /**
   * The windows of a listing page (`@live`, `@finished` as {@link jobListArm}, `@beforeId`):
   * for each job table, the UUIDv7 id {@link LIST_WINDOW} rows below `@beforeId` on its primary
   * key (`live_cut`, `finished_cut`), NULL when fewer rows are left. A page reads no row below the
   * higher cut (`@lowId` of {@link SQL.jobListById}), so a filter that rarely matches costs the
   * same at any history size; the next page starts below the cut.
   */
  jobListCuts: `SELECT
      (SELECT id FROM soniq_jobs WHERE @live = 1 AND substr(id, 15, 1) = '7' AND id < @beforeId
        ORDER BY id DESC LIMIT 1 OFFSET ${LIST_WINDOW - 1}) AS live_cut,
      (SELECT id FROM soniq_finished_jobs WHERE @finished = 1 AND substr(id, 15, 1) = '7' AND id < @beforeId
        ORDER BY id DESC LIMIT 1 OFFSET ${LIST_WINDOW - 1}) AS finished_cut`,

  /**
   * The legacy segment of a job listing: as {@link SQL.jobListById} for the rows whose id is not
   * a UUIDv7 (made before time-ordered ids), after `(@beforeMs, @beforeId)` (the cursor, or
   * {@link TIME_MAX}, {@link ID_MAX}), by `created_at` then id, descending (the partial
   * `…_legacy_order` indexes, empty on a database made since).
   */
  jobListLegacy: `${jobListArm("soniq_jobs", LEGACY_AFTER)}
    UNION ALL ${jobListArm("soniq_finished_jobs", LEGACY_AFTER)}
    ORDER BY created_at DESC, id DESC LIMIT @limit`,

  /** {@link JOB_FILTER} parameters, `@live`, `@finished` ({@link jobListArm}) → `n`, over both job tables. */
  jobCount: `SELECT (SELECT count(*) FROM soniq_jobs AS j WHERE @live = 1 AND ${JOB_FILTER})
      + (SELECT count(*) FROM soniq_finished_jobs AS j WHERE @finished = 1 AND ${JOB_FILTER})
    AS n`,

  /**
   * `@statuses` (with `scheduled`: {@link STATUS_IN}), `@queues` (JSON arrays or NULL: any) →
   * `n`: the live jobs counted, plus the finished jobs kept from the counters (never the finished table), so the answer costs the
   * same at any history size (`countableByCounters`).
   */
  jobCountByCounters: `SELECT (SELECT count(*) FROM soniq_jobs AS j
      WHERE (@statuses IS NULL OR ${STATUS_IN})
        AND (@queues IS NULL OR j.queue IN (SELECT value FROM json_each(@queues))))
    + (SELECT COALESCE(sum(f.n), 0) FROM (${finishedCounts(true)}) AS f
      WHERE (@statuses IS NULL OR f.status IN (SELECT value FROM json_each(@statuses)))
        AND (@queues IS NULL OR f.queue IN (SELECT value FROM json_each(@queues))))
    AS n`,

  /**
   * → `queue`, `status`, `n` per queue × status; dead letters as `dead_letter`, queued jobs not
   * yet due (`scheduled_at >` the database clock, as a claim decides) as `scheduled`.
   */
  jobCountByQueueStatus: `SELECT queue,
      CASE WHEN status = 'queued' AND scheduled_at > ${NOW_MS} THEN 'scheduled' ELSE status END
        AS status,
      count(*) AS n
    FROM soniq_jobs GROUP BY 1, 2
    UNION ALL SELECT * FROM (${finishedCounts(true)}) WHERE n > 0
    UNION ALL SELECT queue, 'dead_letter', count(*) FROM soniq_dead_letter_jobs GROUP BY queue
    ORDER BY 1, 2`,

  /** `@id` → the job row plus controls, live or finished. */
  jobGet: `SELECT ${JOB_COLUMNS_J}, ${CONTROL_COLUMNS}
    FROM soniq_jobs AS j LEFT JOIN soniq_job_controls AS c ON c.job_id = j.id WHERE j.id = @id
    UNION ALL SELECT ${JOB_COLUMNS_J}, ${CONTROL_COLUMNS}
    FROM soniq_finished_jobs AS j LEFT JOIN soniq_job_controls AS c ON c.job_id = j.id
    WHERE j.id = @id`,

  /** `@jobId`, `@kind`, `@attempt`, `@workerId`, `@detail`: appends one timeline event, now. */
  eventAppend: `INSERT INTO soniq_job_events (job_id, at, kind, attempt, worker_id, detail)
    VALUES (@jobId, ${NOW_MS}, @kind, @attempt, @workerId, @detail)`,

  /** `@jobId` → its events in append order (`seq` is the row id). */
  eventsList: `SELECT id AS seq, job_id, at, kind, attempt, worker_id, detail
    FROM soniq_job_events WHERE job_id = @jobId ORDER BY id`,

  /** `@ageMs`, `@limit`: deletes at most that many events older than `@ageMs`. → changes. */
  eventsPrune: `DELETE FROM soniq_job_events WHERE id IN (SELECT id FROM soniq_job_events
    WHERE at < ${NOW_MS} - @ageMs LIMIT @limit)`,

  /** `@id` → `status`, `attempts`, `worker_id`, `claim_token` of the job, live or finished. */
  jobState: `SELECT status, attempts, worker_id, claim_token FROM soniq_jobs WHERE id = @id
    UNION ALL SELECT status, attempts, worker_id, claim_token FROM soniq_finished_jobs
    WHERE id = @id`,

  /** `@id` → `cancel_claim_token` of its controls. */
  cancelToken: "SELECT cancel_claim_token FROM soniq_job_controls WHERE job_id = @id",

  /** `@id`, `@now`, `@claimToken`: stores a cancel request bound to that claim. */
  cancelRequest: `INSERT INTO soniq_job_controls (job_id, cancel_requested_at, cancel_claim_token)
    VALUES (@id, @now, @claimToken)
    ON CONFLICT (job_id) DO UPDATE SET cancel_requested_at = excluded.cancel_requested_at,
      cancel_claim_token = excluded.cancel_claim_token`,

  /**
   * Fenced ({@link OWNED}), `@now`, `@retentionMs` (> 0): the owner records a cancel — copied into
   * `soniq_finished_jobs` as `cancelled`, finished now, attempts unchanged ({@link finishMove}; the
   * caller deletes the live row). → `dedup_key`, `result_expires_at`, `attempts`.
   */
  cancelOwnedMove: finishMove("cancelled", OWNED, "@now", {}, ", attempts"),

  /** As {@link SQL.cancelOwnedMove} with a retention of 0: deleted. → `dedup_key`, `attempts`. */
  cancelOwnedDrop: finishDrop(OWNED, ", attempts"),

  /**
   * `@id`, `@now`: run now — a queued job becomes due now (result, owner and finish cleared,
   * attempts kept); not a job waiting for its dependencies (workflows, migration 015). → `queue`, `dedup_key` of the changed row.
   */
  retryNow: `UPDATE soniq_jobs
    SET status = 'queued', scheduled_at = @now, updated_at = @now, finished_at = NULL,
        result = NULL, result_expires_at = NULL, worker_id = NULL, claim_token = NULL
    WHERE id = @id AND status = 'queued' AND scheduled_at <> 253402300799999
    RETURNING queue, dedup_key`,

  /**
   * `@id`, `@now`: run now of a finished job — copied back into `soniq_jobs` as `queued`, due
   * now, with the fields {@link SQL.retryNow} writes (the caller deletes the finished row). →
   * `queue`, `dedup_key`.
   */
  retryNowFinished: `INSERT INTO soniq_jobs (${JOB_TABLE_COLUMNS}, ${SQLITE_KEY})
    SELECT id, name, queue, args, 'queued', priority, attempts, max_attempts, interruptions,
      @now, created_at, @now, started_at, NULL, NULL, NULL, last_error, NULL, NULL, dedup_key,
      json_remove(meta, '$.checkpoints', '$.checkpointAt'), start_known, uncharged_recoveries,
      trace_context, version, NULL, NULL, ${sqliteKeyOfMeta("meta")}
    FROM soniq_finished_jobs WHERE id = @id
    RETURNING queue, dedup_key`,

  /** `@id`: deletes the job's controls. */
  deleteControls: "DELETE FROM soniq_job_controls WHERE job_id = @id",

  /** `@id`: deletes a queued job. → `dedup_key` of the deleted row. */
  deleteIdleJob: "DELETE FROM soniq_jobs WHERE id = @id AND status = 'queued' RETURNING dedup_key",

  /** `@id`: deletes a finished job. → `dedup_key` of the deleted row. */
  deleteFinishedJob: `DELETE FROM soniq_finished_jobs WHERE id = @id
    RETURNING dedup_key, queue, status, started_at, scheduled_at`,

  /**
   * {@link DEAD_FILTER} parameters, `@cursorMs`/`@cursorId`, `@limit` → dead-letter rows,
   * newest `dead_at` first.
   */
  deadLetterList: `SELECT ${DEAD_LETTER_COLUMNS} FROM soniq_dead_letter_jobs AS d
    WHERE ${DEAD_FILTER}
      AND (@cursorMs IS NULL OR d.dead_at < @cursorMs
           OR (d.dead_at = @cursorMs AND d.id < @cursorId))
    ORDER BY d.dead_at DESC, d.id DESC LIMIT @limit`,

  /** {@link DEAD_FILTER} parameters → `n`. */
  deadLetterCount: `SELECT count(*) AS n FROM soniq_dead_letter_jobs AS d WHERE ${DEAD_FILTER}`,
  /** Every dead letter by reason. → `reason`, `n` each. */
  deadLetterCountByReason: `SELECT reason, count(*) AS n FROM soniq_dead_letter_jobs GROUP BY reason`,

  /** `@ageMs`, `@limit`: deletes at most that many dead letters older than `@ageMs`. */
  deadLetterPrune: `DELETE FROM soniq_dead_letter_jobs WHERE id IN (
    SELECT id FROM soniq_dead_letter_jobs WHERE dead_at < ${NOW_MS} - @ageMs LIMIT @limit)`,

  /** `@limit`: deletes at most that many controls whose job is gone (live nor finished). → changes. */
  controlsPrune: `DELETE FROM soniq_job_controls WHERE job_id IN (
    SELECT c.job_id FROM soniq_job_controls AS c
    WHERE NOT EXISTS (SELECT 1 FROM soniq_jobs AS j WHERE j.id = c.job_id)
      AND NOT EXISTS (SELECT 1 FROM soniq_finished_jobs AS f WHERE f.id = c.job_id) LIMIT @limit)`,

  /**
   * → per queue with jobs (live or finished) or a configuration row: `name`, `paused` (0/1), `max_running`,
   * `updated_at`, `queued`, `processing`, `oldest_due_ms`, by name.
   */
  /**
   * `@limit` → `key`, `n` (live starts), `next_at` (ms: earliest live start's expiry), `until`
   * (ms: key pause end): keys with live starts or a pause, most starts first.
   */
  rateKeyList: `WITH st AS (SELECT key, count(*) AS n, min(expires_at) AS next_at
        FROM soniq_rate_starts WHERE expires_at > ${NOW_MS} GROUP BY key),
      ps AS (SELECT key, until FROM soniq_rate_pauses WHERE until > ${NOW_MS}),
      ks AS (SELECT key FROM st UNION SELECT key FROM ps)
    SELECT ks.key, COALESCE(st.n, 0) AS n, st.next_at, ps.until
    FROM ks LEFT JOIN st ON st.key = ks.key LEFT JOIN ps ON ps.key = ks.key
    ORDER BY COALESCE(st.n, 0) DESC, ks.key LIMIT @limit`,

  /**
   * `@queue` (NULL: every queue) → per queue and key with queued or processing keyed jobs:
   * `queue`, `key`, `due` (due queued jobs there), `running` (the key's processing jobs in every
   * queue), `lim`, `rate_lim` (smallest limits of its jobs there), `started` (live starts),
   * `next_at` (ms: earliest live start's expiry), `until` (ms: key pause end). Each half of the
   * union reads one keyed partial index.
   */
  keyFlowList: `WITH j AS (
      SELECT queue, ${SQLITE_KEY} AS key, scheduled_at <= ${NOW_MS} AS due,
             ${SQLITE_LIMIT} AS lim, ${SQLITE_RATE_LIMIT} AS rate_lim
      FROM soniq_jobs WHERE status = 'queued' AND ${SQLITE_KEY} IS NOT NULL
        AND (@queue IS NULL OR queue = @queue)
      UNION ALL
      SELECT queue, ${SQLITE_KEY}, 0, ${SQLITE_LIMIT}, ${SQLITE_RATE_LIMIT}
      FROM soniq_jobs WHERE status = 'processing' AND ${SQLITE_KEY} IS NOT NULL
        AND (@queue IS NULL OR queue = @queue)
    ), kq AS (
      SELECT queue, key, sum(due) AS due, min(lim) AS lim, min(rate_lim) AS rate_lim
      FROM j GROUP BY queue, key
    ), run AS (
      SELECT ${SQLITE_KEY} AS key, count(*) AS n FROM soniq_jobs
      WHERE status = 'processing' AND ${SQLITE_KEY} IS NOT NULL GROUP BY 1
    ), st AS (SELECT key, count(*) AS n, min(expires_at) AS next_at
        FROM soniq_rate_starts WHERE expires_at > ${NOW_MS} GROUP BY key),
      ps AS (SELECT key, until FROM soniq_rate_pauses WHERE until > ${NOW_MS})
    SELECT kq.queue, kq.key, kq.due, COALESCE(run.n, 0) AS running, kq.lim, kq.rate_lim,
           COALESCE(st.n, 0) AS started, st.next_at, ps.until
    FROM kq LEFT JOIN run ON run.key = kq.key LEFT JOIN st ON st.key = kq.key
      LEFT JOIN ps ON ps.key = kq.key`,

  queueList: `WITH names AS (SELECT name FROM soniq_queues UNION SELECT queue FROM soniq_jobs
      UNION SELECT queue FROM (${finishedCounts(true)}) WHERE n > 0),
    counts AS (
      SELECT queue, sum(status = 'queued') AS queued, sum(status = 'processing') AS processing,
             min(CASE WHEN status = 'queued' AND scheduled_at <= ${NOW_MS} THEN scheduled_at END) AS due
      FROM soniq_jobs GROUP BY queue
    )
    SELECT n.name, COALESCE(${sqliteQueuePaused("q")}, 0) AS paused,
           CASE WHEN ${sqliteQueuePaused("q")} THEN q.paused_until END AS paused_until,
           q.max_running, q.unclaimable_after,
           q.updated_at,
           COALESCE(c.queued, 0) AS queued, COALESCE(c.processing, 0) AS processing,
           COALESCE(${NOW_MS} - c.due, 0) AS oldest_due_ms
    FROM names AS n LEFT JOIN soniq_queues AS q ON q.name = n.name
    LEFT JOIN counts AS c ON c.queue = n.name
    ORDER BY n.name`,

  /**
   * `@since` (ms, a whole minute), `@queue` (NULL: every queue) → per minute from `@since` that
   * counted anything, oldest first: `minute` (ms), `done`, `failed`, `dead`, `cancelled`,
   * `wait_s` (seconds from due to start summed over the done jobs). Reads only
   * `soniq_job_counts`, never a job table.
   */
  queueHistory: `SELECT bucket AS minute,
      sum(CASE WHEN kind = 'done' THEN n ELSE 0 END) AS done,
      sum(CASE WHEN kind = 'failed' THEN n ELSE 0 END) AS failed,
      sum(CASE WHEN kind = 'dead' THEN n ELSE 0 END) AS dead,
      sum(CASE WHEN kind = 'cancelled' THEN n ELSE 0 END) AS cancelled,
      sum(CASE WHEN kind = 'done' THEN wait_s ELSE 0 END) AS wait_s
    FROM soniq_job_counts
    WHERE bucket >= @since AND kind IN ('done', 'failed', 'dead', 'cancelled')
      AND (@queue IS NULL OR queue = @queue)
    GROUP BY bucket ORDER BY bucket`,

  /**
   * `@name`, `@paused` (0/1, NULL: keep), `@setMax` (0/1), `@maxRunning` (NULL: no limit):
   * upserts a queue's configuration.
   */
  queueSet: `INSERT INTO soniq_queues (name, paused, max_running, unclaimable_after, updated_at)
    VALUES (@name, COALESCE(@paused, 0), CASE WHEN @setMax = 1 THEN @maxRunning END,
      CASE WHEN @setUnclaimable = 1 THEN @unclaimableAfter END, ${NOW_MS})
    ON CONFLICT (name) DO UPDATE SET
      paused = COALESCE(@paused, soniq_queues.paused),
      paused_until = CASE WHEN @paused IS NULL THEN soniq_queues.paused_until END,
      max_running = CASE WHEN @setMax = 1 THEN @maxRunning ELSE soniq_queues.max_running END,
      unclaimable_after = CASE WHEN @setUnclaimable = 1 THEN @unclaimableAfter
                               ELSE soniq_queues.unclaimable_after END,
      updated_at = excluded.updated_at`,

  /** `@id`, `@jobVersions` (JSON text: name → version). */
  workerRecordJobs: "UPDATE soniq_workers SET job_versions = @jobVersions WHERE id = @id",

  /**
   * `@timeoutMs` (for workers that declared none) → per live worker: `id`, `queues` (JSON text
   * or NULL), `job_versions` (JSON text; NULL for a worker of an earlier release).
   */
  workerCapabilities: `SELECT id, queues, job_versions FROM soniq_workers
    WHERE status <> 'stopped'
      AND ${NOW_MS} - last_heartbeat_at <= COALESCE(heartbeat_timeout_ms, @timeoutMs)`,

  /** The first (queue, name, version) group of queued rows: one probe of soniq_jobs_waiting. */
  queuedGroupFirst: `SELECT queue, name, version FROM soniq_jobs INDEXED BY soniq_jobs_waiting
    WHERE status = 'queued' ORDER BY queue, name, version LIMIT 1`,

  /**
   * The first (queue, name, version) group of queued rows after (`@queue`, `@name`, `@version`):
   * one seek of soniq_jobs_waiting; the caller skips group to group.
   */
  queuedGroupAfter: `SELECT queue, name, version FROM soniq_jobs INDEXED BY soniq_jobs_waiting
    WHERE status = 'queued' AND (queue, name, version) > (@queue, @name, @version)
    ORDER BY queue, name, version LIMIT 1`,

  /**
   * `@queue`, `@name`, `@version` → `n` due queued rows of that group and `oldest_ms` (ms since
   * the oldest became due; NULL when none): one range of soniq_jobs_waiting.
   */
  queuedGroupCount: `SELECT count(*) AS n, ${NOW_MS} - min(scheduled_at) AS oldest_ms
    FROM soniq_jobs INDEXED BY soniq_jobs_waiting
    WHERE status = 'queued' AND queue = @queue AND name = @name AND version = @version
      AND scheduled_at <= ${NOW_MS}`,

  /**
   * `@queue`, `@name`, `@version`, `@dueForMs`, `@limit` → `id`, `dedup_key` of the queued rows
   * of that group due for at least `@dueForMs`, oldest due first.
   */
  queuedGroupDue: `SELECT id, dedup_key FROM soniq_jobs INDEXED BY soniq_jobs_waiting
    WHERE status = 'queued' AND queue = @queue AND name = @name AND version = @version
      AND scheduled_at <= ${NOW_MS} - @dueForMs
    ORDER BY scheduled_at LIMIT @limit`,

  /**
   * Copies queued job `@id` into the DLQ unchanged but for `@error`, `@reason` and
   * `updated_at = dead_at = @now` (it never ran: attempts unchanged). → `queue`. The caller
   * deletes the job, releases its key and counts it (`dead`) in the same transaction.
   */
  deadLetterQueued: `${DEAD_LETTER_INSERT}
    SELECT id, name, queue, args, priority, attempts,
      max_attempts, interruptions, scheduled_at, created_at, @now, started_at,
      finished_at, worker_id, claim_token, @error, dedup_key, @reason, @now, version, meta
    FROM soniq_jobs WHERE id = @id AND status = 'queued'
    RETURNING queue`,

  /** `@id`, `@timeoutMs`: the heartbeat timeout the worker declares. */
  workerDeclare: "UPDATE soniq_workers SET heartbeat_timeout_ms = @timeoutMs WHERE id = @id",

  /**
   * The heartbeat: `@id`, `@status`, `@state` (shutdown state), `@drainElapsedMs` and
   * `@deadlineInMs` (NULL: none), relative to the database's now.
   */
  workerBeat: `UPDATE soniq_workers
    SET last_heartbeat_at = ${NOW_MS}, status = @status, shutdown_state = @state,
        drain_started_at = ${NOW_MS} - @drainElapsedMs, deadline_at = ${NOW_MS} + @deadlineInMs
    WHERE id = @id`,

  /**
   * Progress, fenced on the claim: `@id`, `@workerId`, `@claimToken`, `@progress`, `@message`.
   */
  progressWrite: `INSERT INTO soniq_job_controls (job_id, progress, progress_message, progress_at)
    SELECT id, @progress, @message, ${NOW_MS} FROM soniq_jobs WHERE ${OWNED}
    ON CONFLICT (job_id) DO UPDATE SET progress = excluded.progress,
      progress_message = excluded.progress_message, progress_at = excluded.progress_at`,

  /** `@workerId` → `id` of its processing jobs whose claim has a cancel request. */
  cancelPending: `SELECT j.id FROM soniq_jobs AS j JOIN soniq_job_controls AS c ON c.job_id = j.id
    WHERE j.status = 'processing' AND j.worker_id = @workerId
      AND c.cancel_claim_token = j.claim_token`,

  /**
   * `@timeoutMs` (for workers that declared none) → worker rows plus `age_ms`, `live` (0/1) and
   * `in_flight` (a JSON array of the ids of its processing rows), newest first.
   */
  workerList: `SELECT ${WORKER_COLUMNS},
      ${NOW_MS} - last_heartbeat_at AS age_ms,
      (status <> 'stopped'
        AND ${NOW_MS} - last_heartbeat_at <= COALESCE(heartbeat_timeout_ms, @timeoutMs)) AS live,
      (SELECT json_group_array(j.id) FROM soniq_jobs AS j
        WHERE j.status = 'processing' AND j.worker_id = soniq_workers.id) AS in_flight
    FROM soniq_workers ORDER BY started_at DESC, rowid DESC`,

  /** The submission store's statements (remote jobs): submission-sql.ts. */
  ...SUBMISSION_SQL,
  /** The workflows' statements: flow-sql.ts. */
  ...FLOW_SQL,
  // ---- schedules (schedule-store.ts; migration 003) ----------------------------------------

  /** `@id` → the schedule row (`SCHEDULE_SELECT`: the row plus `last_job_status`). */
  getSchedule: `${SCHEDULE_SELECT} WHERE s.id = @id`,

  /** → every schedule row (`SCHEDULE_SELECT`), by id. */
  listSchedules: `${SCHEDULE_SELECT} ORDER BY s.id`,

  /** `@limit` (ms) → the schedule rows (`SCHEDULE_SELECT`) whose cursor is at or before it, cursor order. */
  dueSchedules: `${SCHEDULE_SELECT} WHERE s.next_run_at <= @limit ORDER BY s.next_run_at`,

  /** `@limit` (ms) → `next`: the earliest cursor after it (NULL when none). */
  nextScheduleAfter:
    "SELECT min(next_run_at) AS next FROM soniq_schedules WHERE next_run_at > @limit",

  /**
   * The spec (`@id`, `@jobName`, `@queue`, `@priority`, `@maxAttempts`, `@args`, `@cron`,
   * `@everySeconds`, `@timezone`, `@startAt`, `@endAt`, `@missedPolicy`, `@missedGrace`,
   * `@missedWithin`, `@missedMax`, `@overlap`, `@historyLimit`, `@jobVersion`), `@nextRunAt`, `@now`: inserts
   * the schedule when the id is free. → changes.
   */
  insertSchedule: `INSERT INTO soniq_schedules (id, job_name, queue, priority, max_attempts,
      args, cron, every_seconds, timezone, start_at, end_at, missed_policy, missed_grace,
      missed_within, missed_max, overlap, history_limit, next_run_at, created_at, updated_at,
      job_version)
    VALUES (@id, @jobName, @queue, @priority, @maxAttempts, @args, @cron, @everySeconds,
      @timezone, @startAt, @endAt, @missedPolicy, @missedGrace, @missedWithin, @missedMax,
      @overlap, @historyLimit, @nextRunAt, @now, @now, @jobVersion)
    ON CONFLICT (id) DO NOTHING`,

  /**
   * As {@link SQL.insertSchedule} plus `@expectRevision`: replaces the spec and cursor when the
   * revision matches, bumping it. → changes.
   */
  updateSchedule: `UPDATE soniq_schedules SET job_name = @jobName, queue = @queue,
      priority = @priority, max_attempts = @maxAttempts, args = @args, cron = @cron,
      every_seconds = @everySeconds, timezone = @timezone, start_at = @startAt, end_at = @endAt,
      missed_policy = @missedPolicy, missed_grace = @missedGrace, missed_within = @missedWithin,
      missed_max = @missedMax, overlap = @overlap, history_limit = @historyLimit,
      next_run_at = @nextRunAt, job_version = @jobVersion, revision = revision + 1,
      updated_at = @now
    WHERE id = @id AND revision = @expectRevision`,

  /**
   * The compare-and-set that takes occurrences: `@id`, `@nextRunAt` (the new cursor), `@paused`
   * (0/1, or NULL = unchanged; a change bumps the revision), `@now`, and the expectation
   * `@expectNext` (NULL-safe) and `@expectRevision`. → changes (1 = taken).
   */
  advanceSchedule: `UPDATE soniq_schedules
    SET next_run_at = @nextRunAt, paused = COALESCE(@paused, paused),
        revision = revision + (CASE WHEN @paused IS NULL THEN 0 ELSE 1 END), updated_at = @now
    WHERE id = @id AND next_run_at IS @expectNext AND revision = @expectRevision`,

  /** `@id`, `@lastRunAt`, `@lastJobId` (each NULL = keep): the newest occurrence and job. */
  setScheduleLast: `UPDATE soniq_schedules
    SET last_run_at = COALESCE(@lastRunAt, last_run_at),
        last_job_id = COALESCE(@lastJobId, last_job_id)
    WHERE id = @id`,

  /** `@scheduleId`, `@occurrence` (ms), `@outcome`, `@jobId`, `@manual` (0/1), `@now`: one history row. */
  insertScheduleRun: `INSERT INTO soniq_schedule_runs
      (schedule_id, occurrence, outcome, job_id, manual, recorded_at)
    VALUES (@scheduleId, @occurrence, @outcome, @jobId, @manual, @now)`,

  /** `@id`: keeps the schedule's newest `history_limit` history rows. → changes. */
  trimScheduleRuns: `DELETE FROM soniq_schedule_runs WHERE schedule_id = @id AND id <= (
      SELECT id FROM soniq_schedule_runs WHERE schedule_id = @id
      ORDER BY id DESC LIMIT 1 OFFSET (SELECT history_limit FROM soniq_schedules WHERE id = @id))`,

  /** `@id`: deletes the schedule's history. */
  deleteScheduleRuns: "DELETE FROM soniq_schedule_runs WHERE schedule_id = @id",

  /** `@id`: deletes the schedule. → changes. */
  deleteSchedule: "DELETE FROM soniq_schedules WHERE id = @id",

  /** `@id`, `@limit` → the schedule's history rows, newest first. */
  scheduleRuns: `SELECT schedule_id, occurrence, outcome, job_id, manual, recorded_at
    FROM soniq_schedule_runs WHERE schedule_id = @id ORDER BY id DESC LIMIT @limit`,
} as const;
