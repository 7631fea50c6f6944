/**
 * The runtime SQL of the PostgreSQL backend, built once per schema. Every table name is
 * schema-qualified and quoted, so the statements also run on a caller's client whatever its
 * `search_path` (transactional enqueue). Every time is the database's (`now()`); durations are
 * seconds (`make_interval(secs => …)`). Parameter lists are documented per statement.
 */

import { columnNames, DEAD_LETTERS } from "../shared/columns.js";
import {
  pgKeyed,
  pgKeyOf,
  pgLimitOf,
  pgRateLimitOf,
  pgUnkeyed,
} from "../shared/concurrency-meta.js";
import type { JobTables } from "../shared/job-tables.js";
import { pgQueuePaused } from "../shared/queue-pause.js";
import {
  aboveSharedMark,
  copyJobRows,
  countRows,
  finishMove,
  markShared,
  releaseKeys,
  takeKeys,
} from "./finish-sql.js";
import { PG_WAITING_AT } from "./flow-sql.js";
import { quoteIdent } from "./identifiers.js";
import {
  CLAIMED_COLUMNS,
  CONTROL_COLUMNS,
  DEAD_LETTER_COLUMNS,
  JOB_COLUMNS,
  JOB_LIST_COLUMNS,
  WORKER_COLUMNS,
} from "./rows.js";
import { notInRemoteCustody } from "./submission-sql.js";

/** The statements of {@link buildStatements}. */
export type Statements = ReturnType<typeof buildStatements>;

/** A queue name as a NOTIFY payload: names too long for a payload wake every queue (`*`). */
const PAYLOAD = "CASE WHEN octet_length(queue) <= 1024 THEN queue ELSE '*' END";

/**
 * "The row is processing", spelled so that the planner cannot prove the predicate of
 * `soniq_jobs_processing_idx` (`WHERE status = 'processing'`) from it (`status` is NOT NULL, so
 * it means the same as `status = 'processing'`). That index keeps an entry for every row claimed
 * since the last vacuum; with statistics that count only the few live processing rows, the
 * planner would otherwise serve a finishing write by walking it, at a cost that grows with the
 * work done since the last vacuum. Finishing writes find their row by primary key instead.
 */
const IS_PROCESSING = "(status = 'processing') IS TRUE";

/**
 * The owner fence of every finishing write (docs/backends.md, "Fencing"): `$1` id, `$2` worker,
 * `$3` token.
 */
const FENCE = `id = $1::uuid AND ${IS_PROCESSING} AND worker_id = $2 AND claim_token = $3::uuid`;

/**
 * A replayed dead letter's `meta`: the one it was moved with (its concurrency key and limits,
 * its schedule context: docs/flow-control.md, "Stored"), without the checkpoint markers
 * (`resume`, `checkpoints`, `checkpointAt`), since the dead letter does not keep the checkpoint
 * and steps they describe. A `meta` without them is kept as its exact text (no jsonb round trip).
 */
const REPLAYED_META = `CASE WHEN meta::jsonb ?| array['resume', 'checkpoints', 'checkpointAt']
    THEN (meta::jsonb - 'resume' - 'checkpoints' - 'checkpointAt')::json ELSE meta END`;

/** The `INSERT INTO` head of a move into the DLQ (`dead`: its table), columns in table order. */
function deadLetterInsert(dead: string): string {
  return `INSERT INTO ${dead} (${columnNames(DEAD_LETTERS)})`;
}

/**
 * The rows of a batch (`arrays`: parameter references with their array types, such as
 * `["$1::uuid[]", "$3::uuid[]"]`), as `unnest(…)` over the arrays zipped, written so that the
 * planner drives the statement from the batch and reaches each job by a primary-key probe, at
 * every table size, custom or generic plan. Each array goes through an uncorrelated sub-select
 * (`ARRAY(SELECT unnest(…))`, an InitPlan that keeps the order), so the planner prices the batch
 * as a handful of rows whatever its size; the plans the plain forms got, with their cost, are in
 * docs/performance.md, "Why the hot statements look as they do".
 */
function batchRows(arrays: readonly string[]): string {
  return `unnest(${arrays.map((a) => `ARRAY(SELECT unnest(${a}))`).join(", ")})`;
}

/**
 * Wraps an `UPDATE … RETURNING queue` so that each changed row also NOTIFYs its queue on
 * `channel` (a parameter reference such as `$5`). Returns one row per changed row, with the
 * payload it sent as `queue`.
 */
function notifying(update: string, channel: string): string {
  return `WITH moved AS (${update} RETURNING ${PAYLOAD} AS queue)
    SELECT pg_notify(${channel}, queue), queue FROM moved`;
}

/**
 * A failed attempt's requeue (`update`, a fenced `UPDATE` of `soniq_jobs` without `RETURNING`)
 * that also counts it as `failed` in `counts` (`soniq_job_counts`: this minute, this server
 * process) in the same statement, so a refused fence counts nothing. → `queue` of each changed row
 * (the NOTIFY payload form); with `channel`, also NOTIFYs that queue (the job is due now).
 */
function failing(update: string, counts: string, channel?: string): string {
  return `WITH moved AS (${update} RETURNING queue, status, started_at, scheduled_at)${countRows(
    counts,
    "moved",
    "'failed'",
    "counted",
  )}
    SELECT ${channel ? `pg_notify(${channel}, ${PAYLOAD}), ` : ""}${PAYLOAD} AS queue FROM moved`;
}

/**
 * What each connection of the backend's pool runs once, before its first use (only Soniq's own
 * statements run on those connections; a caller's client for transactional enqueue is left
 * alone). → `pid`: the server process id (`pg_backend_pid()`), which NOTIFYs carry.
 *
 * It also turns bitmap scans off for the session, so that a claim walks `soniq_jobs_claim_idx` in
 * order to its limit even when the statistics predate a burst of enqueues; and it prices a random
 * page read at 1.1 sequential ones (`random_page_cost`, default 4), so that a small table with a
 * full queue's statistics is still reached by index, as a job table — hot, cached — should be. A
 * session setting because the planner takes no hints and `SET LOCAL` would cost a round trip per
 * statement. It also turns parallel query and JIT compilation off: every statement of Soniq
 * reads a few rows, and on this machine starting parallel workers cost a listing page 50–60 ms
 * (for a branch the planner expected to read nothing) and compiling a generic plan whose cost
 * estimate crossed `jit_above_cost` cost it 90 ms, for 3 ms of execution. Measurements:
 * docs/performance.md, "Why the hot statements look as they do";
 * plans: test/postgres/query-plans.test.ts. And it asks for the NOTICE of a release
 * (`soniq.wake_notices`, migration 026): a job a trigger released in one of the pool's statements
 * is named to the pool itself, which wakes this process's claims for its queue right after the
 * statement (connection.ts, `onWakeNotice`), instead of waiting for its NOTIFY.
 */
export const SESSION_SETUP = `SELECT pg_backend_pid() AS pid,
  set_config('soniq.wake_notices', 'on', false) AS wake_notices,
  set_config('enable_bitmapscan', 'off', false) AS setting,
  set_config('random_page_cost', '1.1', false) AS page_cost,
  set_config('max_parallel_workers_per_gather', '0', false) AS parallel,
  set_config('jit', 'off', false) AS jit`;

/**
 * The schedule store's statements (postgres/schedule-store.ts, migration 004), schema-qualified:
 * spread into {@link buildStatements}.
 */
function scheduleStatements(schema: string) {
  const s = quoteIdent(schema);
  const schedules = `${s}.soniq_schedules`;
  const runs = `${s}.soniq_schedule_runs`;
  const jobs = `${s}.soniq_jobs`;
  const select = `SELECT sc.id, sc.job_name, sc.queue, sc.priority, sc.max_attempts,
      sc.args::text AS args, sc.cron, sc.every_seconds, sc.timezone, sc.start_at, sc.end_at,
      sc.missed_policy, sc.missed_grace, sc.missed_within, sc.missed_max, sc.overlap,
      sc.history_limit, sc.next_run_at, sc.last_run_at, sc.last_job_id::text AS last_job_id,
      sc.paused, sc.revision, sc.created_at, sc.updated_at, sc.job_version,
      COALESCE(j.status IN ('queued', 'processing'), false) AS last_job_active
    FROM ${schedules} AS sc LEFT JOIN ${jobs} AS j ON j.id = sc.last_job_id`;
  return {
    /** `$1` id → one row. */
    getSchedule: `${select} WHERE sc.id = $1`,
    /** → every row by id. */
    listSchedules: `${select} ORDER BY sc.id`,
    /**
     * `$1` overdue seconds → `now`, the ids due by `now - $1` (cursor order) and the earliest
     * cursor after it.
     */
    dueSchedules: `SELECT now() AS now,
        (SELECT min(next_run_at) FROM ${schedules}
          WHERE next_run_at > now() - make_interval(secs => $1)) AS next_due_at,
        COALESCE((SELECT json_agg(d.id ORDER BY d.next_run_at) FROM ${schedules} AS d
          WHERE d.next_run_at <= now() - make_interval(secs => $1)), '[]'::json)::text AS ids`,
    /** `$1` ids text[] → those rows. */
    schedulesByIds: `${select} WHERE sc.id = ANY($1::text[]) ORDER BY sc.next_run_at`,
    /**
     * `$1`…`$17` the spec (id, job_name, queue, priority, max_attempts, args, cron, every_seconds,
     * timezone, start_at, end_at, missed_policy, missed_grace, missed_within, missed_max, overlap,
     * history_limit), `$18` next_run_at, `$19` job_version → inserted only when the id is free.
     */
    insertSchedule: `INSERT INTO ${schedules} (id, job_name, queue, priority, max_attempts, args, cron,
        every_seconds, timezone, start_at, end_at, missed_policy, missed_grace, missed_within,
        missed_max, overlap, history_limit, next_run_at, job_version)
      VALUES ($1, $2, $3, $4, $5, $6::json, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
        $19)
      ON CONFLICT (id) DO NOTHING`,
    /**
     * As `insert` (`$1`…`$18`), plus `$19` expected revision and `$20` job_version → updated
     * (revision + 1) when it matches.
     */
    updateSchedule: `UPDATE ${schedules} SET job_name = $2, queue = $3, priority = $4, max_attempts = $5,
        args = $6::json, cron = $7, every_seconds = $8, timezone = $9, start_at = $10,
        end_at = $11, missed_policy = $12, missed_grace = $13, missed_within = $14,
        missed_max = $15, overlap = $16, history_limit = $17, next_run_at = $18,
        job_version = $20, revision = revision + 1, updated_at = now()
      WHERE id = $1 AND revision = $19`,
    /**
     * The compare-and-set: `$1` id, `$2` new cursor, `$3` paused (NULL = unchanged), `$4`
     * expected cursor, `$5` expected revision → one row when taken.
     */
    advanceSchedule: `UPDATE ${schedules}
      SET next_run_at = $2, paused = COALESCE($3, paused),
          revision = revision + (CASE WHEN $3::boolean IS NULL THEN 0 ELSE 1 END), updated_at = now()
      WHERE id = $1 AND next_run_at IS NOT DISTINCT FROM $4::timestamptz AND revision = $5`,
    /**
     * `$1` id, `$2` occurrences timestamptz[], `$3` outcomes text[], `$4` job ids uuid[], `$5`
     * manual bool[], `$6` last occurrence (NULL = keep), `$7` last job id (NULL = keep): records
     * the runs, sets `last_*` and trims the history to `history_limit`.
     */
    recordScheduleRuns: `WITH added AS (
        INSERT INTO ${runs} (schedule_id, occurrence, outcome, job_id, manual)
        SELECT $1, o, oc, j, m FROM unnest($2::timestamptz[], $3::text[], $4::uuid[], $5::bool[])
          WITH ORDINALITY AS t(o, oc, j, m, ord)
        ORDER BY ord
        RETURNING id
      ), last AS (
        UPDATE ${schedules} SET last_run_at = COALESCE($6, last_run_at),
          last_job_id = COALESCE($7::uuid, last_job_id)
        WHERE id = $1 RETURNING history_limit
      )
      DELETE FROM ${runs} WHERE schedule_id = $1 AND id <= (
        SELECT id FROM (
          SELECT id FROM ${runs} WHERE schedule_id = $1
          UNION ALL SELECT id FROM added
        ) AS every_run ORDER BY id DESC LIMIT 1 OFFSET (SELECT history_limit FROM last))`,
    /** `$1` id → deletes the row and its history; one row returned when it existed. */
    removeSchedule: `WITH gone AS (DELETE FROM ${runs} WHERE schedule_id = $1)
      DELETE FROM ${schedules} WHERE id = $1 RETURNING id`,
    /** `$1` id, `$2` limit → newest first. */
    scheduleRuns: `SELECT schedule_id, occurrence, outcome, job_id::text AS job_id, manual, recorded_at
      FROM ${runs} WHERE schedule_id = $1 ORDER BY id DESC LIMIT $2`,
  };
}

