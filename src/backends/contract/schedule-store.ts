/**
 * The schedule store (docs/schedules.md, "Guarantees"): the rows of `soniq_schedules` and
 * `soniq_schedule_runs`, and the one write that takes occurrences — a compare-and-set on the
 * durable `next_run_at` cursor (and the definition's `revision`) in the same transaction as the
 * jobs' insert and the history rows. Times are decided by the database clock; durations are
 * **seconds**; instants are `Date`. Contract cases: test/contract/areas/schedules.ts.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */
import type { EnqueueResult, NewJob } from "./types.js";

/** What happened to one occurrence (see docs/schedules.md). */
export type ScheduleOutcome = "enqueued" | "late" | "missed" | "skipped_overlap" | "paused";

/** The definition part of a schedule row, as declared in code and validated. */
export interface ScheduleSpec {
  /** Permanent identity, dotted lower-case like a job name. */
  id: string;
  /** The job each occurrence enqueues. */
  jobName: string;
  queue: string;
  priority: number;
  maxAttempts: number;
  /** The job's arguments as JSON text (the same for every occurrence). */
  args: string;
  /**
   * The version each occurrence's job is enqueued with (`NewJob.version`): the version of the
   * job definition that wrote `args`, so the arguments and their version travel together
   * (absent: 1).
   */
  jobVersion?: number;
  /** A 5- or 6-field cron expression or an `@` name; null for `every` schedules. */
  cron: string | null;
  /** Interval in seconds (>= 1); null for cron schedules. */
  everySeconds: number | null;
  /** IANA zone of the cron expression (`UTC` for `every`). */
  timezone: string;
  /** No occurrence before this instant. */
  startAt: Date | null;
  /** No occurrence after this instant. */
  endAt: Date | null;
  /** Missed-run policy: `skip`, `latest` or `all`. */
  missedPolicy: "skip" | "latest" | "all";
  /** Seconds an occurrence may be overdue and still count as on time. */
  missedGrace: number;
  /** Seconds: the catch-up window of `latest`/`all`. */
  missedWithin: number;
  /** `all`: most late jobs per tick. */
  missedMax: number;
  /** `allow`, or `skip` while the previous occurrence's job is queued or processing. */
  overlap: "allow" | "skip";
  /** History rows kept for this schedule (the oldest are deleted past it). */
  historyLimit: number;
}

