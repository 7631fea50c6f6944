/**
 * The PostgreSQL statements of the submission store (remote jobs), built once per schema. They
 * are written with named parameters (`@name`) and compiled to positional ones by {@link named};
 * each runs inside the store's transaction, where `now()` is the transaction's one instant.
 * Durations are seconds. The job-row fence is `@id`, `@workerId`, `@claimToken`.
 */
import { finishMove } from "./finish-sql.js";
import { quoteIdent } from "./identifiers.js";
import { claimedColumns } from "./rows.js";

/** A statement with named parameters compiled to `$n`, and the order of its parameter names. */
export interface NamedStatement {
  text: string;
  names: readonly string[];
}

/** Compiles `@name` parameters to `$1…$n` (each distinct name once). */
export function named(text: string): NamedStatement {
  const names: string[] = [];
  const compiled = text.replace(/@([a-zA-Z]+)/g, (_, name: string) => {
    let index = names.indexOf(name);
    if (index < 0) index = names.push(name) - 1;
    return `$${index + 1}`;
  });
  return { text: compiled, names };
}

/** The values of `statement`'s parameters from `params`, in order (missing → NULL). */
export function valuesOf(statement: NamedStatement, params: Record<string, unknown>): unknown[] {
  return statement.names.map((name) => params[name] ?? null);
}

/** The submission statements of {@link buildSubmissionStatements}. */
export type SubmissionStatements = ReturnType<typeof buildSubmissionStatements>;