/**
 * The finished jobs kept, from the counters (`soniq_job_counts`, migration 010), never from the
 * finished table: `status` (`done`, `cancelled`) and `n` (bigint), per `queue` too when
 * `perQueue`. Each is what moved in minus what left (pruned, deleted, run again).
 */
function finishedCounts(counts: string, perQueue: boolean): string {
  const queue = perQueue ? "queue, " : "";
  return `SELECT ${queue}split_part(kind, '_', 1) AS status,
      sum(CASE WHEN kind IN ('done_gone', 'cancelled_gone') THEN -n ELSE n END)::bigint AS n
    FROM ${counts} WHERE kind IN ('done', 'cancelled', 'done_gone', 'cancelled_gone')
    GROUP BY ${queue}split_part(kind, '_', 1)`;
}

/** Builds every runtime statement for `schema` (already validated). */
export function buildStatements(schema: string) {
  const s = quoteIdent(schema);
  const jobs = `${s}.${quoteIdent("soniq_jobs")}`;
  const finished = `${s}.${quoteIdent("soniq_finished_jobs")}`;
  const store = `${s}.${quoteIdent("soniq_finished_store")}`;
  const mark = `${s}.${quoteIdent("soniq_prune_mark")}`;
  const dedup = `${s}.${quoteIdent("soniq_dedup_keys")}`;
  const counts = `${s}.${quoteIdent("soniq_job_counts")}`;
  const dead = `${s}.${quoteIdent("soniq_dead_letter_jobs")}`;
  const workers = `${s}.${quoteIdent("soniq_workers")}`;
  const leases = `${s}.${quoteIdent("soniq_leases")}`;
  const migrations = `${s}.${quoteIdent("soniq_migrations")}`;

  const retryUpdate = `UPDATE ${jobs}
    SET status = 'queued', attempts = attempts + 1, last_error = $4,
        scheduled_at = now() + make_interval(secs => $5::float8), updated_at = now(),
        worker_id = NULL, claim_token = NULL
    WHERE ${FENCE}`;
  const snoozeUpdate = `UPDATE ${jobs}
    SET status = 'queued', scheduled_at = now() + make_interval(secs => $4::float8),
        updated_at = now(), worker_id = NULL, claim_token = NULL
    WHERE ${FENCE}`;
  const nackUpdate = `UPDATE ${jobs}
    SET status = 'queued', worker_id = NULL, claim_token = NULL,
        updated_at = now(), scheduled_at = now()
    WHERE ${FENCE}`;

  const queues = `${s}.${quoteIdent("soniq_queues")}`;
  const controls = `${s}.${quoteIdent("soniq_job_controls")}`;

  /**
   * The claim, over the queued rows that also match `filter` (`$1` worker id, `$2` limit;
   * `startKnown` names the boolean parameter stored in `start_known`; `names` the text[] parameter
   * of the job names the claimer can run, NULL = any name: a row of another name is walked past,
   * never locked or changed — rolling deploys, docs/backends.md; `versions` the int[] parameter
   * of the highest version the claimer runs of each of those names, in the same order, NULL = any
   * version: a row of a higher version is walked past the same way, for an upgraded worker —
   * job versions. A version-1 row never reads the array: every definition runs version 1). Rows of a queue that is
   * paused or has a `max_running` are skipped (`soniq_queues`) unless `unrestricted`: a limited
   * queue is claimed by `claimLimited`, under its queue row's lock. Rows with a concurrency key
   * are skipped too: the keyed claim takes them (keyed-claim.ts).
   *
   * Plan-stable by construction (test/postgres/query-plans.test.ts):
   * - The skipped queues are one uncorrelated `NOT IN` list, computed once per statement (a
   *   hashed subplan). Written as `NOT EXISTS` it became an anti-join whose estimate (every job
   *   matches a configured queue, so ~1 row survives) made the planner sort every due row
   *   instead of walking the claim index to the limit: a sequential scan of the whole table at
   *   20k and 1M rows with a full queue's statistics. `name` is the primary key and `queue` is
   *   NOT NULL, so `NOT IN` means exactly what `NOT EXISTS` did.
   * - The UPDATE reaches the picked rows by primary-key probes, `id = ANY(ARRAY(SELECT …))`,
   *   never by a join the planner may turn into a hash join over a whole-table scan. The rows
   *   are already locked by `picked`, so the UPDATE's recheck finds them unchanged.
   */
  const claimWhere = (
    filter: string,
    startKnown: string,
    names: string,
    versions: string,
    unrestricted = false,
  ) => `WITH picked AS (
      SELECT id FROM ${jobs} AS cj
      WHERE status = 'queued' AND scheduled_at <= now() AND ${filter} AND ${pgUnkeyed("cj")}
        AND (${names}::text[] IS NULL OR cj.name = ANY(${names}::text[]))
        AND (cj.version = 1 OR ${versions}::int[] IS NULL
             OR cj.version <= (${versions}::int[])[array_position(${names}::text[], cj.name)])${
               unrestricted
                 ? ""
                 : `
        AND cj.queue NOT IN (SELECT q.name FROM ${queues} AS q
                             WHERE ${pgQueuePaused("q")} OR q.max_running IS NOT NULL)`
             }
      ORDER BY priority, scheduled_at, created_at, id
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE ${jobs} AS j
      SET status = 'processing', worker_id = $1, claim_token = gen_random_uuid(),
          started_at = now(), updated_at = now(), start_known = ${startKnown}::boolean
      WHERE j.id = ANY(ARRAY(SELECT picked.id FROM picked))
      RETURNING j.id, j.name, j.queue, j.args, j.priority, j.attempts, j.max_attempts,
                j.interruptions, j.uncharged_recoveries, j.scheduled_at, j.created_at, j.worker_id, j.claim_token,
                j.meta, j.trace_context, j.version
    )
    SELECT ${CLAIMED_COLUMNS} FROM claimed ORDER BY priority, scheduled_at, created_at, claimed.id`;

  return {
    /** → `now`. */
    now: "SELECT now() AS now",

    /**
     * `$1` ids uuid[], `$2` names, `$3` queues, `$4` args (JSON text), `$5` priorities int[],
     * `$6` max attempts int[], `$7` run-at timestamptz[] (NULL = use the delay), `$8` delays in
     * seconds float8[], `$9` dedup keys (NULL = none), `$10` meta (JSON text, NULL = none), `$11`
     * trace contexts (NULL = none), `$12` versions int[]; the batch has no duplicate keys.
     * → per input, in order: `id`, `inserted`, `due` (inserted and due by the database's clock:
     * exactly the rows the insert trigger NOTIFYs for), `holder_id` (the existing holder when not
     * inserted; NULL if it is not visible to this statement's snapshot yet).
     *
     * A job with a dedup key is inserted only when it takes the key in `soniq_dedup_keys` (free,
     * or its hold has passed: {@link takeKeys}).
     */
    enqueue: `WITH input AS (
        SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[],
                             $6::int[], $7::timestamptz[], $8::float8[], $9::text[], $10::text[],
                             $11::text[], $12::int[])
          WITH ORDINALITY AS t(id, name, queue, args, priority, max_attempts, run_at,
                               delay_seconds, dedup_key, meta, trace_context, version, ord)
      )${takeKeys(dedup, "input")}, inserted AS (
        INSERT INTO ${jobs} (id, name, queue, args, priority, max_attempts, scheduled_at, dedup_key,
                             meta, trace_context, version)
        SELECT id, name, queue, args::json, priority, max_attempts,
               COALESCE(run_at, now() + make_interval(secs => delay_seconds)), dedup_key,
               meta::json, trace_context, version
        FROM input
        WHERE input.dedup_key IS NULL OR input.id IN (SELECT taken.job_id FROM taken)
        ORDER BY ord
        RETURNING id, scheduled_at <= now() AS due
      )
      SELECT input.id::text AS id, inserted.id IS NOT NULL AS inserted,
             inserted.due IS TRUE AS due, holder.job_id::text AS holder_id
      FROM input
      LEFT JOIN inserted ON inserted.id = input.id
      LEFT JOIN ${dedup} AS holder
        ON inserted.id IS NULL AND holder.dedup_key = input.dedup_key
          AND (holder.held_until IS NULL OR holder.held_until > now())
      ORDER BY input.ord`,

    /**
     * One job, one row: `$1` id, `$2` name, `$3` queue, `$4` args (JSON text), `$5` priority,
     * `$6` max attempts, `$7` run-at (NULL = use the delay), `$8` delay in seconds, `$9` dedup
     * key (NULL = none), `$10` meta (JSON text or NULL), `$11` trace context (or NULL), `$12`
     * version. The same
     * answer as {@link enqueue} for a batch of one (`id`, `inserted`, `due`, `holder_id`), from a
     * plain `INSERT … VALUES` instead of unnesting twelve one-element arrays and joining them
     * back; the insert trigger NOTIFYs the same way.
     */
    enqueueOne: `WITH input AS (SELECT $1::uuid AS id, $9::text AS dedup_key)${takeKeys(dedup, "input")},
      inserted AS (
        INSERT INTO ${jobs} (id, name, queue, args, priority, max_attempts, scheduled_at, dedup_key,
                             meta, trace_context, version)
        SELECT $1::uuid, $2::text, $3::text, $4::text::json, $5::int, $6::int,
               COALESCE($7::timestamptz, now() + make_interval(secs => $8::float8)), $9::text,
               $10::text::json, $11::text, $12::int
        WHERE $9::text IS NULL OR EXISTS (SELECT 1 FROM taken)
        RETURNING scheduled_at <= now() AS due
      )
      SELECT $1::uuid::text AS id, EXISTS (SELECT 1 FROM inserted) AS inserted,
             COALESCE((SELECT due FROM inserted), false) AS due,
             (SELECT holder.job_id::text FROM ${dedup} AS holder
              WHERE $9::text IS NOT NULL AND holder.dedup_key = $9::text
                AND (holder.held_until IS NULL OR holder.held_until > now())
                AND NOT EXISTS (SELECT 1 FROM inserted)) AS holder_id`,

    /**
     * `$1` dedup key → `id` of the live job holding it in the live table's unique index (a job
     * enqueued by the previous version holds it there only).
     */
    liveHolder: `SELECT id::text AS id FROM ${jobs} WHERE dedup_key = $1::text`,

    /** `$1` dedup keys text[] → `id`, `dedup_key` of the jobs holding them now. */
    holders: `SELECT job_id::text AS id, dedup_key FROM ${dedup}
      WHERE dedup_key = ANY($1::text[]) AND (held_until IS NULL OR held_until > now())`,

    /**
     * `$1` worker id, `$2` limit, `$3` start known (false: a worker's claim, started only by
     * `markStarted`), `$4` job names text[] (NULL: any), `$5` their highest versions int[]
     * (NULL: any) → claimed jobs (`CLAIMED_COLUMNS`), in claim order. Every queue.
     */
    claimAll: claimWhere("TRUE", "$3", "$4", "$5"),

    /**
     * `$1` worker id, `$2` limit, `$3` queue, `$4` start known, `$5` names, `$6` versions → as
     * `claimAll`, one queue: walks `soniq_jobs_queue_claim_idx` in claim order from that queue's first row,
     * locking as it reads, so other queues' backlogs are never read and nothing is locked beyond
     * what is claimed.
     */
    claimQueue: claimWhere("queue = $3::text", "$4", "$5", "$6"),

    /**
     * `$1` worker id, `$2` limit, `$3` queues text[] (two or more), `$4` start known, `$5` names,
     * `$6` versions → as `claimAll`. The planner picks the claim index (walked in order, other queues' rows skipped) or the queue index (the
     * requested queues' due rows, sorted); either way rows are locked as they are returned, so a
     * claim locks only what it claims.
     */
    claimQueues: claimWhere("queue = ANY($3::text[])", "$4", "$5", "$6"),

    /**
     * `$1` worker id, `$2` limit, `$3` queue, `$4` start known, `$5` names, `$6` versions → as `claimQueue`, for
     * a queue with a `max_running`: run inside a transaction that holds the queue's row lock (`lockLimitedQueue`) and counted
     * its processing rows, with `$2` = the room left, so the limit holds across every process.
     */
    claimLimited: claimWhere("queue = $3::text", "$4", "$5", "$6", true),

    /**
     * → `name` of the queues that are not paused and have a limit, in name order
     * (the order a claim serves them in: shared/claim-policy.ts).
     */
    limitedQueues: `SELECT name FROM ${queues} AS lq
      WHERE NOT ${pgQueuePaused("lq")} AND max_running IS NOT NULL ORDER BY name`,

    /** `$1` queue: locks its configuration row (serialises limited claims). → `max_running`. */
    lockLimitedQueue: `SELECT max_running FROM ${queues} AS lq
      WHERE name = $1 AND NOT ${pgQueuePaused("lq")} AND max_running IS NOT NULL FOR UPDATE`,

    /** `$1` queue → `n`: its processing rows. */
    countProcessing: `SELECT count(*) AS n FROM ${jobs} WHERE status = 'processing' AND queue = $1`,

    /**
     * Fence `$1..$3`, `$4` result JSON text or NULL, `$5` retention seconds (<= 0: keep
     * nothing). The live row leaves `soniq_jobs` for `soniq_finished_jobs` ({@link finishMove}).
     * → one row per moved job.
     */
    complete: `WITH moved AS (DELETE FROM ${jobs} WHERE ${FENCE} RETURNING *)${finishMove({
      finished,
      dedup,
      counts,
      moved: "moved",
      status: "done",
      retention: "$5",
      set: { attempts: "attempts + 1", result: "$4::json" },
    })}
      SELECT id FROM moved`,

    /**
     * Batched completion: `$1` ids (comma-separated uuid text), `$2` the worker id (one per
     * statement: every row of a batch has the same owner), `$3` claim tokens (comma-separated
     * uuid text, in the order of the ids), `$4` results (JSON text or NULL) text[], or NULL when
     * every result is NULL, `$5` retention seconds, `$6` the number of ids. Each row fenced on its
     * own. → one row: `changed`, the number of rows that changed, and `claims`, NULL when all
     * `$6` did (the usual case: nothing per row to send back or parse), else `id/claim_token` of
     * each row that did (the pair, not the id: a batch may hold an earlier claim of the same
     * job, which the fence refuses).
     *
     * The ids and tokens travel as one text each, not as arrays: the driver escapes and quotes
     * every element of an array parameter, a busy worker's largest per-job cost of the write.
     * A uuid has no comma, and each is checked by the cast.
     *
     * Each row is found by a primary-key probe driven by the batch ({@link batchRows}). The
     * owner test is spelled `(… = $2) IS TRUE` so that it is no index condition: with a
     * constant worker id, `soniq_jobs_processing_idx` (worker_id, every row claimed since the
     * last vacuum) would otherwise look attractive (see `IS_PROCESSING`).
     */
    completeMany: `WITH moved AS (
        DELETE FROM ${jobs} AS j
        USING ${batchRows([
          "string_to_array($1::text, ',')::uuid[]",
          "string_to_array($3::text, ',')::uuid[]",
          "$4::text[]",
        ])} AS b(id, claim_token, result)
        WHERE j.id = b.id AND ${IS_PROCESSING} AND (j.worker_id = $2::text) IS TRUE
          AND j.claim_token = b.claim_token
        RETURNING j.*, b.result AS new_result
      )${finishMove({
        finished,
        dedup,
        counts,
        moved: "moved",
        status: "done",
        retention: "$5",
        set: { attempts: "attempts + 1", result: "new_result::json" },
      })}
      SELECT count(*)::int AS changed,
             CASE WHEN count(*) = $6::int THEN NULL
                  ELSE array_agg(id::text || '/' || claim_token::text) END AS claims
      FROM moved`,

    /**
     * Fence `$1..$3`, `$4` error, `$5` delay seconds. Counts the failed attempt (`failed`,
     * {@link failing}). → `queue` of the changed row.
     */
    retry: failing(retryUpdate, counts),
    /** As {@link retry}, plus `$6` channel: NOTIFYs the queue (the job is due now). */
    retryNotify: failing(retryUpdate, counts, "$6"),

    /** Fence `$1..$3`, `$4` delay seconds. */
    snooze: snoozeUpdate,
    /** As {@link snooze}, plus `$5` channel: NOTIFYs the queue (the job is due now). */
    snoozeNotify: notifying(snoozeUpdate, "$5"),

    /**
     * Fence `$1..$3`: the start mark (`start_known = true`): a crash recovery of this claim charges
     * an interruption from now on. → row count.
     */
    markStarted: `UPDATE ${jobs} SET start_known = true WHERE ${FENCE}`,

    /**
     * Fence `$1..$3`, `$4` checkpoint text (NULL: kept), `$5` steps text (NULL: kept); sets
     * `"resume": true` in `meta` and, with a checkpoint, counts it there (`checkpoints`, and
     * `checkpointAt` in epoch ms: the job timeline's, docs/checkpoints.md). → row count.
     */
    checkpoint: `UPDATE ${jobs}
      SET checkpoint = COALESCE($4::text, checkpoint), steps = COALESCE($5::text, steps),
          meta = CASE WHEN $4::text IS NOT NULL
                        THEN (COALESCE(meta::jsonb, '{}'::jsonb) || jsonb_build_object(
                          'resume', true,
                          'checkpoints', COALESCE((meta ->> 'checkpoints')::bigint, 0) + 1,
                          'checkpointAt', floor(extract(epoch FROM now()) * 1000)::bigint))::json
                      WHEN meta IS NULL THEN '{"resume":true}'::json
                      WHEN (meta -> 'resume') IS NULL
                        THEN (meta::jsonb || '{"resume":true}'::jsonb)::json
                      ELSE meta END
      WHERE ${FENCE}`,

    /** Fence `$1..$3` → `checkpoint`, `steps` of the owned row (no row: not the owner). */
    resumeRead: `SELECT checkpoint, steps FROM ${jobs} WHERE ${FENCE}`,
    /** `$1` id: clears a queued job's checkpoint, its count and its steps. → row count. */
    resumeClear: `UPDATE ${jobs} SET checkpoint = NULL, steps = NULL, updated_at = now(),
        meta = (meta::jsonb - 'checkpoints' - 'checkpointAt')::json
      WHERE id = $1::uuid AND status = 'queued'`,
    /** `$1` id → `checkpoint`, `steps` of a queued job (an operator's read). */
    resumeReadQueued: `SELECT checkpoint, steps FROM ${jobs}
      WHERE id = $1::uuid AND status = 'queued'`,

    /**
     * Fence `$1..$3`, `$4` steps text, `$5` error, `$6` frozen due time (epoch ms): the job is
     * frozen (queued, owner cleared, due far ahead; attempts untouched). → row count.
     */
    freezeStep: `UPDATE ${jobs}
      SET status = 'queued', worker_id = NULL, claim_token = NULL, steps = $4, last_error = $5,
          scheduled_at = to_timestamp($6::float8 / 1000), updated_at = now()
      WHERE ${FENCE}`,

    /**
     * `$1` id, `$2` expected steps text, `$3` new steps text, `$4` channel: an operator's answer
     * for a frozen job; due now, NOTIFYs its queue. → `queue` when it changed. The freeze's
     * `last_error` (`frozen: …`) is cleared: the job is no longer frozen; any other error stays.
     */
    stepsResolve: notifying(
      `UPDATE ${jobs} SET steps = $3, scheduled_at = now(), updated_at = now(),
          last_error = CASE WHEN last_error LIKE 'frozen:%' THEN NULL ELSE last_error END
        WHERE id = $1::uuid AND status = 'queued' AND steps = $2`,
      "$4",
    ),

    /**
     * Fence `$1..$3`, `$4` channel. The NACK field contract (docs/shutdown.md, "What each branch
     * does to a row"); NOTIFYs the queue.
     */
    nack: notifying(nackUpdate, "$4"),

    /**
     * Batched NACK of claimed, never-started rows (the prefetch window): `$1` ids uuid[], `$2`
     * worker ids text[], `$3` claim tokens uuid[], `$4` channel. The `nack` field contract, each
     * row fenced on its own; the rows are found by primary key (`id = ANY`), and each distinct
     * queue is NOTIFYed once. → `id`, `queue` of every row that changed.
     */
    nackMany: `WITH b AS (
        SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS b(id, worker_id, claim_token)
      ), moved AS (
        UPDATE ${jobs} AS j
        SET status = 'queued', worker_id = NULL, claim_token = NULL,
            updated_at = now(), scheduled_at = now()
        WHERE j.id = ANY($1::uuid[]) AND ${IS_PROCESSING}
          AND EXISTS (SELECT 1 FROM b WHERE b.id = j.id AND b.worker_id = j.worker_id
                                          AND b.claim_token = j.claim_token)
        RETURNING j.id::text AS id, ${PAYLOAD} AS queue
      ), woken AS (
        SELECT pg_notify($4, queue) FROM (SELECT DISTINCT queue FROM moved) AS q
      )
      SELECT id, queue, (SELECT count(*) FROM woken) AS notified FROM moved`,

    /**
     * Fence `$1..$3`, `$4` error, `$5` reason, `$6` whether to count an attempt. One statement:
     * the DELETE and the INSERT commit together, so the job is in exactly one table. Its dedup
     * key is released, and the move counted (`dead`, `soniq_job_counts`).
     */
    deadLetter: `WITH moved AS (DELETE FROM ${jobs} WHERE ${FENCE} RETURNING *)${releaseKeys(dedup, "moved")}${countRows(counts, "moved", "'dead'", "dead_counted")}
      ${deadLetterInsert(dead)}
      SELECT id, name, queue, args, priority,
             attempts + CASE WHEN $6::boolean THEN 1 ELSE 0 END, max_attempts, interruptions,
             scheduled_at, created_at, now(), started_at, finished_at,
             worker_id, claim_token, $4, dedup_key, $5, now(), version, meta
      FROM moved`,

    /**
     * `$1` id. One statement: the entry takes its dedup key again ({@link takeKeys}), then moves
     * (DELETE from the DLQ + INSERT as queued, due now, with its `meta` less the checkpoint
     * markers ({@link REPLAYED_META}); the insert trigger NOTIFYs). A key held by another job
     * moves nothing. → one row: `found` (the entry exists), `queue` (NULL when
     * nothing moved: the key is held).
     */
    replay: `WITH target AS (SELECT id, dedup_key FROM ${dead} WHERE id = $1::uuid FOR UPDATE)${takeKeys(
      dedup,
      "target",
    )}, moved AS (
        DELETE FROM ${dead} AS x USING target AS t
        WHERE x.id = t.id AND (t.dedup_key IS NULL OR EXISTS (SELECT 1 FROM taken))
        RETURNING x.*
      ), inserted AS (
        INSERT INTO ${jobs} (id, name, queue, args, status, priority, attempts, max_attempts,
                             interruptions, scheduled_at, created_at, updated_at, last_error,
                             dedup_key, version, meta)
        SELECT id, name, queue, args, 'queued', priority, 0, max_attempts,
               0, now(), created_at, now(), last_error, dedup_key, version, ${REPLAYED_META}
        FROM moved
        RETURNING ${PAYLOAD} AS queue
      )
      SELECT EXISTS (SELECT 1 FROM target) AS found, (SELECT queue FROM inserted) AS queue`,

    /** `$1` dead-letter id → `id` of the job holding its dedup key now. */
    replayHolder: `SELECT k.job_id::text AS id FROM ${dedup} AS k
      JOIN ${dead} AS d ON d.dedup_key = k.dedup_key WHERE d.id = $1::uuid
        AND (k.held_until IS NULL OR k.held_until > now())`,

    /**
     * `$1` id, `$2` retention seconds (<= 0: keep nothing): a queued job moves to the finished
     * jobs as `cancelled`. → one row when it did.
     */
    cancel: `WITH moved AS (
        DELETE FROM ${jobs} WHERE id = $1::uuid AND status = 'queued' RETURNING *
      )${finishMove({ finished, dedup, counts, moved: "moved", status: "cancelled", retention: "$2" })}
      SELECT id FROM moved`,

    /** `$1` id → job row, live or finished. */
    getJob: `SELECT ${JOB_COLUMNS} FROM ${jobs} WHERE id = $1::uuid
      UNION ALL (SELECT ${JOB_COLUMNS} FROM ${finished} WHERE id = $1::uuid)
      LIMIT 1`,
    /** `$1` id → dead-letter row. */
    getDeadLetter: `SELECT ${DEAD_LETTER_COLUMNS} FROM ${dead} WHERE id = $1::uuid`,

    /** → `status`, `n` (bigint as text): one row per job status present, plus `dead_letter`. */
    stats: `SELECT status, count(*) AS n FROM ${jobs} GROUP BY status
      UNION ALL ${finishedCounts(counts, false)}
      UNION ALL SELECT 'dead_letter', count(*) FROM ${dead}`,

    /**
     * → per queue: `queue`, `queued`, `processing`, `done`, `cancelled`, `dead_letter` (bigint as
     * text) and `oldest_age` (seconds, float: `now()` minus the oldest due queued row's
     * `scheduled_at`; 0 when none is due). One grouped scan of each table.
     */
    queueMetrics: `WITH live AS (
        SELECT queue, sum(queued) AS queued, sum(processing) AS processing, sum(done) AS done,
               sum(cancelled) AS cancelled, min(oldest_due) AS oldest_due
        FROM (
          SELECT queue,
            count(*) FILTER (WHERE status = 'queued') AS queued,
            count(*) FILTER (WHERE status = 'processing') AS processing,
            0 AS done, 0 AS cancelled,
            min(scheduled_at) FILTER (WHERE status = 'queued' AND scheduled_at <= now()) AS oldest_due
          FROM ${jobs} GROUP BY queue
          UNION ALL
          SELECT queue, 0, 0, CASE WHEN status = 'done' THEN n ELSE 0 END,
            CASE WHEN status = 'cancelled' THEN n ELSE 0 END, NULL
          FROM (${finishedCounts(counts, true)}) AS f
        ) AS per_table GROUP BY queue
      ), dlq AS (
        SELECT queue, count(*) AS dead_letter FROM ${dead} GROUP BY queue
      )
      SELECT coalesce(live.queue, dlq.queue) AS queue,
        coalesce(live.queued, 0)::text AS queued, coalesce(live.processing, 0)::text AS processing,
        coalesce(live.done, 0)::text AS done, coalesce(live.cancelled, 0)::text AS cancelled,
        coalesce(dlq.dead_letter, 0)::text AS dead_letter,
        coalesce(extract(epoch FROM now() - live.oldest_due), 0)::float8 AS oldest_age
      FROM live FULL JOIN dlq ON dlq.queue = live.queue
      ORDER BY 1`,

    /**
     * `$1` id, `$2` hostname, `$3` pid, `$4` queues text[] or NULL, `$5` concurrency, `$6` the
     * schema version this build knows (its newest migration), `$7` job versions jsonb
     * (name → version) or NULL. Writes the row only when the schema's newest recorded migration
     * is at least `$6` (a schema behind this build: nothing written); a lower `$6` than the
     * schema needs is refused by the table's trigger (migration 010). → one row: `schema_version`
     * (the newest migration in `soniq_migrations`, 0 when none), `registered` (1 or 0).
     */
    registerWorker: `WITH applied AS (
        SELECT coalesce(max(version), 0)::int AS schema_version FROM ${migrations}
      ), registered AS (
        INSERT INTO ${workers}
          (id, hostname, pid, queues, concurrency, status, started_at, last_heartbeat_at,
           stopped_at, schema_version, job_versions)
        SELECT $1, $2, $3, $4::text[], $5, 'running', now(), now(), NULL, $6::int, $7::jsonb
        FROM applied WHERE applied.schema_version >= $6::int
        ON CONFLICT (id) DO UPDATE SET hostname = EXCLUDED.hostname, pid = EXCLUDED.pid,
          queues = EXCLUDED.queues, concurrency = EXCLUDED.concurrency, status = 'running',
          job_versions = EXCLUDED.job_versions,
          started_at = now(), last_heartbeat_at = now(), stopped_at = NULL
        RETURNING 1
      )
      SELECT applied.schema_version, (SELECT count(*) FROM registered)::int AS registered
      FROM applied`,

    /** `$1` worker id, `$2` status. */
    heartbeat: `UPDATE ${workers} SET last_heartbeat_at = now(), status = $2 WHERE id = $1`,

    /** `$1` worker id. */
    markWorkerStopped: `UPDATE ${workers} SET status = 'stopped', stopped_at = now() WHERE id = $1`,

    /**
     * `$1` worker id, `$2` exit reason: marks the row stopped and, when it existed and was not
     * stopped yet (the row lock orders concurrent marks), counts the reason in
     * `soniq_worker_exits` — one statement, so a retried mark never counts twice.
     */
    markWorkerStoppedCounted: `WITH prev AS (
        SELECT id, status FROM ${workers} WHERE id = $1 FOR UPDATE
      ), stopped AS (
        UPDATE ${workers} AS w SET status = 'stopped', stopped_at = now()
        FROM prev WHERE w.id = prev.id RETURNING prev.status AS was
      )
      INSERT INTO ${s}.${quoteIdent("soniq_worker_exits")} AS e (exit_reason, exits, last_at)
      SELECT $2::text, 1, now() FROM stopped WHERE was <> 'stopped'
      ON CONFLICT (exit_reason) DO UPDATE SET exits = e.exits + 1, last_at = EXCLUDED.last_at`,

    /** → `exit_reason`, `exits`, `last_at`: how workers ended (`soniq_worker_exits`). */
    workerExitCounts: `SELECT exit_reason, exits::float8 AS exits, last_at
      FROM ${s}.${quoteIdent("soniq_worker_exits")}`,

    /**
     * `$1` heartbeat timeout in seconds, for workers that declared none → worker rows plus `live`
     * (judged by each worker's declared `heartbeat_timeout`), newest first.
     */
    listWorkers: `SELECT ${WORKER_COLUMNS},
        status <> 'stopped'
          AND last_heartbeat_at
            >= now() - make_interval(secs => COALESCE(heartbeat_timeout, $1::float8)) AS live
      FROM ${workers} ORDER BY started_at DESC, id`,

    /**
     * Crash recovery's read (docs/backends.md, "Shared policy and engine code"): `$1` heartbeat
     * timeout seconds for workers that declared none (NULL: a stale heartbeat is not enough, only
     * stopped or unknown owners), `$2` the caller's own incarnation (NULL: none), never touched →
     * each `processing` row whose owner is not live, as a `StaleClaim` (shared/recovery-policy.ts).
     * Locks nothing: `recoverStale` locks and re-checks each row it writes.
     */
    staleClaims: `SELECT j.id::text AS id, j.name, j.queue, j.worker_id AS "workerId",
        j.claim_token::text AS "claimToken", j.interruptions, j.start_known AS "startKnown",
        EXISTS (SELECT 1 FROM ${controls} AS c
                WHERE c.job_id = j.id AND c.cancel_claim_token = j.claim_token) AS "cancelRequested"
      FROM ${jobs} AS j
      WHERE j.status = 'processing' AND ${notInRemoteCustody(schema)}
        AND ($2::text IS NULL OR j.worker_id IS DISTINCT FROM $2::text)
        AND NOT EXISTS (
          SELECT 1 FROM ${workers} AS w
          WHERE w.id = j.worker_id AND w.status <> 'stopped'
            AND ($1::float8 IS NULL
                 OR w.last_heartbeat_at
                    >= now() - make_interval(secs => COALESCE(w.heartbeat_timeout, $1::float8))))`,

    /**
     * Crash recovery's writes, one statement for the pass: `$1` ids, `$2` worker ids, `$3` claim
     * tokens (the owners `staleClaims` read), then per row the shared policy's decision: `$4` kind
     * (`cancel`, `requeue`, `deadLetter`), `$5` interruptions, `$6` charged, `$7` `last_error`;
     * `$8` dead-letter reason, `$9` retention seconds of a cancelled row, `$10` channel. A row is
     * locked (SKIP LOCKED: one another writer holds is left to it) and written only if still as
     * read: processing, outside remote custody, same owner, a cancel request exactly when the
     * decision is `cancel`, else `start_known` = charged. Found by primary key; the cancel test is
     * `(…) IS TRUE` so that it is never a join key (test/postgres/query-plans.test.ts). Requeued
     * queues are NOTIFYed once each; dead-lettered rows are counted (`dead`, `soniq_job_counts`).
     * → `id` of each changed row.
     */
    recoverStale: `WITH b AS (
        SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::int[],
                             $6::boolean[], $7::text[])
          AS b(id, worker_id, claim_token, kind, interruptions, charged, error)
      ), locked AS (
        SELECT j.id, b.kind, b.interruptions, b.charged, b.error
        FROM ${jobs} AS j JOIN b ON b.id = j.id
        WHERE j.id = ANY(ARRAY(SELECT unnest($1::uuid[])))
          AND ${IS_PROCESSING} AND ${notInRemoteCustody(schema)}
          AND j.worker_id IS NOT DISTINCT FROM b.worker_id
          AND j.claim_token IS NOT DISTINCT FROM b.claim_token
          AND ((b.kind = 'cancel') = EXISTS (SELECT 1 FROM ${controls} AS c
                WHERE c.job_id = j.id AND c.cancel_claim_token = j.claim_token)) IS TRUE
          AND (b.kind = 'cancel' OR j.start_known = b.charged)
        FOR UPDATE OF j SKIP LOCKED
      ), cancelled AS (
        DELETE FROM ${jobs} AS j USING locked AS l WHERE j.id = l.id AND l.kind = 'cancel'
        RETURNING j.*
      )${finishMove({ finished, dedup, counts, moved: "cancelled", status: "cancelled", retention: "$9", name: "cancel" })}, moved AS (
        DELETE FROM ${jobs} AS j USING locked AS l WHERE j.id = l.id AND l.kind = 'deadLetter'
        RETURNING j.*, l.interruptions AS recovered_interruptions, l.error AS recovered_error
      )${releaseKeys(dedup, "moved")}${countRows(counts, "moved", "'dead'", "dead_counted")}, buried AS (
        ${deadLetterInsert(dead)}
        SELECT id, name, queue, args, priority, attempts, max_attempts, recovered_interruptions,
               scheduled_at, created_at, now(), started_at, finished_at, worker_id, claim_token,
               recovered_error, dedup_key, $8::text, now(), version, meta
        FROM moved
        RETURNING id
      ), requeued AS (
        UPDATE ${jobs} AS j
        SET status = 'queued', worker_id = NULL, claim_token = NULL,
            interruptions = l.interruptions,
            uncharged_recoveries = j.uncharged_recoveries + (NOT l.charged)::int,
            scheduled_at = now(), updated_at = now()
        FROM locked AS l WHERE j.id = l.id AND l.kind = 'requeue'
        RETURNING j.id, ${PAYLOAD} AS queue
      ), woken AS (
        SELECT pg_notify($10, q.queue) FROM (SELECT DISTINCT queue FROM requeued) AS q
      )
      SELECT id::text AS id, (SELECT count(*) FROM woken) AS notified FROM requeued
      UNION ALL SELECT id::text, 0 FROM cancelled
      UNION ALL SELECT id::text, 0 FROM buried`,

    /** `$1` worker id → `id`, `claim_token` of the processing rows it owns. */
    ownedBy: `SELECT id::text AS id, claim_token::text AS claim_token FROM ${jobs}
      WHERE status = 'processing' AND worker_id = $1`,

    /** `$1` seconds, `$2` limit (NULL: all): deletes worker rows not heartbeating for that long. */
    forgetWorkers: `DELETE FROM ${workers} WHERE id IN (
        SELECT id FROM ${workers}
        WHERE last_heartbeat_at < now() - make_interval(secs => $1::float8) LIMIT $2::int)`,

    /** `$1` lease name, `$2` holder, `$3` ttl seconds → a row iff `$2` holds the lease now. */
    tryLead: `INSERT INTO ${leases} (name, holder, expires_at)
      VALUES ($1, $2, now() + make_interval(secs => $3::float8))
      ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
      WHERE ${leases}.holder = EXCLUDED.holder OR ${leases}.expires_at < now()
      RETURNING holder`,

    /** `$1` lease name, `$2` holder. */
    resign: `DELETE FROM ${leases} WHERE name = $1 AND holder = $2`,

    /**
     * The first statement of a prune's transaction: locks the prune mark (`soniq_prune_mark`,
     * migration 011), waiting for the statements that remove a finished row and hold it FOR
     * SHARE ({@link markShared}); the next statement's snapshot then sees what they did.
     */
    lockMark: `SELECT expires_at FROM ${mark} FOR UPDATE`,

    /**
     * `$1` limit (NULL: all), after {@link lockMark} in the same transaction: advances the mark
     * over the next (at most `$1`) finished rows whose retention has passed, in
     * (result_expires_at, id) order — an ordered range scan of the expiry index, no row
     * written — and counts them as `<status>_gone`. They are forgotten: the view
     * `soniq_finished_jobs` no longer shows them; the pruner drops their partition later
     * (finished-partitions.ts). → one row: `pruned`, the rows passed.
     */
    pruneFinished: `WITH passed AS (
        SELECT f.result_expires_at, f.id, f.queue, f.status, f.started_at, f.scheduled_at
        FROM ${store} AS f
        WHERE (f.result_expires_at, f.id) > (SELECT m.expires_at, m.id FROM ${mark} AS m)
          AND f.result_expires_at >= (SELECT m.expires_at FROM ${mark} AS m)
          AND f.result_expires_at <= now()
        ORDER BY f.result_expires_at, f.id LIMIT $1::int
      ), last AS (
        SELECT result_expires_at, id FROM passed ORDER BY result_expires_at DESC, id DESC LIMIT 1
      ), advanced AS (
        UPDATE ${mark} AS m SET expires_at = last.result_expires_at, id = last.id
        FROM last RETURNING 1
      )${countRows(counts, "passed", "r.status || '_gone'", "uncounted")}
      SELECT (SELECT count(*) FROM passed)::int AS pruned,
             (SELECT count(*) FROM advanced)::int AS advanced`,

    /** `$1` limit (NULL: all): deletes as many dedup keys whose hold has passed. */
    pruneKeys: `DELETE FROM ${dedup} WHERE dedup_key IN (
        SELECT dedup_key FROM ${dedup} WHERE held_until <= now() LIMIT $1::int)`,

    /**
     * Folds the counters (`soniq_job_counts`): per-process rows older than two minutes into
     * writer 0 of the same minute, and minutes older than 25 hours into one row per queue and
     * kind (bucket `-infinity`), so the table stays a few thousand rows whatever the history.
     * Sums are unchanged. Run by the pruner after each prune.
     */
    foldCounts: `WITH old AS (
        DELETE FROM ${counts}
        WHERE (writer <> 0 AND bucket < now() - interval '2 minutes')
           OR (bucket > '-infinity' AND bucket < now() - interval '25 hours')
        RETURNING queue, kind,
          CASE WHEN bucket < now() - interval '25 hours' THEN '-infinity'::timestamptz
               ELSE bucket END AS bucket, n, wait_s
      )
      INSERT INTO ${counts} AS c (queue, kind, bucket, writer, n, wait_s)
      SELECT queue, kind, bucket, 0, sum(n), sum(wait_s) FROM old GROUP BY queue, kind, bucket
      ON CONFLICT (queue, kind, bucket, writer)
        DO UPDATE SET n = c.n + EXCLUDED.n, wait_s = c.wait_s + EXCLUDED.wait_s`,

    ...scheduleStatements(schema),
  };
}

