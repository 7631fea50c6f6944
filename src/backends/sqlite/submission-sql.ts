/**
 * The SQLite statements of the submission store (remote jobs), spread into the backend's one
 * catalogue (sql.ts `SQL`). Same conventions: `@name` parameters, INTEGER milliseconds, `@now`
 * read once per transaction. The job-row fence is `@id`, `@workerId`, `@claimToken`.
 */
import { CLAIMED_COLUMNS } from "./rows.js";

/** `column` of the submission's job row: the live row `j`, else the finished row `f` ({@link JOB_ROWS}). */
const jobColumn = (column: string) =>
  `CASE WHEN j.id IS NOT NULL THEN j.${column} ELSE f.${column} END`;

/** The submission columns every read returns, plus the job row's status, owner, attempts, error. */
const RECORD = `s.job_id, s.job_name, s.queue, s.phase, s.generation, s.task_id, s.submitted_at,
    s.accepted_at, s.frozen_at, s.frozen_reason, s.due_at, s.polls, s.answer, s.updated_at,
    ${jobColumn("status")} AS job_status, ${jobColumn("worker_id")} AS job_worker_id,
    ${jobColumn("attempts")} AS job_attempts, ${jobColumn("last_error")} AS job_last_error`;

/** The job row of submission `s`, wherever it is: live (`j`) or finished (`f`); each by primary key. */
const JOB_ROWS = `LEFT JOIN soniq_jobs AS j ON j.id = s.job_id
    LEFT JOIN soniq_finished_jobs AS f ON f.id = s.job_id`;

const OWNED_JOB =
  "id = @id AND status = 'processing' AND worker_id = @workerId AND claim_token = @claimToken";

