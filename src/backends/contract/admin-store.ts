/**
 * The operations contract (issue 14): what the admin API, the CLI, the dashboard and metrics
 * read and change, and what a worker declares about itself — listing and filtering jobs and dead
 * letters, the timeline of a job's unusual transitions, cancel requests and progress, bulk
 * actions, queues (pause, `maxRunning`) and workers (declared heartbeat timeout, shutdown state).
 * Each backend implements it in its own `admin-store.ts`, reached as `backend.admin`.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 *
 * Conventions (as the rest of the backend contract): one params object per method; durations in
 * **seconds**; times decided by the **database clock**; arguments and results as JSON text.
 * Methods return plain outcomes (`false`, a `state` word) and leave errors with codes to the
 * caller (the instance's admin facade), except where a method says `@throws`.
 */
import type { DeadLetterRow, JobRow, JobStatus, Owner, WorkerRow } from "./types.js";

/** The worker shutdown states, as the shutdown machine names them (docs/shutdown.md). */
export type WorkerShutdownState =
  | "RUNNING"
  | "DRAINING"
  | "FORCE_TIMEOUT_PATH"
  | "WAIT_FOR_THREAD"
  | "STOPPED";

/** Kinds of timeline events (the unusual transitions; the happy path comes from the row). */
export type JobEventKind =
  | "nack"
  | "recovered"
  | "crash_loop"
  | "snoozed"
  | "retried"
  | "failed"
  | "dead_lettered"
  | "cancel_requested"
  | "cancelled"
  | "replayed"
  | "run_now"
  | "deleted"
  | "step_resolved"
  | "checkpoint_cleared";

/** One event to append to a job's timeline. */
export interface NewJobEvent {
  jobId: string;
  kind: JobEventKind;
  /** The attempt it belongs to (1-based), when known. */
  attempt?: number | null;
  workerId?: string | null;
  /** Free text: an error, a reason, "interruption 2/3". */
  detail?: string | null;
}

/** A stored timeline event. */
export interface JobEvent extends Required<NewJobEvent> {
  /** Increasing per store: the append order. */
  seq: number;
  /** When it was appended (database clock). */
  at: Date;
}

/**
 * A status as operators read it: a stored {@link JobStatus}, where a `queued` row whose due time
 * (`scheduled_at`) is still in the future reads `scheduled` and a due one reads `queued`. "Due"
 * is decided as a claim decides it: `scheduled_at <= now` by the database clock.
 */
export type JobListStatus = JobStatus | "scheduled";

/** Filters of {@link AdminStore.jobList}; every given field must match (AND). */
export interface JobFilter {
  /**
   * Any of these statuses ({@link JobListStatus}): `queued` matches queued rows that are due
   * (`scheduled_at <= now`, database clock), `scheduled` queued rows not yet due; both together
   * match every queued row.
   */
  status?: readonly JobListStatus[];
  /** Any of these queues. */
  queue?: readonly string[];
  /** Any of these names. */
  name?: readonly string[];
  /** Any of these ids. */
  ids?: readonly string[];
  dedupKey?: string;
  /** `last_error` contains this text (case-sensitive substring). */
  errorContains?: string;
  /**
   * `args` at this path equals this value compared as text: `{ path: ["user", "id"], value: "42" }`
   * matches `{"user":{"id":42}}` and `{"user":{"id":"42"}}`. Path items are object keys.
   */
  args?: { path: readonly string[]; value: string };
  /** `created_at` at or after / before these instants. */
  createdAfter?: Date;
  createdBefore?: Date;
  /** `finished_at` at or after / before these instants. */
  finishedAfter?: Date;
  finishedBefore?: Date;
}

/** A job's controls: an operator's cancel request and its handler's last progress. */
export interface JobControls {
  /** When a cancel was requested while it was processing; null otherwise. */
  cancelRequestedAt: Date | null;
  /** The last progress its handler reported (0..1), written with the heartbeat. */
  progress: number | null;
  progressMessage: string | null;
  progressAt: Date | null;
}

/**
 * A job as listed ({@link AdminStore.jobList}): the row **without its result**, plus its controls.
 * A result may be megabytes and no list shows it, so lists neither read nor send it;
 * {@link AdminStore.jobDetail} (one job) carries it.
 */
export interface JobListItem extends Omit<JobRow, "result">, JobControls {}

/** One job as {@link AdminStore.jobDetail} reads it: the whole row (result included) plus its controls. */
export interface JobDetailRow extends JobRow, JobControls {}