/** The statements of {@link buildAdminStatements}. */
export type AdminStatements = ReturnType<typeof buildAdminStatements>;

/**
 * `j.args` as PostgreSQL can read it: its json parser turns every string into text, and text cannot
 * hold U+0000, so one `\u0000` escape anywhere in a job's arguments failed every `args.` filter
 * ("unsupported Unicode escape sequence"); nor does the parser take a lone UTF-16 surrogate
 * escape (`\ud800` not followed by a low one, or a low one alone — JSON.stringify writes a lone
 * surrogate so), which failed every `args.` filter the same way ("Unicode low surrogate must
 * follow a high surrogate"). Arguments with either are read with each such escape (preceded by an
 * even run of backslashes: a real escape, not an escaped backslash before "u0000") turned into
 * `\ufffd`; the filter's path and value get the same mapping (admin-params.ts), so U+0000 and a
 * lone surrogate compare as U+FFFD there. Arguments without one are read as they are.
 */
const ARGS_WITHOUT_NUL = String.raw`(CASE WHEN strpos(j.args::text, '\u0000') = 0
      AND j.args::text !~* '\\ud[89a-f]' THEN j.args
    ELSE regexp_replace(regexp_replace(regexp_replace(j.args::text,
      '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ufffd', 'g'),
      '(?<!\\)((?:\\\\)*)\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})', '\1\\ufffd', 'g'),
      '(?<!\\)((?:\\\\)*)(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}', '\1\\ufffd', 'g')::json END)`;