/** A row of `soniq_schedules`: the spec plus its durable state. */
export interface ScheduleRow extends ScheduleSpec {
  /** The cursor: the next occurrence not yet taken; null when the schedule has ended. */
  nextRunAt: Date | null;
  /** The newest occurrence taken (any outcome). */
  lastRunAt: Date | null;
  /** The job of the newest occurrence that made one. */
  lastJobId: string | null;
  /** That job is `queued` or `processing` right now (what overlap `skip` looks at). */
  lastJobActive: boolean;
  paused: boolean;
  /** Bumped by every change of the spec or of `paused`; part of the compare-and-set. */
  revision: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A row of `soniq_schedule_runs`: one occurrence's outcome. */
export interface ScheduleRunRow {
  scheduleId: string;
  /** The occurrence instant (for a manual run: when it was asked). */
  occurrence: Date;
  outcome: ScheduleOutcome;
  /** The job it enqueued (or the job already holding its dedup key), else null. */
  jobId: string | null;
  /** Asked for by `run now`, not by the schedule. */
  manual: boolean;
  recordedAt: Date;
}

/** One occurrence to record in {@link ScheduleStore.scheduleAdvance}. */
export interface ScheduleRunInput {
  occurrence: Date;
  outcome: ScheduleOutcome;
  manual: boolean;
  /** The job to insert for it (outcomes `enqueued`/`late`), with its dedup key set. */
  job: NewJob | null;
}

/** Params of {@link ScheduleStore.scheduleAdvance}. */
export interface ScheduleAdvanceParams {
  id: string;
  /** The compare-and-set: the row must still have this cursor and revision. */
  expect: { nextRunAt: Date | null; revision: number };
  /** The new cursor. */
  nextRunAt: Date | null;
  /** Set `paused` (and bump the revision); unchanged when undefined. */
  paused?: boolean;
  /** Occurrences taken by this write, ascending; their jobs are inserted in the same transaction. */
  runs: readonly ScheduleRunInput[];
}

/** What {@link ScheduleStore.scheduleAdvance} did. */
export interface ScheduleAdvanceResult {
  /** False when the compare-and-set failed: someone else took these occurrences (nothing written). */
  advanced: boolean;
  /** Per run that carried a job, in order: the insert's result (a held dedup key returns its holder). */
  jobs: EnqueueResult[];
}

/** Schedules due now, by the database clock. */
export interface DueSchedules {
  /** The database's now. */
  now: Date;
  /** Rows whose cursor is at or before `now - overdueSeconds` (paused ones included). */
  due: ScheduleRow[];
  /** The earliest cursor among the schedules not in `due` (after `now - overdueSeconds`); null when none. */
  nextDueAt: Date | null;
}

/** Params of {@link ScheduleStore.scheduleSave}. */
export interface ScheduleSaveParams {
  /** The definition to store. */
  spec: ScheduleSpec;
  /** The cursor to store with it. */
  nextRunAt: Date | null;
  /** null: insert only if no row has this id; a number: update only at this revision. */
  expectRevision: number | null;
}

/** Params of the methods that name one schedule. */
export interface ScheduleIdParams {
  /** The schedule's id. */
  id: string;
}

/** Params of {@link ScheduleStore.scheduleDue}. */
export interface ScheduleDueParams {
  /** Only cursors at or before the database's now minus this many **seconds** (>= 0). */
  overdueSeconds: number;
}

/** Params of {@link ScheduleStore.scheduleRuns}. */
export interface ScheduleRunsParams {
  /** The schedule's id. */
  id: string;
  /** At most this many rows (an integer >= 0). */
  limit: number;
}

/** The schedule store. Every method rejects with `SoniqError("CLOSED")` after close. */
export interface ScheduleStore {
  /**
   * Inserts (when `expectRevision` is null: only if no row has this id) or updates the spec and
   * cursor (only if the row's revision is `expectRevision`; the revision is then bumped). Keeps
   * `paused`, history and `last_*`. Returns false when the condition failed (nothing written).
   */
  scheduleSave(params: ScheduleSaveParams): Promise<boolean>;
  /** One row, or null. */
  scheduleGet(params: ScheduleIdParams): Promise<ScheduleRow | null>;
  /** Every row, by id. */
  scheduleList(): Promise<ScheduleRow[]>;
  /** See {@link DueSchedules}. */
  scheduleDue(params: ScheduleDueParams): Promise<DueSchedules>;
  /**
   * The exactly-once write, in one transaction: `UPDATE soniq_schedules SET next_run_at = …
   * WHERE id = … AND next_run_at IS NOT DISTINCT FROM expect.nextRunAt AND revision =
   * expect.revision`; only if that changed the row, the runs' jobs are inserted (dedup keys hold
   * across processes), their history rows written, `last_run_at`/`last_job_id` set, and the
   * history trimmed to `history_limit`. Otherwise nothing is written.
   */
  scheduleAdvance(params: ScheduleAdvanceParams): Promise<ScheduleAdvanceResult>;
  /** Deletes the row and its history. False when there was none. */
  scheduleRemove(params: ScheduleIdParams): Promise<boolean>;
  /**
   * History of one schedule, newest first, at most `limit` rows.
   * @throws SoniqError `INVALID_OPTION` when `limit` is not an integer >= 0.
   */
  scheduleRuns(params: ScheduleRunsParams): Promise<ScheduleRunRow[]>;
}