/**
 * A page of a list, newest first. Jobs: by id, descending — ids are time-ordered (UUIDv7), so
 * this is creation order without an index on `created_at`; rows whose id predates version 7 (a
 * database older than time-ordered ids) come after every other row, by `created_at` then id,
 * descending. Dead letters: by `dead_at`, then id, descending.
 */
export interface Page<T> {
  items: T[];
  /**
   * Pass back as `cursor` for the next page; null when this page is the last. A page may hold
   * fewer items than the limit and still carry a cursor: a backend bounds the rows one page reads
   * (docs/backends.md, "Reads"), so a filter that matches rarely continues on the next page.
   */
  nextCursor: string | null;
}

/** Params of {@link AdminStore.jobList}. */
export interface JobListParams {
  filter: JobFilter;
  /** From {@link Page.nextCursor}; absent for the first page. */
  cursor?: string | null;
  /** Rows per page, 1–1000. */
  limit: number;
}

/** One cell of {@link AdminStore.jobCountByQueueStatus}. */
export interface QueueStatusCount {
  queue: string;
  /** `queued` counts due jobs only; `scheduled` the queued jobs not yet due (database clock). */
  status: JobListStatus | "dead_letter";
  count: number;
}

/** What {@link AdminStore.jobCancelRequest} did. */
export type CancelRequestState =
  /** The job was queued: it is `cancelled` now. */
  | "cancelled"
  /** The job is processing: the request is stored; its owner stops it and records `cancelled`. */
  | "requested"
  /** It was already requested (nothing changed). */
  | "already_requested"
  /** The job is `done` or `cancelled` already. */
  | "finished"
  | "not_found";

/** What {@link AdminStore.jobRetryNow} and {@link AdminStore.jobDelete} did. */
export type JobActionState = "done" | "processing" | "not_found";

/** Filters of {@link AdminStore.deadLetterList}. */
export interface DeadLetterFilter {
  reason?: readonly string[];
  queue?: readonly string[];
  name?: readonly string[];
  ids?: readonly string[];
  /** `dead_at` at or after / before these instants. */
  deadAfter?: Date;
  deadBefore?: Date;
}

/** Params of {@link AdminStore.deadLetterList}: newest `dead_at` first. */
export interface DeadLetterListParams {
  filter: DeadLetterFilter;
  cursor?: string | null;
  /** Rows per page, 1–1000. */
  limit: number;
}

/** A queue: its configuration and counts. */
export interface QueueInfo {
  name: string;
  /** Paused now: by an operator (until a resume), or by a handler until {@link pausedUntil}. */
  paused: boolean;
  /**
   * When a timed pause ends (`ctx.rateLimited(ms, { scope: "queue" })`, docs/flow-control.md),
   * database clock; null for an operator's pause or a queue not paused.
   */
  pausedUntil: Date | null;
  /** Most processing rows at once across every worker; null = no limit. */
  maxRunning: number | null;
  /**
   * **Seconds** a due job may wait with no live worker able to run it before the maintenance
   * leader dead-letters it (`no_capable_worker`); null = never (the default).
   */
  unclaimableAfter: number | null;
  queued: number;
  processing: number;
  /** Seconds since the oldest due queued job became due (0 when none), database clock. */
  oldestDueAgeSeconds: number;
  /** When the configuration last changed; null for a queue with no configuration row. */
  updatedAt: Date | null;
}

/**
 * One key's rate-limit state (docs/flow-control.md): its starts in the window and its pause by a
 * handler (`ctx.rateLimited` with scope `"key"`).
 */
export interface RateKeyInfo {
  /** The key. */
  key: string;
  /** Starts of the key still inside their window (`soniq_rate_starts`). */
  startsInWindow: number;
  /** When its earliest such start leaves its window, freeing a start (database clock); null: none. */
  nextWindowAt: Date | null;
  /** When a handler's pause of the key ends (database clock); null: not paused. */
  pausedUntil: Date | null;
}

/**
 * One key's jobs in one queue, as {@link AdminStore.keyFlowList} reads them (docs/flow-control.md,
 * "Seeing what a limit holds back"): the raw counts from which the held counts are computed.
 */