/**
 * Whether row `alias` has one of the statuses `list` (a text[] expression) as operators read
 * them (contract: `JobListStatus`): a `queued` row is `queued` when due (`scheduled_at <= now()`,
 * as a claim decides) and `scheduled` before; any other row by its stored status. Rows of the
 * finished table are never queued, so the test costs nothing there.
 */
function statusIn(alias: string, list: string): string {
  return `(CASE WHEN ${alias}.status <> 'queued' THEN ${alias}.status = ANY(${list})
    WHEN ${alias}.scheduled_at <= now() THEN 'queued' = ANY(${list})
    ELSE 'scheduled' = ANY(${list}) END)`;
}

/**
 * The job filter of the admin lists (contract: `JobFilter`, admin-store.ts), over `soniq_jobs`
 * aliased `j`. Each parameter is NULL when its filter is not given: `$1` statuses text[] (with
 * `scheduled`: see {@link statusIn}), `$2`
 * queues text[], `$3` names text[], `$4` ids uuid[], `$5` dedup key, `$6` text `last_error`
 * contains, `$7` args path text[] and `$8` the value it must equal as text, `$9`/`$10` created
 * at-or-after / before, `$11`/`$12` finished at-or-after / before.
 */
const JOB_FILTER = `($1::text[] IS NULL OR ${statusIn("j", "$1::text[]")})
  AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
  AND ($3::text[] IS NULL OR j.name = ANY($3::text[]))
  AND ($4::uuid[] IS NULL OR j.id = ANY($4::uuid[]))
  AND ($5::text IS NULL OR j.dedup_key = $5::text)
  AND ($6::text IS NULL OR strpos(j.last_error, $6::text) > 0)
  AND ($7::text[] IS NULL OR json_extract_path_text(${ARGS_WITHOUT_NUL}, VARIADIC $7::text[]) = $8::text)
  AND ($9::timestamptz IS NULL OR j.created_at >= $9::timestamptz)
  AND ($10::timestamptz IS NULL OR j.created_at < $10::timestamptz)
  AND ($11::timestamptz IS NULL OR j.finished_at >= $11::timestamptz)
  AND ($12::timestamptz IS NULL OR j.finished_at < $12::timestamptz)`;

