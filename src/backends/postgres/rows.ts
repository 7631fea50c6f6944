/**
 * The PostgreSQL select lists, stored row shapes and row mappers, built from the one column
 * catalogue (shared/columns.ts): uuid and JSON columns are selected as `::text` (JSON comes back
 * as the exact text that was written), timestamps arrive as `Date` (millisecond precision).
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

/** The job columns every job query selects, in `RawJobRow` shape. */
export const JOB_COLUMNS = selectList(JOBS, "postgres");

/**
 * {@link JOB_COLUMNS} without `result`, in `RawJobListRow` shape: what job lists select. A result
 * may be megabytes and no list shows it; the one-job statements read it.
 */
export const JOB_LIST_COLUMNS = selectList(JOBS, "postgres", { fields: LIST_FIELDS });

/**
 * The columns a claim returns, in `RawClaimedRow` shape (see `ClaimedJob`). The two instants come
 * as whole epoch milliseconds (truncated, as the driver's timestamp parsing truncates the
 * microseconds), not as `timestamptz` text: a claim returns hundreds of rows, and parsing two
 * timestamps per row with the driver's regular expression was the largest allocation of the
 * claim's row parsing (docs/performance.md). They stay `numeric` (decimal text to the driver):
 * a row written by hand with an infinite timestamp comes back as `Infinity` (an invalid `Date`)
 * instead of failing every claim, as a cast to `int8` would. `alias` qualifies each column.
 */
export const claimedColumns = (alias?: string) =>
  selectList(JOBS, "postgres", {
    fields: CLAIMED_FIELDS,
    instantsAsMs: true,
    ...(alias === undefined ? {} : { alias }),
  });

/** {@link claimedColumns} unqualified. */
export const CLAIMED_COLUMNS = claimedColumns();

/** The dead-letter columns every dead-letter query selects, in `RawDeadLetterRow` shape. */
export const DEAD_LETTER_COLUMNS = selectList(DEAD_LETTERS, "postgres");

/** The worker columns every worker query selects: a `RawWorkerRow`, then the operations columns. */
export const WORKER_COLUMNS = `${selectList(WORKERS, "postgres")}, heartbeat_timeout,
  shutdown_state, drain_started_at, deadline_at`;

/** The controls of a listed or detailed job (`c`: soniq_job_controls), in `RawControls` shape. */
export const CONTROL_COLUMNS = selectList(CONTROLS, "postgres", { alias: "c" });

/** A `soniq_jobs` row as selected with {@link JOB_COLUMNS}. */
export type RawJobRow = StoredRow<typeof JOBS, "postgres">;

/** A `soniq_jobs` row as selected with {@link JOB_LIST_COLUMNS}: no result. */
export type RawJobListRow = Omit<RawJobRow, "result">;

/**
 * A claimed row as returned with {@link CLAIMED_COLUMNS}: the instants as `numeric` epoch
 * milliseconds (decimal text; `Infinity`/`-Infinity` for infinite). Mapped by `claimedJobOfRow`.
 */
export type RawClaimedRow = ClaimedRowFields & { scheduled_ms: string; created_ms: string };

/** A `soniq_dead_letter_jobs` row as selected with {@link DEAD_LETTER_COLUMNS}. */
export type RawDeadLetterRow = StoredRow<typeof DEAD_LETTERS, "postgres">;

/** A `soniq_workers` row as selected with {@link WORKER_COLUMNS} (the catalogue's columns). */
export type RawWorkerRow = StoredRow<typeof WORKERS, "postgres">;

/** The controls columns of a listed or detailed job ({@link CONTROL_COLUMNS}). */
export type RawControls = StoredRow<typeof CONTROLS, "postgres">;

/** A row of the submission reads (submission-sql.ts `record`). */
export type RawSubmissionRecord = StoredRow<typeof SUBMISSION_RECORDS, "postgres">;

/** The PostgreSQL row mappers (shared/columns.ts `mappersFor`). */
export const { toJobRow, toListed, toDetailed, toDeadLetterRow, toWorkerRow, toSubmissionRecord } =
  mappersFor("postgres");