export interface KeyFlowRow {
  /** The queue. */
  queue: string;
  /** The concurrency/rate key. */
  key: string;
  /** Queued jobs of the key in this queue that are due now (database clock). */
  due: number;
  /** `processing` jobs of the key in **every** queue (what its concurrency limit counts). */
  running: number;
  /** The smallest concurrency limit of the key's jobs in this queue; null: none has one. */
  concurrencyLimit: number | null;
  /** The smallest rate limit (starts per window) of the key's jobs in this queue; null: none. */
  rateLimit: number | null;
  /** Starts of the key still inside their window (`soniq_rate_starts`). */
  startsInWindow: number;
  /** When the earliest such start leaves its window (database clock); null: none. */
  firstStartExpiresAt: Date | null;
  /** When a handler's pause of the key ends (database clock); null: not paused. */
  pausedUntil: Date | null;
}

/** Params of {@link AdminStore.queueSet}: fields left out keep their value. */
export interface QueueSetParams {
  name: string;
  paused?: boolean;
  /** null removes the limit. */
  maxRunning?: number | null;
  /** **Seconds**; null turns it off. See {@link QueueInfo.unclaimableAfter}. */
  unclaimableAfter?: number | null;
}

/**
 * Params of {@link AdminStore.queueHistory}: the window is the minutes from
 * `now − windowSeconds` (rounded down to its minute) to now, database clock.
 */
export interface QueueHistoryParams {
  /** One queue; null or left out: every queue summed. */
  queue?: string | null;
  /**
   * How far back, in **seconds**: 60 to {@link HISTORY_MAX_WINDOW_SECONDS} (older minutes are
   * folded into one row and have no per-minute history).
   */
  windowSeconds: number;
}

/** The longest window of {@link AdminStore.queueHistory}, in seconds (24 h). */
export const HISTORY_MAX_WINDOW_SECONDS = 86_400;

/**
 * One minute of history from the counters (`soniq_job_counts`; docs/backends.md, "Counting
 * without scanning"). Each count is of events that happened in that minute, by the database
 * clock.
 */
export interface HistoryPoint {
  /** The minute's start (whole minute, database clock). */
  minute: Date;
  /** Jobs that finished `done`. */
  done: number;
  /** Failed attempts (an error or `job_timeout`) that were requeued for a retry. */
  failed: number;
  /**
   * Jobs moved to the dead-letter queue, for any reason (attempts exhausted, crash loop, a remote
   * failure, an unknown job). The attempt that ended there is counted here, not in `failed`.
   */
  dead: number;
  /** Jobs cancelled (while queued, or a cancel request honoured). */
  cancelled: number;
  /**
   * Mean **seconds** from due (`scheduled_at`) to start of the jobs counted in `done`; null when
   * `done` is 0.
   */
  waitAvgSeconds: number | null;
}

/** What {@link AdminStore.queueHistory} returns. */
export interface QueueHistory {
  /** The queue asked for, or null for every queue. */
  queue: string | null;
  /** Start of the first minute of the window (database clock). */
  since: Date;
  /** The database's now when read (the last minute is still filling). */
  until: Date;
  /**
   * Minutes of the window that counted anything, oldest first; minutes with no event are left
   * out (read them as zeros).
   */
  points: HistoryPoint[];
}

/** A worker as listed: its row, what it declared, and what it holds. */
export interface WorkerDetail extends WorkerRow {
  /** The heartbeat timeout it declared (seconds); null for a worker of an older version. */
  heartbeatTimeoutSeconds: number | null;
  /** Its shutdown state (`STOPPED` once its row says stopped). */
  shutdownState: WorkerShutdownState;
  drainStartedAt: Date | null;
  deadlineAt: Date | null;
  /** Seconds since its last heartbeat, database clock. */
  heartbeatAgeSeconds: number;
  /** Not stopped and heartbeat within its declared timeout (or the caller's default). */
  live: boolean;
  /** Ids of the `processing` rows it owns. */
  inFlight: string[];
}

/** One job's progress as a heartbeat carries it (fenced by the claim's owner). */
export interface ProgressReport {
  id: string;
  owner: Owner;
  /** 0..1. */
  fraction: number;
  message: string | null;
}

/** Params of {@link AdminStore.workerBeat}. */
export interface WorkerBeatParams {
  workerId: string;
  /** The row's status (`running` until the drain starts). */
  status: "running" | "draining";
  shutdownState: WorkerShutdownState;
  /** Seconds since the drain started (database now minus this), or null. */
  drainElapsedSeconds: number | null;
  /** Seconds until the shutdown deadline (database now plus this), or null. */
  deadlineInSeconds: number | null;
  /** Progress buffered since the last beat. */
  progress: readonly ProgressReport[];
}