/** The submission statements, by name. */
export const SUBMISSION_SQL = {
  /** `@id`, `@workerId`, `@claimToken` → a row iff the owner holds the job. */
  subOwnedJob: `SELECT queue FROM soniq_jobs WHERE ${OWNED_JOB}`,

  /** `@id` → `phase`, `generation`, `answer`, `job_name` of the submission, if any. */
  subPhase: `SELECT phase, generation, answer, job_name FROM soniq_remote_submissions
    WHERE job_id = @id`,

  /** `@name`, `@id`, `@since` → `in_flight`, `last_minute` of other submissions of `@name`. */
  subAdmissionCounts: `SELECT
      COALESCE(SUM(phase = 'submitting'), 0) AS in_flight,
      COALESCE(SUM(submitted_at > @since), 0) AS last_minute
    FROM soniq_remote_submissions WHERE job_name = @name AND job_id <> @id`,

  /** `@id`, `@name`, `@queue`, `@now`: phase `submitting` (insert, or from `released`). */
  subMarkSubmitting: `INSERT INTO soniq_remote_submissions (job_id, job_name, queue, phase,
      generation, submitted_at, updated_at)
    VALUES (@id, @name, @queue, 'submitting', 1, @now, @now)
    ON CONFLICT (job_id) DO UPDATE SET phase = 'submitting', task_id = NULL, submitted_at = @now,
      accepted_at = NULL, frozen_at = NULL, frozen_reason = NULL, due_at = NULL, polls = 0,
      updated_at = @now
    WHERE soniq_remote_submissions.phase = 'released'`,

  /** `@taskId` → the early answer kept for that task id (`job_name`, `answer`). */
  subEarlyAnswer: `SELECT job_name, answer FROM soniq_remote_early_answers WHERE task_id = @taskId`,

  /** `@taskId`: deletes the early answer. */
  subDeleteEarly: "DELETE FROM soniq_remote_early_answers WHERE task_id = @taskId",

  /** `@taskId`, `@name`, `@answer`, `@now`: keeps an early answer (first one wins). */
  subInsertEarly: `INSERT INTO soniq_remote_early_answers (task_id, job_name, answer, received_at)
    VALUES (@taskId, @name, @answer, @now) ON CONFLICT (task_id) DO NOTHING`,

  /** `@id`, `@taskId`, `@answer`, `@dueAt`, `@now`: `accepted` from submitting/frozen. */
  subAccept: `UPDATE soniq_remote_submissions
    SET phase = 'accepted', task_id = @taskId, accepted_at = @now, frozen_at = NULL,
        frozen_reason = NULL, due_at = @dueAt, answer = @answer, updated_at = @now
    WHERE job_id = @id AND phase IN ('submitting', 'frozen')`,

  /** `@id`, `@workerId`, `@claimToken`, `@now`: clears the owner of an owned processing row. */
  subClearOwner: `UPDATE soniq_jobs SET worker_id = NULL, claim_token = NULL, updated_at = @now
    WHERE ${OWNED_JOB}`,

  /** `@id`, `@reason`, `@now`: `submitting` → `frozen`, due now. */
  subFreeze: `UPDATE soniq_remote_submissions
    SET phase = 'frozen', frozen_at = @now, frozen_reason = @reason, due_at = @now,
        updated_at = @now
    WHERE job_id = @id AND phase = 'submitting'`,

  /** `@id`, `@bump` (0/1), `@now`: custody → `released`. */
  subRelease: `UPDATE soniq_remote_submissions
    SET phase = 'released', generation = generation + @bump, task_id = NULL, answer = NULL,
        due_at = NULL, updated_at = @now
    WHERE job_id = @id AND phase IN ('submitting', 'accepted', 'frozen')`,

  /** `@id`, `@workerId`, `@claimToken`, `@now`: the NACK of an owned row (queued, due now). */
  subRequeueJob: `UPDATE soniq_jobs
    SET status = 'queued', worker_id = NULL, claim_token = NULL, scheduled_at = @now,
        updated_at = @now
    WHERE ${OWNED_JOB}`,

  /** `@id`, `@now`: requeues an unowned processing row (operator: not submitted). */
  subRequeueUnowned: `UPDATE soniq_jobs
    SET status = 'queued', scheduled_at = @now, updated_at = @now
    WHERE id = @id AND status = 'processing' AND worker_id IS NULL`,

  /** `@id`, `@now`: custody → `finished`. */
  subFinish: `UPDATE soniq_remote_submissions SET phase = 'finished', due_at = NULL,
      updated_at = @now
    WHERE job_id = @id AND phase IN ('submitting', 'accepted', 'frozen')`,

  /**
   * `@now`, `@names`, `@reconcilable` (JSON arrays), `@limit` → `job_id` of due unowned rows in
   * custody, oldest due first.
   */
  subDue: `SELECT s.job_id FROM soniq_remote_submissions AS s
    JOIN soniq_jobs AS j ON j.id = s.job_id
    WHERE s.phase IN ('accepted', 'frozen') AND s.due_at <= @now
      AND j.status = 'processing' AND j.worker_id IS NULL
      AND ((s.phase = 'accepted' AND s.job_name IN (SELECT value FROM json_each(@names)))
        OR (s.phase = 'frozen' AND (s.job_name IN (SELECT value FROM json_each(@reconcilable))
          OR (s.answer IS NOT NULL AND s.job_name IN (SELECT value FROM json_each(@names))))))
    ORDER BY s.due_at, s.job_id LIMIT @limit`,

  /**
   * `@id`, `@workerId`, `@claimToken`, `@now`: gives an unowned processing row an owner → its
   * claimed columns (`CLAIMED_COLUMNS`).
   */
  subTakeJob: `UPDATE soniq_jobs SET worker_id = @workerId, claim_token = @claimToken,
      updated_at = @now
    WHERE id = @id AND status = 'processing' AND worker_id IS NULL
    RETURNING ${CLAIMED_COLUMNS}`,

  /** `@id` → the submission columns of one row. */
  subRow: `SELECT phase, task_id, generation, accepted_at, polls, answer
    FROM soniq_remote_submissions WHERE job_id = @id`,

  /** `@id`, `@dueAt`, `@count` (0/1), `@now`: next due time of a row in custody. */
  subReschedule: `UPDATE soniq_remote_submissions
    SET due_at = @dueAt, polls = polls + @count, updated_at = @now
    WHERE job_id = @id AND phase IN ('accepted', 'frozen')`,

  /** `@taskId` → `job_id`, `job_name` of submissions with that task id. */
  subByTask: `SELECT job_id, job_name FROM soniq_remote_submissions WHERE task_id = @taskId`,

  /** `@id` → `status`, `worker_id` of the job row, live or finished. */
  subJobStatus: `SELECT status, worker_id FROM soniq_jobs WHERE id = @id
    UNION ALL SELECT status, worker_id FROM soniq_finished_jobs WHERE id = @id`,

  /** `@id`, `@answer`, `@now`: stores an answer (first wins); due now unless submitting. */
  subStoreAnswer: `UPDATE soniq_remote_submissions
    SET answer = @answer, due_at = CASE WHEN phase = 'submitting' THEN due_at ELSE @now END,
        updated_at = @now
    WHERE job_id = @id AND answer IS NULL AND phase IN ('submitting', 'accepted', 'frozen')`,

  /** `@id`, `@taskId`, `@now`: operator: frozen → accepted, due now. */
  subResolveAccepted: `UPDATE soniq_remote_submissions
    SET phase = 'accepted', task_id = @taskId, accepted_at = @now, frozen_at = NULL,
        frozen_reason = NULL, due_at = @now, updated_at = @now
    WHERE job_id = @id AND phase = 'frozen'`,

  /** `@id`, `@now`: operator: frozen → released (same key). */
  subResolveReleased: `UPDATE soniq_remote_submissions
    SET phase = 'released', task_id = NULL, answer = NULL, due_at = NULL, updated_at = @now
    WHERE job_id = @id AND phase = 'frozen'`,

  /** `@id`, `@answer`, `@now`: operator: frozen, failed answer, due now. */
  subResolveFailed: `UPDATE soniq_remote_submissions
    SET answer = @answer, due_at = @now, updated_at = @now
    WHERE job_id = @id AND phase = 'frozen'`,

  /**
   * `@id`, `@now`, `@needsAnswer` (1: a frozen row only with a stored answer): poll now (unowned
   * accepted or frozen).
   */
  subPollNow: `UPDATE soniq_remote_submissions SET due_at = @now, updated_at = @now
    WHERE job_id = @id AND phase IN ('accepted', 'frozen')
      AND (phase = 'accepted' OR @needsAnswer = 0 OR answer IS NOT NULL)
      AND EXISTS (SELECT 1 FROM soniq_jobs AS j WHERE j.id = @id AND j.status = 'processing'
        AND j.worker_id IS NULL)`,

  /**
   * `@now`, `@timeoutMs` (NULL: only stopped/unknown owners), `@liveWorkerId` (the caller's own
   * incarnation, never not live; NULL: none) → rows in custody whose owner is set and not live:
   * `job_id`, `job_name`, `phase`, `task_id`, `worker_id`.
   */
  subStale: `SELECT s.job_id, s.job_name, s.phase, s.task_id, j.worker_id
    FROM soniq_remote_submissions AS s JOIN soniq_jobs AS j ON j.id = s.job_id
    WHERE s.phase IN ('submitting', 'accepted', 'frozen') AND j.status = 'processing'
      AND j.worker_id IS NOT NULL
      AND (@liveWorkerId IS NULL OR j.worker_id <> @liveWorkerId)
      AND NOT EXISTS (SELECT 1 FROM soniq_workers AS w
        WHERE w.id = j.worker_id AND w.status <> 'stopped'
          AND (@timeoutMs IS NULL
            OR @now - w.last_heartbeat_at <= COALESCE(w.heartbeat_timeout_ms, @timeoutMs)))`,

  /** `@id`, `@owner`, `@now`: clears a dead owner. */
  subClearDeadOwner: `UPDATE soniq_jobs SET worker_id = NULL, claim_token = NULL, updated_at = @now
    WHERE id = @id AND status = 'processing' AND worker_id = @owner`,

  /** `@id`, `@now`: crash: submitting → frozen (reason crash); others due now. */
  subRecoverPhase: `UPDATE soniq_remote_submissions
    SET phase = CASE WHEN phase = 'submitting' THEN 'frozen' ELSE phase END,
        frozen_at = CASE WHEN phase = 'submitting' THEN @now ELSE frozen_at END,
        frozen_reason = CASE WHEN phase = 'submitting' THEN 'crash' ELSE frozen_reason END,
        due_at = @now, updated_at = @now
    WHERE job_id = @id AND phase IN ('submitting', 'accepted', 'frozen')`,

  /** `@limit` → deletes submission rows whose job is in none of the job tables. */
  subPrune: `DELETE FROM soniq_remote_submissions WHERE job_id IN (
      SELECT s.job_id FROM soniq_remote_submissions AS s
      WHERE NOT EXISTS (SELECT 1 FROM soniq_jobs AS j WHERE j.id = s.job_id)
        AND NOT EXISTS (SELECT 1 FROM soniq_finished_jobs AS f WHERE f.id = s.job_id)
        AND NOT EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d WHERE d.id = s.job_id)
      LIMIT @limit)`,

  /** `@id` → one record (submission + job columns). */
  subGet: `SELECT ${RECORD} FROM soniq_remote_submissions AS s ${JOB_ROWS}
    WHERE s.job_id = @id`,

  /** `@phase` (NULL: all), `@limit` → records, most recently updated first. */
  subList: `SELECT ${RECORD} FROM soniq_remote_submissions AS s ${JOB_ROWS}
    WHERE @phase IS NULL OR s.phase = @phase
    ORDER BY s.updated_at DESC, s.job_id LIMIT @limit`,

  /** → `phase`, `n` for submissions in custody whose job is processing. */
  subCounts: `SELECT s.phase, COUNT(*) AS n FROM soniq_remote_submissions AS s
    JOIN soniq_jobs AS j ON j.id = s.job_id
    WHERE j.status = 'processing' AND s.phase IN ('submitting', 'accepted', 'frozen')
    GROUP BY s.phase`,
  /** → `queue`, `phase`, `n`: the same counts per job queue. */
  subCountsByQueue: `SELECT j.queue, s.phase, COUNT(*) AS n FROM soniq_remote_submissions AS s
    JOIN soniq_jobs AS j ON j.id = s.job_id
    WHERE j.status = 'processing' AND s.phase IN ('submitting', 'accepted', 'frozen')
    GROUP BY j.queue, s.phase`,
} as const;

/** Generic recovery's exclusion: the job row is in the submission machinery's custody. */
export const NOT_IN_REMOTE_CUSTODY = `NOT EXISTS (SELECT 1 FROM soniq_remote_submissions AS rs
  WHERE rs.job_id = j.id AND rs.phase IN ('submitting', 'accepted', 'frozen'))`;