/** The dead-letter filter: `$1` reasons, `$2` queues, `$3` names, `$4` ids uuid[], `$5`/`$6` dead at-or-after / before. */
const DEAD_FILTER = `($1::text[] IS NULL OR d.reason = ANY($1::text[]))
  AND ($2::text[] IS NULL OR d.queue = ANY($2::text[]))
  AND ($3::text[] IS NULL OR d.name = ANY($3::text[]))
  AND ($4::uuid[] IS NULL OR d.id = ANY($4::uuid[]))
  AND ($5::timestamptz IS NULL OR d.dead_at >= $5::timestamptz)
  AND ($6::timestamptz IS NULL OR d.dead_at < $6::timestamptz)`;

/**
 * Rows of each job table a listing page reads at most (`jobListOf`): a bound on the work of a
 * page whatever the history and the filter (≈ 10 ms per table on this machine).
 */
const LIST_WINDOW = 5000;

/** A timestamptz as integer microseconds since the epoch, as text (list cursors). */
const MICROS = (column: string) => `((extract(epoch FROM ${column}) * 1000000)::bigint)::text`;

/** Integer microseconds since the epoch (`param`, bigint) as a timestamptz, exactly. */
const FROM_MICROS = (param: string) =>
  `(timestamptz 'epoch' + ${param}::bigint * interval '1 microsecond')`;

/**
 * The operations statements (contract: admin-store.ts), for `schema` (already validated). Tables
 * of migration 006: `soniq_queues`, `soniq_job_controls`, `soniq_job_events`; worker columns
 * `heartbeat_timeout` (seconds), `shutdown_state`, `drain_started_at`, `deadline_at`.
 */