/** The operations contract. See the module comment. */
export interface AdminStore {
  /**
   * Jobs matching `filter`, newest first, one page; rows carry no result (see {@link JobListItem}).
   * @throws SoniqError `INVALID_OPTION` (bad cursor).
   */
  jobList(params: JobListParams): Promise<Page<JobListItem>>;
  /** How many jobs match `filter`. */
  jobCount(params: { filter: JobFilter }): Promise<number>;
  /** Counts per queue × status, dead letters as status `dead_letter`; zero cells left out. */
  jobCountByQueueStatus(params: Record<string, never>): Promise<QueueStatusCount[]>;
  /** One job with its result and controls (cancel request, progress), or null. */
  jobDetail(params: { id: string }): Promise<JobDetailRow | null>;

  /** Appends timeline events (one write). */
  jobEventsAppend(params: { events: readonly NewJobEvent[] }): Promise<void>;
  /** A job's timeline events in append order. */
  jobEventsList(params: { jobId: string }): Promise<JobEvent[]>;
  /** Deletes events older than `olderThanSeconds`, at most `limit`; returns how many. */
  jobEventsPrune(params: { olderThanSeconds: number; limit: number }): Promise<number>;
  /** Deletes at most `limit` job controls whose job is gone (pruned, deleted, dead-lettered). */
  jobControlsPrune(params: { limit: number }): Promise<number>;

  /**
   * Cancels a queued job at once (`cancelled`, kept `retentionSeconds`), or stores a cancel
   * request on a processing one (owner and status unchanged) and notifies its owner. Appends the
   * `cancelled` / `cancel_requested` event in the same write.
   */
  jobCancelRequest(params: { id: string; retentionSeconds: number }): Promise<CancelRequestState>;
  /**
   * The owner records the cancel: `cancelled`, `finished_at` now, kept `retentionSeconds`, owner
   * cleared. Fenced (docs/backends.md, "Fencing"): `false` when `owner` no longer holds the claim.
   */
  jobCancelFinish(params: { id: string; owner: Owner; retentionSeconds: number }): Promise<boolean>;
  /**
   * Run now: a queued job becomes due now; a `done` or `cancelled` job goes back to `queued`, due
   * now (attempts kept, result and cancel request cleared). `processing` is refused.
   */
  jobRetryNow(params: { id: string }): Promise<JobActionState>;
  /** Deletes a job that is not processing (and its controls); `processing` is refused. */
  jobDelete(params: { id: string }): Promise<JobActionState>;
  /**
   * Subscribes to cancel requests for jobs this process may own (a notification on PostgreSQL,
   * in-process elsewhere). Best effort: the heartbeat also reports them. Returns unsubscribe.
   */
  subscribeCancel(listener: (jobId: string) => void): () => void;

  /** Dead letters matching `filter`, newest `dead_at` first, one page. */
  deadLetterList(params: DeadLetterListParams): Promise<Page<DeadLetterRow>>;
  /** How many dead letters match `filter`. */
  deadLetterCount(params: { filter: DeadLetterFilter }): Promise<number>;
  /** Every dead letter counted by its `reason`, in one read (reasons with none are absent). */
  deadLetterCountByReason(): Promise<Record<string, number>>;
  /** Deletes these dead letters; returns how many went. */
  deadLetterDelete(params: { ids: readonly string[] }): Promise<number>;
  /** Deletes dead letters older than `olderThanSeconds`, at most `limit`; returns how many. */
  deadLetterPrune(params: { olderThanSeconds: number; limit: number }): Promise<number>;

  /** Every queue that has jobs or a configuration row, by name. */
  queueList(params: Record<string, never>): Promise<QueueInfo[]>;
  /**
   * Keys with starts in their rate-limit window or a pause, most starts first (then by key), at
   * most `limit` (>= 1). Reads `soniq_rate_starts` and `soniq_rate_pauses` only.
   */
  rateKeyList(params: { limit: number }): Promise<RateKeyInfo[]>;
  /**
   * Every key with `queued` or `processing` jobs in `queue` (null: every queue), one row per queue
   * and key, in no particular order. One grouped read of the keyed rows (the keyed partial indexes)
   * and the two small rate tables; its cost grows with the keyed jobs queued and running, never
   * with history, and the answer has one row per queue and key.
   */
  keyFlowList(params: { queue: string | null }): Promise<KeyFlowRow[]>;
  /**
   * Per-minute history of finished, failed, dead-lettered and cancelled jobs and the mean wait,
   * read from the counters only (a few rows per queue, kind and minute: never the job tables),
   * so its cost does not grow with history. The caller validates `windowSeconds`.
   */
  queueHistory(params: QueueHistoryParams): Promise<QueueHistory>;
  /**
   * Creates or updates a queue's configuration. Resuming wakes the queue's workers (a
   * notification on PostgreSQL, in-process elsewhere; other SQLite processes poll).
   */
  queueSet(params: QueueSetParams): Promise<QueueInfo>;