/** Builds the submission statements for `schema` (already validated). */
export function buildSubmissionStatements(schema: string) {
  const s = quoteIdent(schema);
  const subs = `${s}.${quoteIdent("soniq_remote_submissions")}`;
  const early = `${s}.${quoteIdent("soniq_remote_early_answers")}`;
  const jobs = `${s}.${quoteIdent("soniq_jobs")}`;
  const finished = `${s}.${quoteIdent("soniq_finished_jobs")}`;
  const dedup = `${s}.${quoteIdent("soniq_dedup_keys")}`;
  const counts = `${s}.${quoteIdent("soniq_job_counts")}`;
  /** The job of submission `s`, live or finished, as `j` (for a LEFT JOIN … ON true). */
  const jobOf = `LATERAL (SELECT status, worker_id, attempts, last_error FROM ${jobs} WHERE id = s.job_id
      UNION ALL (SELECT status, worker_id, attempts, last_error FROM ${finished} WHERE id = s.job_id)
      LIMIT 1) AS j`;
  const workers = `${s}.${quoteIdent("soniq_workers")}`;
  const dead = `${s}.${quoteIdent("soniq_dead_letter_jobs")}`;
  const owned =
    "id = @id::uuid AND status = 'processing' AND worker_id = @workerId AND claim_token = @claimToken::uuid";
  const record = `s.job_id::text AS job_id, s.job_name, s.queue, s.phase, s.generation, s.task_id,
    s.submitted_at, s.accepted_at, s.frozen_at, s.frozen_reason, s.due_at, s.polls, s.answer,
    s.updated_at, j.status AS job_status, j.worker_id AS job_worker_id,
    j.attempts AS job_attempts, j.last_error AS job_last_error`;
  const custody = "('submitting', 'accepted', 'frozen')";
  return {
    /** Locks the job row iff the owner holds it → `queue`. */
    ownedJob: named(`SELECT queue FROM ${jobs} WHERE ${owned} FOR UPDATE`),
    /** Locks an unowned processing job row → `queue`. */
    unownedJob: named(`SELECT queue FROM ${jobs}
      WHERE id = @id::uuid AND status = 'processing' AND worker_id IS NULL FOR UPDATE`),
    /** → `status` of the job, live or finished. */
    jobStatus: named(`SELECT status FROM ${jobs} WHERE id = @id::uuid
      UNION ALL (SELECT status FROM ${finished} WHERE id = @id::uuid) LIMIT 1`),
    /** Locks the submission row → `phase`, `generation`, `answer`, `job_name`, `queue`. */
    phase: named(`SELECT phase, generation, answer, job_name, queue FROM ${subs}
      WHERE job_id = @id::uuid FOR UPDATE`),
    /** Serialises admission decisions of one job name (transaction-scoped advisory lock). */
    admissionLock: named(
      `SELECT pg_advisory_xact_lock(hashtext(${quoteLiteral(schema)} || ':remote:' || @name))`,
    ),
    /** → `in_flight`, `last_minute` of the other submissions of `@name`. */
    admissionCounts: named(`SELECT
        count(*) FILTER (WHERE phase = 'submitting')::int AS in_flight,
        count(*) FILTER (WHERE submitted_at > now() - interval '60 seconds')::int AS last_minute
      FROM ${subs} WHERE job_name = @name AND job_id <> @id::uuid`),
    /** Phase `submitting` (insert, or from `released`) → `generation`. */
    markSubmitting: named(`INSERT INTO ${subs} (job_id, job_name, queue, phase, generation,
        submitted_at, updated_at)
      VALUES (@id::uuid, @name, @queue, 'submitting', 1, now(), now())
      ON CONFLICT (job_id) DO UPDATE SET phase = 'submitting', task_id = NULL,
        submitted_at = now(), accepted_at = NULL, frozen_at = NULL, frozen_reason = NULL,
        due_at = NULL, polls = 0, updated_at = now()
      WHERE ${subs}.phase = 'released'
      RETURNING generation`),
    /** Takes the early answer of `@taskId` → `job_name`, `answer`. */
    takeEarly: named(`DELETE FROM ${early} WHERE task_id = @taskId
      AND (job_name IS NULL OR job_name = @name) RETURNING answer`),
    /** Keeps an early answer (first one wins). */
    insertEarly: named(`INSERT INTO ${early} (task_id, job_name, answer)
      VALUES (@taskId, @name, @answer) ON CONFLICT (task_id) DO NOTHING`),
    /** `accepted` from submitting/frozen; due in `@delay` s, or now with an answer. */
    accept: named(`UPDATE ${subs} SET phase = 'accepted', task_id = @taskId, accepted_at = now(),
        frozen_at = NULL, frozen_reason = NULL, answer = @answer,
        due_at = CASE WHEN @answer::text IS NULL
          THEN now() + make_interval(secs => @delay::float8) ELSE now() END,
        updated_at = now()
      WHERE job_id = @id::uuid AND phase IN ('submitting', 'frozen')`),
    /** Clears the owner of an owned processing row. */
    clearOwner: named(`UPDATE ${jobs} SET worker_id = NULL, claim_token = NULL, updated_at = now()
      WHERE ${owned}`),
    /** `submitting` → `frozen`, due now. */
    freeze: named(`UPDATE ${subs} SET phase = 'frozen', frozen_at = now(),
        frozen_reason = @reason, due_at = now(), updated_at = now()
      WHERE job_id = @id::uuid AND phase = 'submitting'`),
    /** Custody → `released`; `@bump` 0/1. */
    release: named(`UPDATE ${subs} SET phase = 'released', generation = generation + @bump::int,
        task_id = NULL, answer = NULL, due_at = NULL, updated_at = now()
      WHERE job_id = @id::uuid AND phase IN ${custody}`),
    /** The NACK of an owned row (queued, due now, attempts kept). */
    requeueJob: named(`UPDATE ${jobs} SET status = 'queued', worker_id = NULL, claim_token = NULL,
        scheduled_at = now(), updated_at = now()
      WHERE ${owned}`),
    /** Requeues an unowned processing row (operator: not submitted). */
    requeueUnowned: named(`UPDATE ${jobs} SET status = 'queued', scheduled_at = now(),
        updated_at = now()
      WHERE id = @id::uuid AND status = 'processing' AND worker_id IS NULL`),
    /** Custody → `finished`. */
    finish: named(`UPDATE ${subs} SET phase = 'finished', due_at = NULL, updated_at = now()
      WHERE job_id = @id::uuid AND phase IN ${custody}`),
    /** Job `done`, fenced. */
    completeJob: named(`WITH moved AS (DELETE FROM ${jobs} WHERE ${owned} RETURNING *)${finishMove({
      finished,
      dedup,
      counts,
      moved: "moved",
      status: "done",
      retention: "@retention",
      set: { attempts: "attempts + 1", result: "@result::json" },
    })}
      SELECT id FROM moved`),
    /**
     * Picks and owns due unowned rows in custody → the claimed columns (`CLAIMED_COLUMNS`) +
     * submission columns.
     */
    claimDue: named(`WITH due AS (
        SELECT s.job_id FROM ${subs} AS s JOIN ${jobs} AS j ON j.id = s.job_id
        WHERE s.phase IN ('accepted', 'frozen') AND s.due_at <= now()
          AND j.status = 'processing' AND j.worker_id IS NULL
          AND ((s.phase = 'accepted' AND s.job_name = ANY(@names::text[]))
            OR (s.phase = 'frozen' AND (s.job_name = ANY(@reconcilable::text[])
              OR (s.answer IS NOT NULL AND s.job_name = ANY(@names::text[])))))
        ORDER BY s.due_at, s.job_id LIMIT @limit::int
        FOR UPDATE OF j SKIP LOCKED
      ), taken AS (
        UPDATE ${jobs} AS j SET worker_id = @workerId, claim_token = gen_random_uuid(),
          updated_at = now()
        FROM due WHERE j.id = due.job_id
        RETURNING ${claimedColumns("j")}
      )
      SELECT t.*, s.phase, s.task_id, s.generation, s.accepted_at, s.polls, s.answer
      FROM taken AS t JOIN ${subs} AS s ON s.job_id = t.id::uuid
      ORDER BY s.due_at, s.job_id`),
    /** Next due time of a row in custody; `@count` 0/1 polls. */
    reschedule: named(`UPDATE ${subs} SET due_at = now() + make_interval(secs => @delay::float8),
        polls = polls + @count::int, updated_at = now()
      WHERE job_id = @id::uuid AND phase IN ('accepted', 'frozen')`),
    /** → `job_id`, `job_name` of submissions with `@taskId`. */
    byTask: named(`SELECT job_id::text AS job_id, job_name FROM ${subs} WHERE task_id = @taskId`),
    /** Stores an answer (first wins); due now unless submitting. */
    storeAnswer: named(`UPDATE ${subs} SET answer = @answer,
        due_at = CASE WHEN phase = 'submitting' THEN due_at ELSE now() END, updated_at = now()
      WHERE job_id = @id::uuid AND answer IS NULL AND phase IN ${custody}`),
    /** Operator: frozen → accepted, due now. */
    resolveAccepted: named(`UPDATE ${subs} SET phase = 'accepted', task_id = @taskId,
        accepted_at = now(), frozen_at = NULL, frozen_reason = NULL, due_at = now(),
        updated_at = now()
      WHERE job_id = @id::uuid AND phase = 'frozen'`),
    /** Operator: frozen → released (same key). */
    resolveReleased: named(`UPDATE ${subs} SET phase = 'released', task_id = NULL, answer = NULL,
        due_at = NULL, updated_at = now()
      WHERE job_id = @id::uuid AND phase = 'frozen'`),
    /** Operator: frozen with a failed answer, due now. */
    resolveFailed: named(`UPDATE ${subs} SET answer = @answer, due_at = now(), updated_at = now()
      WHERE job_id = @id::uuid AND phase = 'frozen'`),
    /** Poll now (unowned accepted or frozen; `@needsAnswer`: a frozen one only with an answer). */
    pollNow: named(`UPDATE ${subs} AS s SET due_at = now(), updated_at = now()
      FROM ${jobs} AS j
      WHERE s.job_id = @id::uuid AND s.phase IN ('accepted', 'frozen') AND j.id = s.job_id
        AND (s.phase = 'accepted' OR NOT @needsAnswer::boolean OR s.answer IS NOT NULL)
        AND j.status = 'processing' AND j.worker_id IS NULL`),
    /**
     * Crash recovery by phase, one statement: rows in custody whose owner is set and not live →
     * owner cleared; `submitting` → `frozen` (reason `crash`); all due now. `@timeout` seconds
     * (NULL: only stopped or unknown owners); a worker's own declared `heartbeat_timeout` wins
     * over it (issue 14's rule, as in `staleClaims`). `@live`: the caller's own incarnation,
     * never treated as not live (NULL: none).
     */
    recover: named(`WITH stale AS (
        SELECT j.id, j.worker_id FROM ${jobs} AS j JOIN ${subs} AS s ON s.job_id = j.id
        WHERE s.phase IN ${custody} AND j.status = 'processing' AND j.worker_id IS NOT NULL
          AND (@live::text IS NULL OR j.worker_id <> @live::text)
          AND NOT EXISTS (SELECT 1 FROM ${workers} AS w
            WHERE w.id = j.worker_id AND w.status <> 'stopped'
              AND (@timeout::float8 IS NULL
                OR w.last_heartbeat_at
                   >= now() - make_interval(secs => COALESCE(w.heartbeat_timeout, @timeout::float8))))
        FOR UPDATE OF j SKIP LOCKED
      ), cleared AS (
        UPDATE ${jobs} AS j SET worker_id = NULL, claim_token = NULL, updated_at = now()
        FROM stale WHERE j.id = stale.id AND j.worker_id = stale.worker_id
        RETURNING j.id, stale.worker_id
      ), before AS (
        SELECT s.job_id, s.phase FROM ${subs} AS s JOIN cleared ON cleared.id = s.job_id
      ), moved AS (
        UPDATE ${subs} AS s
        SET phase = CASE WHEN s.phase = 'submitting' THEN 'frozen' ELSE s.phase END,
            frozen_at = CASE WHEN s.phase = 'submitting' THEN now() ELSE s.frozen_at END,
            frozen_reason = CASE WHEN s.phase = 'submitting' THEN 'crash' ELSE s.frozen_reason END,
            due_at = now(), updated_at = now()
        FROM cleared WHERE s.job_id = cleared.id
        RETURNING s.job_id, s.job_name, s.task_id, cleared.worker_id
      )
      SELECT m.job_id::text AS job_id, m.job_name, b.phase, m.task_id, m.worker_id
      FROM moved AS m JOIN before AS b ON b.job_id = m.job_id`),
    /** `@limit` → deletes submission rows whose job is neither a job row nor a dead letter. */
    prune: named(`DELETE FROM ${subs} WHERE job_id IN (
        SELECT s.job_id FROM ${subs} AS s
        WHERE NOT EXISTS (SELECT 1 FROM ${jobs} AS j WHERE j.id = s.job_id)
          AND NOT EXISTS (SELECT 1 FROM ${finished} AS f WHERE f.id = s.job_id)
          AND NOT EXISTS (SELECT 1 FROM ${dead} AS d WHERE d.id = s.job_id)
        LIMIT @limit::int)`),
    /** One record. */
    get: named(`SELECT ${record} FROM ${subs} AS s LEFT JOIN ${jobOf} ON true
      WHERE s.job_id = @id::uuid`),
    /** Records by phase (NULL: all), most recently updated first. */
    list: named(`SELECT ${record} FROM ${subs} AS s LEFT JOIN ${jobOf} ON true
      WHERE @phase::text IS NULL OR s.phase = @phase
      ORDER BY s.updated_at DESC, s.job_id LIMIT @limit::int`),
    /** → `phase`, `n` in custody whose job is processing. */
    counts: named(`SELECT s.phase, count(*)::int AS n FROM ${subs} AS s
      JOIN ${jobs} AS j ON j.id = s.job_id
      WHERE j.status = 'processing' AND s.phase IN ${custody} GROUP BY s.phase`),
    /** → `queue`, `phase`, `n`: the same counts per job queue. */
    countsByQueue: named(`SELECT j.queue, s.phase, count(*)::int AS n FROM ${subs} AS s
      JOIN ${jobs} AS j ON j.id = s.job_id
      WHERE j.status = 'processing' AND s.phase IN ${custody} GROUP BY j.queue, s.phase`),
  };
}

/** Generic recovery's exclusion (`j` is the job row): not in the submission machinery's custody. */
export function notInRemoteCustody(schema: string): string {
  const subs = `${quoteIdent(schema)}.${quoteIdent("soniq_remote_submissions")}`;
  return `NOT EXISTS (SELECT 1 FROM ${subs} AS rs
    WHERE rs.job_id = j.id AND rs.phase IN ('submitting', 'accepted', 'frozen'))`;
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
