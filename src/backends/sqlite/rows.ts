/**
 * The SQLite select lists, stored row shapes (times as INTEGER milliseconds since the epoch,
 * booleans 0/1, lists as JSON text) and row mappers, built from the one column catalogue
 * (shared/columns.ts).
 */
import type { ClaimedRowFields } from "../claimed-job.js";
import {
  CLAIMED_FIELDS,
  CONTROLS,
  DEAD_LETTERS,
  JOBS,
  LIST_FIELDS,
  mappersFor,
  type StoredRow,
  type SUBMISSION_RECORDS,
  selectList,
  WORKERS,
} from "../shared/columns.js";

/** The columns of `soniq_jobs`, in table order: a {@link JobRecord}. */
export const JOB_COLUMNS = selectList(JOBS, "sqlite");

/**
 * {@link JOB_COLUMNS} without `result`: what job lists select (a {@link JobListRecord}). A result
 * may be megabytes and no list shows it; the one-job statements read it.
 */
export const JOB_LIST_COLUMNS = selectList(JOBS, "sqlite", { fields: LIST_FIELDS });

/**
 * The columns a claim returns: a {@link ClaimedRecord}, only what a `ClaimedJob` holds, because
 * better-sqlite3 builds each row object from every column returned — every column of
 * {@link JOB_COLUMNS} nearly doubled a claim's cost per row (docs/performance.md, "Why the hot
 * statements look as they do").
 */
export const CLAIMED_COLUMNS = selectList(JOBS, "sqlite", {
  fields: CLAIMED_FIELDS,
  instantsAsMs: true,
});

/** The columns of `soniq_dead_letter_jobs`, in table order: a {@link DeadLetterRecord}. */
export const DEAD_LETTER_COLUMNS = selectList(DEAD_LETTERS, "sqlite");

/**
 * The columns of `soniq_workers` a read needs, in table order: a {@link WorkerRecord}, then the
 * operations' (not `schema_version`: written at registration, read only by the table's trigger).
 */
export const WORKER_COLUMNS = `${selectList(WORKERS, "sqlite")}, heartbeat_timeout_ms,
  shutdown_state, drain_started_at, deadline_at`;

/** The controls of a listed or detailed job (`c`: soniq_job_controls): a {@link ControlsRecord}. */
export const CONTROL_COLUMNS = selectList(CONTROLS, "sqlite", { alias: "c" });

/** A row of `soniq_jobs` as better-sqlite3 returns it. */
export type JobRecord = StoredRow<typeof JOBS, "sqlite">;

/**
 * A row selected with {@link CLAIMED_COLUMNS}: the instants as INTEGER epoch milliseconds.
 * Mapped by `claimedJobOfRow` (backends/claimed-job.ts), PostgreSQL's mapper too.
 */
export type ClaimedRecord = ClaimedRowFields & { scheduled_ms: number; created_ms: number };

/** A row of `soniq_jobs` selected with {@link JOB_LIST_COLUMNS}: no result. */
export type JobListRecord = Omit<JobRecord, "result">;

/** A row of `soniq_dead_letter_jobs` as better-sqlite3 returns it. */
export type DeadLetterRecord = StoredRow<typeof DEAD_LETTERS, "sqlite">;

/** A row of `soniq_workers` as better-sqlite3 returns it (the catalogue's columns). */
export type WorkerRecord = StoredRow<typeof WORKERS, "sqlite">;

/** The controls columns of a listed or detailed job ({@link CONTROL_COLUMNS}). */
export type ControlsRecord = StoredRow<typeof CONTROLS, "sqlite">;

/** A row of the submission reads (submission-sql.ts `subGet`, `subList`). */
export type SubmissionRecordRow = StoredRow<typeof SUBMISSION_RECORDS, "sqlite">;

/** The SQLite row mappers (shared/columns.ts `mappersFor`). */
export const { toJobRow, toListed, toDetailed, toDeadLetterRow, toWorkerRow, toSubmissionRecord } =
  mappersFor("sqlite");