  /** Records what a starting worker declares: its heartbeat timeout, in seconds. */
  workerDeclare(params: { workerId: string; heartbeatTimeoutSeconds: number }): Promise<void>;
  /**
   * The worker's heartbeat: `last_heartbeat_at` now, its status and shutdown state, and the
   * buffered progress of its jobs (each fenced), in one write.
   * @returns The ids of its processing jobs that have a cancel request.
   */
  workerBeat(params: WorkerBeatParams): Promise<{ cancelRequested: string[] }>;
  /**
   * Workers, newest first. Liveness uses each worker's declared heartbeat timeout, or
   * `defaultHeartbeatTimeoutSeconds` for a worker that declared none.
   */
  workerDetails(params: { defaultHeartbeatTimeoutSeconds: number }): Promise<WorkerDetail[]>;
  /**
   * Records again what a running worker can run (`job_versions`: per job name, its definition's
   * version), after definitions were added to it since it registered. An unknown id changes
   * nothing.
   */
  workerRecordJobs(params: {
    workerId: string;
    jobVersions: Readonly<Record<string, number>>;
  }): Promise<void>;
  /**
   * What each live worker can run (job names and versions it recorded at registration), for
   * the leader's search for jobs no live worker can run. Liveness as {@link workerDetails}.
   */
  workerCapabilities(params: {
    defaultHeartbeatTimeoutSeconds: number;
  }): Promise<WorkerCapability[]>;
  /**
   * The distinct (queue, name, version) groups of queued jobs, in that order, read by skipping
   * through an index of queued rows (one probe per group, whatever the backlog; never finished
   * jobs). A group may hold only jobs not yet due.
   */
  jobQueuedGroups(params: Record<string, never>): Promise<QueuedGroup[]>;
  /**
   * For each of `groups`: its queued jobs that are due (count and the oldest one's age), by the
   * database clock; groups with no due job are left out. Reads only those groups' index ranges.
   */
  jobQueuedGroupCounts(params: { groups: readonly QueuedGroup[] }): Promise<QueuedGroupCount[]>;
  /**
   * Moves at most `limit` queued jobs of one group, due for at least `dueForSeconds`, to the
   * dead-letter queue (same id, in exactly one table; dedup key released; counted `dead`), with
   * `reason` and `error` as `last_error`; attempts unchanged (they never ran).
   * @returns The moved jobs' ids.
   */
  jobDeadLetterQueued(params: DeadLetterQueuedParams): Promise<string[]>;
}

/** A live worker's recorded capability ({@link AdminStore.workerCapabilities}). */
export interface WorkerCapability {
  workerId: string;
  /** The queues it serves; null: every queue. */
  queues: readonly string[] | null;
  /**
   * Per job name it has a definition for, that definition's version (it claims jobs of that
   * name up to that version). null: unknown, a worker of an earlier release that recorded none
   * (treated as able to run any job of its queues).
   */
  jobVersions: Readonly<Record<string, number>> | null;
}

/** Queued jobs of one queue, name and version ({@link AdminStore.jobQueuedGroups}). */
export interface QueuedGroup {
  queue: string;
  name: string;
  version: number;
}

/** The due queued jobs of one group ({@link AdminStore.jobQueuedGroupCounts}). */
export interface QueuedGroupCount extends QueuedGroup {
  /** Due queued jobs (>= 1). */
  count: number;
  /** **Seconds** since the oldest of them became due, database clock. */
  oldestAgeSeconds: number;
}

/** Params of {@link AdminStore.jobDeadLetterQueued}. */
export interface DeadLetterQueuedParams extends QueuedGroup {
  /** Only jobs due for at least this many **seconds** (>= 0). */
  dueForSeconds: number;
  /** The dead-letter reason, e.g. `no_capable_worker`. */
  reason: string;
  /** Stored as `last_error`. */
  error: string;
  /** At most this many jobs (>= 1). */
  limit: number;
}

/** The prefix of a cancel notification payload (never a queue name: queues cannot hold `!`). */
export const CANCEL_NOTIFY_PREFIX = "!cancel ";