export function buildAdminStatements(schema: string) {
  const s = quoteIdent(schema);
  const jobs = `${s}.${quoteIdent("soniq_jobs")}`;
  const finished = `${s}.${quoteIdent("soniq_finished_jobs")}`;
  const mark = `${s}.${quoteIdent("soniq_prune_mark")}`;
  const dedup = `${s}.${quoteIdent("soniq_dedup_keys")}`;
  const counts = `${s}.${quoteIdent("soniq_job_counts")}`;
  const dead = `${s}.${quoteIdent("soniq_dead_letter_jobs")}`;
  const workers = `${s}.${quoteIdent("soniq_workers")}`;
  const queues = `${s}.${quoteIdent("soniq_queues")}`;
  const controls = `${s}.${quoteIdent("soniq_job_controls")}`;
  const events = `${s}.${quoteIdent("soniq_job_events")}`;
  const deps = `${s}.${quoteIdent("soniq_job_deps")}`;
  const nodes = `${s}.${quoteIdent("soniq_flow_nodes")}`;
  const flowEnds = `${s}.${quoteIdent("soniq_flow_ends")}`;
  /** The job tables a listing or count reads: live, finished or both (by the status filter). */
  const tablesOf = (which: JobTables) =>
    which === "live" ? [jobs] : which === "finished" ? [finished] : [jobs, finished];
  /**
   * One page of a job listing over `which` tables (contract: admin-store.ts `Page`).
   *
   * Jobs with a time-ordered id come first, by id descending. Each table is read as a **window**:
   * its next {@link LIST_WINDOW} rows below the cursor id, walked backwards on its primary key
   * (an index condition and a limit, so the plan is the same at every history size and for every
   * filter); the filter applies to the windows' rows. When a table's window is full, rows below
   * its last id were not read: the page holds only rows at or above the highest such id
   * (`bound`), and the next page starts below it — a page may then hold fewer than the limit,
   * with a cursor, when a filter matches rarely. Rows with an older id (a database older than
   * time-ordered ids) follow every other row, by `created_at` then id, from the tables'
   * `legacy_order` partial indexes, which hold nothing else. Controls are joined to the page.
   *
   * Parameters after the filter's twelve: `$13` the cursor's segment and time — `-1` for a
   * time-ordered cursor (or the first page), else the legacy cursor's `created_at` in
   * microseconds; `$14` the cursor id (the first page: the highest uuid); `$15` the limit.
   * → the page's rows (time-ordered first) with `cursor_us` (-1 for time-ordered rows), and
   * `bound` on every row (NULL when no window was cut short); an empty page is one row with only
   * `bound` set.
   */
  const jobListOf = (which: JobTables) => {
    const tables = tablesOf(which);
    // The windows read ids only: an index-only scan of the primary key, backwards.
    const windows = tables.map(
      (table, i) => `w${i} AS (
        SELECT j.id FROM ${table} AS j WHERE $13::bigint = -1 AND j.id < $14::uuid
        ORDER BY j.id DESC LIMIT ${LIST_WINDOW}
      )`,
    );
    const names = windows.map((_, i) => `w${i}`);
    const v7 = tables
      .map((table, i) =>
        table === finished
          ? // The finished jobs are partitioned by expiry (migration 011), so the id alone would
            // be looked for in every partition and the matches sorted: walk the window's (id,
            // expiry) pairs in id order instead (index-only, merged across partitions) and fetch
            // each row from its one partition, stopping at the limit.
            `(SELECT j.id AS sort_id, j.created_at AS sort_at, ${JOB_LIST_COLUMNS}
          FROM (SELECT k.id AS window_id, k.result_expires_at AS window_expires FROM ${table} AS k
                WHERE $13::bigint = -1 AND k.id < $14::uuid AND k.id >= (SELECT lo FROM bound)
                ORDER BY k.id DESC LIMIT ${LIST_WINDOW}) AS w
          CROSS JOIN LATERAL (SELECT * FROM ${table} AS f
            WHERE f.id = w.window_id AND f.result_expires_at = w.window_expires) AS j
          WHERE substr(j.id::text, 15, 1) = '7' AND ${JOB_FILTER}
          ORDER BY w.window_id DESC LIMIT $15::int)`
          : `(SELECT j.id AS sort_id, j.created_at AS sort_at, ${JOB_LIST_COLUMNS}
          FROM ${table} AS j
          WHERE j.id = ANY(ARRAY(SELECT w${i}.id FROM w${i})) AND j.id >= (SELECT lo FROM bound)
            AND substr(j.id::text, 15, 1) = '7' AND ${JOB_FILTER}
          ORDER BY j.id DESC LIMIT $15::int)`,
      )
      .join(" UNION ALL ");
    const legacy = tables
      .map(
        (table) => `(SELECT j.id AS sort_id, j.created_at AS sort_at, ${JOB_LIST_COLUMNS}
          FROM ${table} AS j
          WHERE substr(j.id::text, 15, 1) <> '7' AND ${JOB_FILTER}
            AND ($13::bigint = -1 OR (j.created_at, j.id) < (${FROM_MICROS("$13")}, $14::uuid)))`,
      )
      .join(" UNION ALL ");
    return `WITH ${windows.join(", ")}, cut AS (
        SELECT (SELECT c.b FROM (${names
          .map(
            (w) => `SELECT (SELECT ${w}.id FROM ${w} ORDER BY ${w}.id LIMIT 1) AS b
              WHERE (SELECT count(*) FROM ${w}) = ${LIST_WINDOW}`,
          )
          .join(" UNION ALL ")}) AS c ORDER BY c.b DESC LIMIT 1) AS b
      ), bound AS (
        SELECT cut.b, COALESCE(cut.b, '00000000-0000-0000-0000-000000000000'::uuid) AS lo FROM cut
      ), v7 AS (
        SELECT * FROM (${v7}) AS u ORDER BY u.sort_id DESC LIMIT $15::int
      ), legacy AS (
        SELECT * FROM (${legacy}) AS u
        WHERE (SELECT b FROM bound) IS NULL
        ORDER BY u.sort_at DESC, u.sort_id DESC LIMIT $15::int
      ), page AS (
        SELECT 0 AS seg, * FROM v7 UNION ALL SELECT 1 AS seg, * FROM legacy
      )
      SELECT p.*, ${CONTROL_COLUMNS},
        CASE WHEN p.seg = 0 THEN '-1' ELSE ${MICROS("p.sort_at")} END AS cursor_us,
        bound.b::text AS bound
      FROM bound LEFT JOIN (page AS p LEFT JOIN ${controls} AS c ON c.job_id = p.sort_id) ON true
      ORDER BY p.seg, CASE WHEN p.seg = 1 THEN p.sort_at END DESC, p.sort_id DESC
      LIMIT $15::int`;
  };
  const jobCountOf = (which: JobTables) =>
    `SELECT (${tablesOf(which)
      .map((t) => `(SELECT count(*) FROM ${t} AS j WHERE ${JOB_FILTER})`)
      .join(" + ")})::bigint AS n`;

  return {
    /**
     * {@link JOB_FILTER} `$1..$12`, then `$13` cursor micros (bigint, NULL: first page), `$14`
     * cursor id (uuid), `$15` limit → job rows without their result, plus controls and
     * `cursor_us`, newest first (see `jobListOf`). One statement per set of tables.
     */
    jobList: {
      live: jobListOf("live"),
      finished: jobListOf("finished"),
      all: jobListOf("all"),
    } satisfies Record<JobTables, string>,

    /** {@link JOB_FILTER} `$1..$12` → `n` (bigint as text), per set of tables. */
    jobCount: {
      live: jobCountOf("live"),
      finished: jobCountOf("finished"),
      all: jobCountOf("all"),
    } satisfies Record<JobTables, string>,

    /**
     * `$1` statuses text[] (with `scheduled`: `statusIn`), `$2` queues text[] (each NULL: any) →
     * `n` (bigint as text): the live
     * jobs counted, plus the finished jobs kept from the counters (never the finished table), so
     * the answer costs the same at any history size (`countableByCounters`).
     */
    jobCountByCounters: `SELECT ((SELECT count(*) FROM ${jobs} AS j
        WHERE ($1::text[] IS NULL OR ${statusIn("j", "$1::text[]")})
          AND ($2::text[] IS NULL OR j.queue = ANY($2::text[])))
      + (SELECT COALESCE(sum(f.n), 0) FROM (${finishedCounts(counts, true)}) AS f
        WHERE ($1::text[] IS NULL OR f.status = ANY($1::text[]))
          AND ($2::text[] IS NULL OR f.queue = ANY($2::text[]))))::bigint AS n`,

    /**
     * → `queue`, `status`, `n`: counts per queue × status, dead letters as `dead_letter`, queued
     * jobs not yet due (`scheduled_at > now()`, as a claim decides) as `scheduled`. One pass over
     * the live table, as before the split; the finished jobs come from the counters.
     */
    jobCountByQueueStatus: `SELECT queue,
        CASE WHEN status = 'queued' AND scheduled_at > now() THEN 'scheduled' ELSE status END
          AS status,
        count(*) AS n
      FROM ${jobs} GROUP BY 1, 2
      UNION ALL SELECT * FROM (${finishedCounts(counts, true)}) AS f WHERE f.n > 0
      UNION ALL SELECT queue, 'dead_letter', count(*) FROM ${dead} GROUP BY queue
      ORDER BY 1, 2`,

    /** `$1` id → the job row (live, else finished) plus controls. */
    jobGet: `SELECT ${JOB_COLUMNS}, ${CONTROL_COLUMNS}, ${MICROS("j.created_at")} AS cursor_us
      FROM (SELECT * FROM ${jobs} WHERE id = $1::uuid
            UNION ALL (SELECT * FROM ${finished} WHERE id = $1::uuid) LIMIT 1) AS j
      LEFT JOIN ${controls} AS c ON c.job_id = j.id`,

    /** `$1` job ids uuid[], `$2` kinds, `$3` attempts int[], `$4` worker ids, `$5` details. */
    eventsAppend: `INSERT INTO ${events} (job_id, kind, attempt, worker_id, detail)
      SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[])`,

    /** `$1` job id → its events in append order. */
    eventsList: `SELECT id::text AS seq, job_id::text AS job_id, at, kind, attempt, worker_id, detail
      FROM ${events} WHERE job_id = $1::uuid ORDER BY id`,

    /** `$1` age in seconds, `$2` limit: deletes at most that many older events. */
    eventsPrune: `DELETE FROM ${events} WHERE id IN (SELECT id FROM ${events}
      WHERE at < now() - make_interval(secs => $1::float8) LIMIT $2::int)`,

    /**
     * `$1` id, `$2` retention seconds, `$3` channel, `$4` cancel payload prefix. A queued job
     * becomes `cancelled`; a processing one gets `cancel_requested_at` and `cancel_claim_token`
     * (its current claim's token: a request binds that claim only, so a later claim of the same
     * job never inherits it), unless already requested for this claim, and its owner is NOTIFYed (`$4 || id`); the event goes in the same statement.
     * → `status` (before), `cancelled`, `requested` (0/1), or no row when there is no such job.
     */
    cancelRequest: `WITH target AS (
        SELECT id, status, worker_id, attempts FROM ${jobs} WHERE id = $1::uuid FOR UPDATE
      ), cancelled AS (
        DELETE FROM ${jobs} AS j USING target
        WHERE j.id = target.id AND target.status = 'queued'
        RETURNING j.*
      )${finishMove({ finished, dedup, counts, moved: "cancelled", status: "cancelled", retention: "$2" })}, requested AS (
        INSERT INTO ${controls} AS c (job_id, cancel_requested_at, cancel_claim_token)
        SELECT j.id, now(), j.claim_token FROM ${jobs} AS j JOIN target ON target.id = j.id
        WHERE target.status = 'processing'
        ON CONFLICT (job_id) DO UPDATE SET cancel_requested_at = now(),
          cancel_claim_token = EXCLUDED.cancel_claim_token
          WHERE c.cancel_claim_token IS DISTINCT FROM EXCLUDED.cancel_claim_token
        RETURNING job_id
      ), logged AS (
        INSERT INTO ${events} (job_id, kind, attempt, worker_id)
        SELECT id, 'cancelled', NULL, NULL FROM cancelled
        UNION ALL
        SELECT t.id, 'cancel_requested', t.attempts + 1, t.worker_id
        FROM target AS t JOIN requested AS r ON r.job_id = t.id
        RETURNING 1
      ), notified AS (
        SELECT pg_notify($3, $4::text || r.job_id::text) FROM requested AS r
      )
      SELECT t.status, (SELECT count(*) FROM cancelled) AS cancelled,
             (SELECT count(*) FROM requested) AS requested,
             (SELECT count(*) FROM notified) + (SELECT count(*) FROM logged) AS written
      FROM target AS t
      UNION ALL
      SELECT f.status, 0, 0, 0 FROM ${finished} AS f
      WHERE f.id = $1::uuid AND NOT EXISTS (SELECT 1 FROM target)`,

    /**
     * Fence `$1` id, `$2` worker, `$3` token; `$4` retention seconds. The owner records a cancel:
     * `cancelled`, finished now, attempts unchanged; appends the `cancelled` event. → a row when
     * it changed.
     */
    cancelFinish: `WITH fin AS (
        DELETE FROM ${jobs}
        WHERE id = $1::uuid AND (status = 'processing') IS TRUE AND worker_id = $2
          AND claim_token = $3::uuid
        RETURNING *
      )${finishMove({ finished, dedup, counts, moved: "fin", status: "cancelled", retention: "$4" })}
      INSERT INTO ${events} (job_id, kind, attempt, worker_id, detail)
      SELECT id, 'cancelled', attempts + 1, worker_id, 'stopped by its worker' FROM fin
      RETURNING job_id`,

    /**
     * `$1` id, `$2` channel. Run now: a job that is not processing (nor waiting for its
     * dependencies: workflows, answered as processing) goes to `queued`, due now
     * (result, owner and finish cleared, attempts kept, controls dropped); NOTIFYs its queue. A
     * finished job moves back into `soniq_jobs` and takes its dedup key again (free, passed, or
     * its own); a key another job holds moves nothing. A finished batch member run again is
     * not ended in its batch any more (counted as pending again, no longer failed: its next end
     * counts once, as a replayed member's). → `status` (before), `moved` (0/1),
     * `queue`, `holder_id` (the job holding the key when that refused the move); no row when
     * there is no such job.
     */
    retryNow: `WITH live AS (SELECT id, status FROM ${jobs} WHERE id = $1::uuid FOR UPDATE)${markShared(mark)},
      fin AS (SELECT id, status, dedup_key FROM ${finished} AS f
              WHERE id = $1::uuid AND ${aboveSharedMark("f")} FOR UPDATE OF f),
      target AS (SELECT * FROM live
                 UNION ALL SELECT id, status FROM fin WHERE NOT EXISTS (SELECT 1 FROM live)),
      keyed AS (SELECT id, dedup_key FROM fin WHERE NOT EXISTS (SELECT 1 FROM live))${takeKeys(
        dedup,
        "keyed",
      )}, requeued AS (
        UPDATE ${jobs} AS j
        SET status = 'queued', scheduled_at = now(), updated_at = now(), finished_at = NULL,
            result = NULL, result_expires_at = NULL, worker_id = NULL, claim_token = NULL
        FROM live WHERE j.id = live.id AND live.status <> 'processing'
          AND j.scheduled_at <> '${PG_WAITING_AT}'::timestamptz
        RETURNING j.id, j.queue
      ), revived AS (
        DELETE FROM ${finished} AS f USING fin
        WHERE f.id = fin.id AND NOT EXISTS (SELECT 1 FROM live)
          AND (fin.dedup_key IS NULL OR EXISTS (SELECT 1 FROM taken))
        RETURNING f.*
      )${countRows(counts, "revived", "r.status || '_gone'", "uncounted")}, reinserted AS (
        ${copyJobRows(jobs, "revived", {
          status: "'queued'",
          scheduled_at: "now()",
          updated_at: "now()",
          finished_at: "NULL",
          result: "NULL",
          result_expires_at: "NULL",
          worker_id: "NULL",
          claim_token: "NULL",
          checkpoint: "NULL",
          steps: "NULL",
          meta: "(meta::jsonb - 'checkpoints' - 'checkpointAt')::json",
        })}
        RETURNING id, queue
      ), rearmed AS (
        UPDATE ${nodes} AS b SET members_left = b.members_left + 1,
          members_failed = GREATEST(b.members_failed - (r.status <> 'done')::int, 0)
        FROM revived AS r, ${nodes} AS m
        WHERE m.job_id = r.id AND m.role = 'member' AND b.job_id = m.flow_id AND b.role = 'batch'
        RETURNING 1
      ), moved AS (SELECT * FROM requeued UNION ALL SELECT * FROM reinserted), cleared AS (
        DELETE FROM ${controls} WHERE job_id IN (SELECT id FROM moved) RETURNING 1
      ), logged AS (
        INSERT INTO ${events} (job_id, kind) SELECT id, 'run_now' FROM moved RETURNING 1
      ), woken AS (SELECT pg_notify($2, queue) FROM moved)
      SELECT t.status, (SELECT count(*) FROM moved) AS moved,
             (SELECT queue FROM moved LIMIT 1) AS queue,
             (SELECT count(*) FROM woken) + (SELECT count(*) FROM cleared)
               + (SELECT count(*) FROM logged) AS written,
             (SELECT k.job_id::text FROM ${dedup} AS k JOIN fin ON k.dedup_key = fin.dedup_key
              WHERE NOT EXISTS (SELECT 1 FROM taken)
                AND (k.held_until IS NULL OR k.held_until > now())) AS holder_id
      FROM target AS t`,

    /**
     * `$1` id: deletes a job that is not processing, with its controls; appends `deleted`. A
     * deleted live job ends `cancelled` for its workflow, as a cancel would (workflows): the
     * edges of the jobs waiting for it (migration 024's edge trigger applies each dependant's
     * failure policy in this statement), its batch's count-down when it is a member (migration
     * 022's trigger on the batch's row records the finish when it was the last), its flow's
     * finish when it is the root.
     * → `status` (before), `gone` (0/1); no row when there is no such job.
     */
    jobDelete: `WITH live AS (SELECT id, status FROM ${jobs} WHERE id = $1::uuid FOR UPDATE)${markShared(mark)},
      fin AS (SELECT id, status FROM ${finished} AS f
              WHERE id = $1::uuid AND ${aboveSharedMark("f")} FOR UPDATE OF f),
      target AS (SELECT * FROM live UNION ALL SELECT * FROM fin WHERE NOT EXISTS (SELECT 1 FROM live)),
      gone_live AS (
        DELETE FROM ${jobs} AS j USING live
        WHERE j.id = live.id AND live.status <> 'processing' RETURNING j.id, j.dedup_key
      ), gone_finished AS (
        DELETE FROM ${finished} AS f USING fin
        WHERE f.id = fin.id AND NOT EXISTS (SELECT 1 FROM live)
        RETURNING f.id, f.dedup_key, f.queue, f.status, f.started_at, f.scheduled_at
      )${countRows(counts, "gone_finished", "r.status || '_gone'", "uncounted")},
      gone AS (SELECT id, dedup_key FROM gone_live
               UNION ALL SELECT id, dedup_key FROM gone_finished)${releaseKeys(
                 dedup,
                 "gone",
               )}, cleared AS (
        DELETE FROM ${controls} WHERE job_id IN (SELECT id FROM gone) RETURNING 1
      ), logged AS (
        INSERT INTO ${events} (job_id, kind) SELECT id, 'deleted' FROM gone RETURNING 1
      ), counted_down AS (
        UPDATE ${nodes} AS b SET members_left = b.members_left - 1,
          members_failed = b.members_failed + 1
        FROM ${nodes} AS m
        WHERE m.job_id IN (SELECT id FROM gone_live) AND m.role = 'member'
          AND b.job_id = m.flow_id AND b.role = 'batch'
        RETURNING 1
      ), root_ended AS (
        INSERT INTO ${flowEnds} (kind, id, outcome)
        SELECT 'flow', m.job_id, 'cancelled' FROM ${nodes} AS m
        WHERE m.job_id IN (SELECT id FROM gone_live) AND m.flow_id = m.job_id AND m.role = 'job'
        RETURNING 1
      ), ended AS (
        UPDATE ${deps} SET dep_state = 'cancelled'
        WHERE dep_id IN (SELECT id FROM gone_live) AND dep_state IS NULL RETURNING 1
      )
      SELECT t.status, (SELECT count(*) FROM gone) AS gone,
             (SELECT count(*) FROM cleared) + (SELECT count(*) FROM logged) AS written
      FROM target AS t`,

    /**
     * {@link DEAD_FILTER} `$1..$6`, `$7` cursor micros (NULL: first page), `$8` cursor id, `$9`
     * limit → dead-letter rows plus `cursor_us`, newest `dead_at` first.
     */
    deadLetterList: `SELECT ${DEAD_LETTER_COLUMNS}, ${MICROS("d.dead_at")} AS cursor_us
      FROM ${dead} AS d
      WHERE ${DEAD_FILTER}
        AND ($7::bigint IS NULL OR (d.dead_at, d.id) < (${FROM_MICROS("$7")}, $8::uuid))
      ORDER BY d.dead_at DESC, d.id DESC LIMIT $9::int`,

    /** {@link DEAD_FILTER} `$1..$6` → `n`. */
    deadLetterCount: `SELECT count(*) AS n FROM ${dead} AS d WHERE ${DEAD_FILTER}`,

    /** Every dead letter by reason. → `reason`, `n` (bigint text) each. */
    deadLetterCountByReason: `SELECT reason, count(*) AS n FROM ${dead} GROUP BY reason`,

    /** `$1` ids uuid[]: deletes those dead letters, appending `deleted` events. → `id` each. */
    deadLetterDelete: `WITH gone AS (DELETE FROM ${dead} WHERE id = ANY($1::uuid[]) RETURNING id)
      INSERT INTO ${events} (job_id, kind, detail)
      SELECT id, 'deleted', 'from the dead-letter queue' FROM gone RETURNING job_id`,

    /** `$1` age seconds, `$2` limit: deletes at most that many older dead letters. */
    deadLetterPrune: `DELETE FROM ${dead} WHERE id IN (SELECT id FROM ${dead}
      WHERE dead_at < now() - make_interval(secs => $1::float8) LIMIT $2::int)`,

    /** `$1` limit: deletes controls whose job is gone (pruned or moved to the DLQ). */
    controlsPrune: `DELETE FROM ${controls} WHERE job_id IN (
        SELECT c.job_id FROM ${controls} AS c
        WHERE NOT EXISTS (SELECT 1 FROM ${jobs} AS j WHERE j.id = c.job_id)
          AND NOT EXISTS (SELECT 1 FROM ${finished} AS f WHERE f.id = c.job_id)
        LIMIT $1::int)`,

    /**
     * → per queue with jobs or a configuration row: `name`, `paused`, `max_running`,
     * `unclaimable_after`, `updated_at`, `queued`, `processing`, `oldest_due_s` (seconds the oldest due queued job has
     * waited), by name.
     */
    /**
     * `$1` limit → `key`, `n` (live starts), `next_at` (earliest live start's expiry), `until`
     * (key pause end): keys with live starts or a pause, most starts first.
     */
    rateKeyList: `WITH st AS (SELECT key, count(*) AS n, min(expires_at) AS next_at
          FROM ${s}.${quoteIdent("soniq_rate_starts")} WHERE expires_at > now() GROUP BY key),
        ps AS (SELECT key, until FROM ${s}.${quoteIdent("soniq_rate_pauses")} WHERE until > now()),
        ks AS (SELECT key FROM st UNION SELECT key FROM ps)
      SELECT ks.key, COALESCE(st.n, 0) AS n, st.next_at, ps.until
      FROM ks LEFT JOIN st ON st.key = ks.key LEFT JOIN ps ON ps.key = ks.key
      ORDER BY COALESCE(st.n, 0) DESC, ks.key LIMIT $1::int`,

    /**
     * `$1` queue (NULL: every queue) → per queue and key with queued or processing keyed jobs:
     * `queue`, `key`, `due` (due queued jobs there), `running` (the key's processing jobs in every
     * queue), `lim`, `rate_lim` (smallest limits of its jobs there), `started` (live starts),
     * `next_at` (earliest live start's expiry), `until` (key pause end). Each half of the union
     * reads one keyed partial index.
     */
    keyFlowList: `WITH j AS (
        SELECT k.queue, ${pgKeyOf("k")} AS key, k.scheduled_at <= now() AS due,
               ${pgLimitOf("k")} AS lim, ${pgRateLimitOf("k")} AS rate_lim
        FROM ${jobs} AS k WHERE k.status = 'queued' AND ${pgKeyed("k")}
          AND ($1::text IS NULL OR k.queue = $1::text)
        UNION ALL
        SELECT k.queue, ${pgKeyOf("k")}, false, ${pgLimitOf("k")}, ${pgRateLimitOf("k")}
        FROM ${jobs} AS k WHERE k.status = 'processing' AND ${pgKeyed("k")}
          AND ($1::text IS NULL OR k.queue = $1::text)
      ), kq AS (
        SELECT queue, key, count(*) FILTER (WHERE due) AS due, min(lim) AS lim,
               min(rate_lim) AS rate_lim
        FROM j GROUP BY queue, key
      ), run AS (
        SELECT ${pgKeyOf("r")} AS key, count(*) AS n FROM ${jobs} AS r
        WHERE r.status = 'processing' AND ${pgKeyed("r")} GROUP BY 1
      ), st AS (SELECT key, count(*) AS n, min(expires_at) AS next_at
          FROM ${s}.${quoteIdent("soniq_rate_starts")} WHERE expires_at > now() GROUP BY key),
        ps AS (SELECT key, until FROM ${s}.${quoteIdent("soniq_rate_pauses")} WHERE until > now())
      SELECT kq.queue, kq.key, kq.due, COALESCE(run.n, 0) AS running, kq.lim, kq.rate_lim,
             COALESCE(st.n, 0) AS started, st.next_at, ps.until
      FROM kq LEFT JOIN run ON run.key = kq.key LEFT JOIN st ON st.key = kq.key
        LEFT JOIN ps ON ps.key = kq.key`,

    queueList: `WITH names AS (SELECT name FROM ${queues} UNION SELECT DISTINCT queue FROM ${jobs}
        UNION SELECT f.queue FROM (${finishedCounts(counts, true)}) AS f WHERE f.n > 0),
      counts AS (
        SELECT queue, count(*) FILTER (WHERE status = 'queued') AS queued,
               count(*) FILTER (WHERE status = 'processing') AS processing,
               min(scheduled_at) FILTER (WHERE status = 'queued' AND scheduled_at <= now()) AS due
        FROM ${jobs} WHERE status IN ('queued', 'processing') GROUP BY queue
      )
      SELECT n.name, COALESCE(${pgQueuePaused("q")}, false) AS paused,
             CASE WHEN ${pgQueuePaused("q")} THEN q.paused_until END AS paused_until,
             q.max_running, q.unclaimable_after,
             q.updated_at, COALESCE(c.queued, 0) AS queued, COALESCE(c.processing, 0) AS processing,
             COALESCE(extract(epoch FROM now() - c.due)::float8, 0) AS oldest_due_s
      FROM names AS n LEFT JOIN ${queues} AS q ON q.name = n.name
      LEFT JOIN counts AS c ON c.queue = n.name
      ORDER BY n.name`,

    /**
     * `$1` window seconds, `$2` queue (NULL: every queue) → `since` (the window's first minute),
     * `until` (now), then per minute that counted anything, oldest first: `minute`, `done`,
     * `failed`, `dead`, `cancelled` (bigint as text), `wait_s` (seconds from due to start summed
     * over the done jobs). An empty window is one row whose `minute` is NULL. Reads only
     * `soniq_job_counts` (its primary key leads with the queue), never a job table.
     */
    queueHistory: `WITH w AS (
        SELECT now() AS until, date_trunc('minute', now() - make_interval(secs => $1::float8)) AS since
      ), p AS (
        SELECT c.bucket AS minute,
          COALESCE(sum(c.n) FILTER (WHERE c.kind = 'done'), 0)::text AS done,
          COALESCE(sum(c.n) FILTER (WHERE c.kind = 'failed'), 0)::text AS failed,
          COALESCE(sum(c.n) FILTER (WHERE c.kind = 'dead'), 0)::text AS dead,
          COALESCE(sum(c.n) FILTER (WHERE c.kind = 'cancelled'), 0)::text AS cancelled,
          COALESCE(sum(c.wait_s) FILTER (WHERE c.kind = 'done'), 0)::float8 AS wait_s
        FROM ${counts} AS c, w
        WHERE c.bucket >= w.since AND c.kind IN ('done', 'failed', 'dead', 'cancelled')
          AND ($2::text IS NULL OR c.queue = $2::text)
        GROUP BY c.bucket
      )
      SELECT w.since, w.until, p.* FROM w LEFT JOIN p ON true ORDER BY p.minute`,

    /**
     * `$1` name, `$2` paused (NULL: keep), `$3` whether to set max_running, `$4` max_running
     * (NULL: no limit), `$5` channel, `$6` whether to set unclaimable_after, `$7` its seconds
     * (NULL: off): upserts the configuration and NOTIFYs the queue (a resume
     * or a raised limit lets workers claim at once). → `name`.
     */
    queueSet: `WITH up AS (
        INSERT INTO ${queues} AS q (name, paused, max_running, unclaimable_after, updated_at)
        VALUES ($1, COALESCE($2::boolean, false), CASE WHEN $3::boolean THEN $4::int END,
                CASE WHEN $6::boolean THEN $7::int END, now())
        ON CONFLICT (name) DO UPDATE SET
          paused = COALESCE($2::boolean, q.paused),
          paused_until = CASE WHEN $2::boolean IS NULL THEN q.paused_until END,
          max_running = CASE WHEN $3::boolean THEN $4::int ELSE q.max_running END,
          unclaimable_after = CASE WHEN $6::boolean THEN $7::int ELSE q.unclaimable_after END,
          updated_at = now()
        RETURNING name
      )
      SELECT name, pg_notify($5, name) FROM up`,

    /** `$1` worker id, `$2` job versions jsonb (name → version). */
    workerRecordJobs: `UPDATE ${workers} SET job_versions = $2::jsonb WHERE id = $1`,

    /**
     * `$1` default heartbeat timeout seconds → per live worker: `id`, `queues`, `job_versions`
     * (jsonb; NULL for a worker of an earlier release).
     */
    workerCapabilities: `SELECT id, queues, job_versions FROM ${workers}
      WHERE status <> 'stopped'
        AND last_heartbeat_at >= now() - make_interval(secs => COALESCE(heartbeat_timeout, $1::float8))`,

    /**
     * → the distinct (queue, name, version) of queued rows, in that order: a recursive skip-scan
     * of soniq_jobs_waiting_idx (one index probe per group, whatever the backlog).
     */
    queuedGroups: `WITH RECURSIVE g AS (
        (SELECT queue, name, version FROM ${jobs} WHERE status = 'queued'
         ORDER BY queue, name, version LIMIT 1)
        UNION ALL
        SELECT n.queue, n.name, n.version FROM g, LATERAL (
          SELECT j.queue, j.name, j.version FROM ${jobs} AS j
          WHERE j.status = 'queued' AND (j.queue, j.name, j.version) > (g.queue, g.name, g.version)
          ORDER BY j.queue, j.name, j.version LIMIT 1) AS n
      )
      SELECT queue, name, version FROM g`,

    /**
     * `$1` queues text[], `$2` names text[], `$3` versions int[] (zipped) → per group with due
     * queued rows: `queue`, `name`, `version`, `n` (bigint as text), `oldest_s` (seconds since the
     * oldest became due), each from its own range of soniq_jobs_waiting_idx.
     */
    queuedGroupCounts: `SELECT g.queue, g.name, g.version, c.n::text AS n, c.oldest_s
      FROM unnest($1::text[], $2::text[], $3::int[]) AS g(queue, name, version),
      LATERAL (
        SELECT count(*) AS n, extract(epoch FROM now() - min(j.scheduled_at))::float8 AS oldest_s
        FROM ${jobs} AS j
        WHERE j.status = 'queued' AND j.queue = g.queue AND j.name = g.name
          AND j.version = g.version AND j.scheduled_at <= now()
      ) AS c
      WHERE c.n > 0`,

    /**
     * `$1` queue, `$2` name, `$3` version, `$4` seconds due for at least, `$5` error, `$6` reason,
     * `$7` limit: moves those queued rows (oldest due first; rows locked elsewhere are skipped)
     * to the DLQ in one statement, releasing their dedup keys and counting them (`dead`). → `id`.
     */
    deadLetterQueued: `WITH picked AS (
        SELECT id FROM ${jobs}
        WHERE status = 'queued' AND queue = $1 AND name = $2 AND version = $3::int
          AND scheduled_at <= now() - make_interval(secs => $4::float8)
        ORDER BY scheduled_at LIMIT $7::int FOR UPDATE SKIP LOCKED
      ), moved AS (
        DELETE FROM ${jobs} AS j USING picked AS p WHERE j.id = p.id AND j.status = 'queued'
        RETURNING j.*
      )${releaseKeys(dedup, "moved")}${countRows(counts, "moved", "'dead'", "dead_counted")}
      ${deadLetterInsert(dead)}
      SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions,
             scheduled_at, created_at, now(), started_at, finished_at,
             worker_id, claim_token, $5, dedup_key, $6, now(), version, meta
      FROM moved
      RETURNING id::text AS id`,

    /** `$1` worker id, `$2` heartbeat timeout seconds. */
    workerDeclare: `UPDATE ${workers} SET heartbeat_timeout = $2::float8 WHERE id = $1`,

    /**
     * The heartbeat: `$1` worker id, `$2` status, `$3` shutdown state, `$4` seconds since the
     * drain started (NULL: none), `$5` seconds to the deadline (NULL: none), then progress:
     * `$6` ids uuid[], `$7` claim tokens uuid[], `$8` fractions float8[], `$9` messages text[]
     * (each fenced on its claim). → `id` of its processing jobs with a cancel request.
     */
    workerBeat: `WITH beat AS (
        UPDATE ${workers}
        SET last_heartbeat_at = now(), status = $2, shutdown_state = $3,
            drain_started_at = now() - make_interval(secs => $4::float8),
            deadline_at = now() + make_interval(secs => $5::float8)
        WHERE id = $1 RETURNING id
      ), progressed AS (
        INSERT INTO ${controls} AS c (job_id, progress, progress_message, progress_at)
        SELECT p.id, p.fraction, p.message, now()
        FROM ${batchRows(["$6::uuid[]", "$7::uuid[]", "$8::float8[]", "$9::text[]"])}
          AS p(id, token, fraction, message)
        JOIN ${jobs} AS j ON j.id = p.id AND (j.status = 'processing') IS TRUE AND j.worker_id = $1 AND j.claim_token = p.token
        ON CONFLICT (job_id) DO UPDATE SET progress = EXCLUDED.progress,
          progress_message = EXCLUDED.progress_message, progress_at = now()
        RETURNING 1
      )
      SELECT j.id::text AS id FROM ${jobs} AS j JOIN ${controls} AS c ON c.job_id = j.id
      WHERE j.status = 'processing' AND j.worker_id = $1 AND c.cancel_claim_token = j.claim_token`,

    /**
     * `$1` default heartbeat timeout seconds (for workers that declared none) → worker rows plus
     * `age_s`, `live` and `in_flight` (ids of the processing rows each owns), newest first.
     */
    workerList: `SELECT ${WORKER_COLUMNS},
        extract(epoch FROM now() - w.last_heartbeat_at)::float8 AS age_s,
        w.status <> 'stopped' AND w.last_heartbeat_at >= now()
          - make_interval(secs => COALESCE(w.heartbeat_timeout, $1::float8)) AS live,
        ARRAY(SELECT j.id::text FROM ${jobs} AS j
              WHERE j.status = 'processing' AND j.worker_id = w.id ORDER BY j.started_at) AS in_flight
      FROM ${workers} AS w ORDER BY w.started_at DESC, w.id`,
  };
}
