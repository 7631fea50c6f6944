/**
 * The event catalogue: every event Soniq emits, by name, with its payload type. This is the one
 * list (docs/events.md renders it for readers); an event not declared here cannot be emitted.
 *
 * Names are snake_case and stable: they reach metrics sinks as strings. Payload fields are
 * snake_case like log fields. Instants are ISO 8601 strings (UTC); durations say their unit in
 * the field name (`_ms` = milliseconds). Job ids and worker ids are the ones stored in the job
 * tables and `soniq_workers`.
 */
import type { BackendKind, ScheduleOutcome } from "../backends/contract/index.js";
import type {
  RemoteHandoffEvent,
  RemotePhaseEvent,
  RemotePollEvent,
  RemoteReconcileEvent,
  RemoteSubmitEvent,
} from "./remote-events.js";

export type {
  RemoteHandoffEvent,
  RemotePhaseEvent,
  RemotePollEvent,
  RemoteReconcileEvent,
  RemoteSubmitEvent,
} from "./remote-events.js";

/** Fields every event about one job run by a worker carries. */
export type WorkerJobEvent = {
  /** The worker incarnation that ran the job. */
  worker_id: string;
  /** The job's id. */
  job_id: string;
  /** The job's registered name. */
  job_name: string;
  /** The job's queue. */
  queue: string;
  /**
   * Milliseconds from the handler's start to its outcome (the outcome write is not included).
   * Absent when the worker recorded a failure of its own (an unexpected error around the handler).
   */
  duration_ms?: number;
};

/** Payload of `scope_paused`. */
export type ScopePausedEvent = WorkerJobEvent & {
  /** What paused: `job` (this job only), `key` (every job of `key`), `queue` (every job of `queue`). */
  scope: "job" | "key" | "queue";
  /** The key paused (scope `key`); null otherwise. A job without a key pauses itself only (`job`). */
  key: string | null;
  /** How long, in milliseconds. */
  paused_ms: number;
};

/** Payload of `worker_started`. */
export type WorkerStartedEvent = {
  /** The new worker incarnation's id. */
  worker_id: string;
  /** Its slots: jobs run at once. */
  concurrency: number;
  /** The queues it claims from; `null` = all. */
  queues: string[] | null;
  /** The backend it runs on. */
  backend: BackendKind;
};

/** Payload of `job_started`. */
export type JobStartedEvent = {
  worker_id: string;
  job_id: string;
  job_name: string;
  queue: string;
  /** The attempt now running (1 for the first run; NACKs and recoveries do not count). */
  attempt: number;
  /**
   * Milliseconds from the job's due time (`scheduled_at`: enqueue, or the end of a delay, retry
   * back-off or snooze) to its handler's start; 0 when the clocks disagree.
   */
  wait_ms: number;
  /** The trace context stored with the job at enqueue (see docs/tracing.md), or `null`. */
  trace_context: string | null;
};

/** Payload of `job_enqueued`. */
export type JobEnqueuedEvent = {
  job_id: string;
  job_name: string;
  queue: string;
};

/** Payload of `job_frozen`: the {@link WorkerJobEvent} fields and the frozen step's name. */
export type JobFrozenEvent = WorkerJobEvent & {
  /** The effect step whose outcome is unknown. */
  step: string;
};

/** Payload of `job_cancelled`. */
export type JobCancelledEvent = {
  job_id: string;
  job_name: string;
  queue: string;
};

/** Payload of `job_fenced_out`. */
export type JobFencedOutEvent = {
  worker_id: string;
  job_id: string;
  job_name: string;
  queue: string;
  /** The refused write. */
  op: "complete" | "retry" | "snooze" | "nack" | "dead_letter" | "cancel" | "freeze";
};

/** One queue in a `queue_metrics` sample. */
export type QueueSample = {
  queue: string;
  /** Jobs in this queue, by status (live and finished). */
  queued: number;
  /** `processing` rows a worker runs: remote jobs are counted apart, below. */
  processing: number;
  done: number;
  cancelled: number;
  /** Entries of `soniq_dead_letter_jobs` from this queue. */
  dead_letter: number;
  /** Remote jobs whose submit request is in flight (phase `submitting`). */
  remote_submitting: number;
  /** Remote jobs awaiting the remote side's answer (phase `accepted`). */
  remote_accepted: number;
  /** Remote jobs frozen (no usable answer; reconcile or an operator decides). */
  remote_frozen: number;
  /**
   * Milliseconds since the oldest **due** queued job became due (database clock); 0 when no job
   * is due. A job delayed into the future is not late and does not count.
   */
  oldest_claimable_age_ms: number;
  /**
   * Due queued jobs held back by a per-key concurrency limit: their key runs its limit already
   * (docs/flow-control.md, "Seeing what a limit holds back"); computed on read, 0 without keys.
   */
  held_concurrency: number;
  /** Due queued jobs held back by a rate limit or a handler's key pause; computed on read. */
  held_rate: number;
};

/** Payload of `queue_metrics`. */
export type QueueMetricsEvent = {
  /** The worker (maintenance leader) that sampled. */
  worker_id: string;
  /** When the sample was taken (ISO 8601). */
  sampled_at: string;
  /** Every queue with a job or a dead-letter entry. */
  queues: QueueSample[];
  /**
   * How workers ended, cluster-wide, since the schema was set up (`soniq_worker_exits`): one
   * entry per exit reason seen.
   */
  worker_exits: WorkerExitSample[];
  /**
   * Flows and batches that finished, cluster-wide, since the schema was set up
   * (`soniq_flow_counts`; docs/workflows.md): one entry per kind and outcome seen.
   */
  flows_finished: FlowsFinishedSample[];
};

/** One kind and outcome of finished flows or batches in a `queue_metrics` sample. */
export type FlowsFinishedSample = {
  kind: "flow" | "batch";
  /** A flow: `done`, `failed`, `cancelled`; a batch: `succeeded`, `failed`. */
  outcome: "done" | "failed" | "cancelled" | "succeeded";
  /** How many finished so. */
  count: number;
};

/**
 * Payload of `flow_finished`: a flow's root ended (docs/workflows.md, "Knowing when a flow or
 * batch finished").
 */
export type FlowFinishedEvent = {
  /** The maintenance leader that reported it. */
  worker_id: string;
  /** The flow's id (its root job's id). */
  flow_id: string;
  /** The root's end: `done`, `failed` (dead-lettered) or `cancelled`. */
  outcome: "done" | "failed" | "cancelled";
  /** When the root ended (ISO 8601, database clock). */
  finished_at: string;
};

/** Payload of `batch_finished`: a sealed batch's last member ended. */
export type BatchFinishedEvent = {
  /** The maintenance leader that reported it. */
  worker_id: string;
  batch_id: string;
  /** `succeeded` (every member done) or `failed` (a member dead-lettered or cancelled). */
  outcome: "succeeded" | "failed";
  /** When it finished (ISO 8601, database clock). */
  finished_at: string;
};

/** One exit reason in a `queue_metrics` sample. */
export type WorkerExitSample = {
  /** `drained`, `shutdown_timeout`, `record_failed` or `uncaught_exception`. */
  exit_reason: "drained" | "shutdown_timeout" | "record_failed" | "uncaught_exception";
  /** Workers that stopped with it. */
  exits: number;
  /** The latest such stop (ISO 8601, database clock). */
  last_at: string;
};

/** One queue and job name in a `jobs_waiting_for_worker` report. */
export type WaitingForWorkerSample = {
  queue: string;
  job_name: string;
  /** Due queued jobs of that name that no live worker can run. */
  count: number;
  /** Milliseconds since the oldest of them became due (database clock). */
  oldest_age_ms: number;
  /** `"unknown_name"`, `"version_too_new"` or `"no_worker_for_queue"`. */
  reason: "unknown_name" | "version_too_new" | "no_worker_for_queue";
};

/** Payload of `jobs_waiting_for_worker`. */
export type JobsWaitingForWorkerEvent = {
  /** The worker (maintenance leader) that checked. */
  worker_id: string;
  /** When the check ran (ISO 8601). */
  checked_at: string;
  /** Every queue and name with waiting jobs; empty once none wait any more. */
  waiting: WaitingForWorkerSample[];
};

/** Payload of `drain_started`. */
export type DrainStartedEvent = {
  worker_id: string;
  /** What asked for the stop: `"SIGTERM"`, `"SIGINT"`, `"api"`, `"abort"`, … */
  signal: string;
  /** When the drain began (ISO 8601). */
  drain_started_at: string;
  /** When `shutdown_timeout` runs out and the deadline path is taken (ISO 8601). */
  deadline_at: string;
};

/** Payload of `force_timeout_path`. */
export type ForceTimeoutPathEvent = {
  worker_id: string;
  /** Ids of async jobs still running: their signals are aborted and their rows will be NACK'd. */
  releasing: string[];
  /** Ids of sync jobs whose thread is still running: never NACK'd, waited for. */
  threads: string[];
};

/** Payload of `wait_for_thread`. */
export type WaitForThreadEvent = {
  worker_id: string;
  /** Ids of the sync jobs whose threads the drain waits for. */
  job_ids: string[];
  /**
   * When the `sync_handler_grace_seconds` budget ends (ISO 8601); past it the worker logs an
   * error and keeps waiting without bound.
   */
  grace_ends_at: string;
};

/** Payload of `shutdown_nack`. */
export type ShutdownNackEvent = {
  worker_id: string;
  job_id: string;
  job_name: string;
  queue: string;
  /** Why the row went back to `queued` (attempts unchanged). */
  reason: "shutdown_timeout";
};

/** Payload of `prefetch_released`. */
export type PrefetchReleasedEvent = {
  worker_id: string;
  /**
   * Why the claimed, never-started rows went back: `drain` (the prefetch buffer at drain start),
   * `ttl` (a buffered row not started within its TTL), `late_claim` (a claim answered after drain
   * start).
   */
  reason: "drain" | "ttl" | "late_claim";
  /** The jobs NACK'd back to `queued` (attempts, interruptions and `last_error` unchanged). */
  job_ids: string[];
  /** Rows of the batch the owner fence refused (no longer this worker's claim). */
  fenced_out: number;
};

/** Payload of `job_dead_lettered`. */
export type JobDeadLetteredEvent = {
  job_id: string;
  job_name: string;
  queue: string;
  /** The worker whose last attempt failed; absent when crash recovery moved the job. */
  worker_id?: string;
  /** As in {@link WorkerJobEvent}: milliseconds the last attempt ran; absent for `crash_loop`. */
  duration_ms?: number;
  /**
   * Why: `"max_attempts_exceeded"` (its last attempt failed, or a remote job's retryable failure
   * with no attempt left), `"invalid_result"` (its handler returned a value that is not JSON or
   * over `maxPayloadBytes`: no retry could store it), `"unknown_job"` or `"invalid_args"` (it could not run here; no
   * `duration_ms`), `"crash_loop"` (crash recovery moved it: it kept losing its worker),
   * `"remote_failed"` (a remote job's definite failure), `"remote_timeout"` (past `pollTimeout`),
   * `"preflight_failed"` (a remote job's `preflight` threw; nothing was submitted),
   * `"no_capable_worker"` (the maintenance leader moved it: it waited longer than its queue's
   * `unclaimableAfter` with no live worker able to run it; it never ran).
   */
  reason:
    | "max_attempts_exceeded"
    | "invalid_result"
    | "unknown_job"
    | "invalid_args"
    | "crash_loop"
    | "remote_failed"
    | "remote_timeout"
    | "preflight_failed"
    | "no_capable_worker";
};

/** Payload of `job_recovered`. */
export type JobRecoveredEvent = {
  job_id: string;
  job_name: string;
  queue: string;
  /** The worker incarnation that held the job and is no longer live; `null` when unknown. */
  previous_owner: string | null;
  /** The job's interruption count after this recovery. */
  interruptions: number;
  /**
   * Whether this recovery charged an interruption: false when the job was not known to have
   * started (claimed, not yet running), so `interruptions` did not change.
   */
  charged: boolean;
};

/** Payload of `late_result_discarded`. */
export type LateResultDiscardedEvent = {
  worker_id: string;
  job_id: string;
  job_name: string;
  /** What the run had already been recorded as when the handler settled. */
  after: "shutdown_timeout" | "job_timeout";
  /** How the abandoned handler settled: it returned a value, or threw. */
  settled: "returned" | "threw";
  /** The error's text (at most 300 characters) when it threw. */
  error?: string;
};

/** Payload of `unhandled_rejection`. */
export type UnhandledRejectionEvent = {
  /** The reason's text (at most 500 characters). */
  error: string;
  /** The job whose handler created the rejected promise, when that is known. */
  job_id?: string;
  job_name?: string;
  worker_id?: string;
};

/** Payload of `listen_connection_lost` and `listen_connection_restored`. */
export type ListenConnectionEvent = {
  /** The LISTEN channel. */
  channel: string;
  /** The error that ended the connection (lost only; absent for a plain end). */
  error?: string;
};

/** Payload of `worker_stopped`. */
export type WorkerStoppedEvent = {
  worker_id: string;
  /**
   * How the worker ended (see `WorkerExit.reason`). `"start_failed"` is in the type but never
   * emitted: a worker whose start fails emits no events (its `finished` resolves with it).
   */
  exit_reason: "drained" | "shutdown_timeout" | "record_failed" | "start_failed";
  /** The CLI's exit code: 0 drained, 1 deadline path, 3 outcome not recorded (2 is never emitted). */
  exit_code: 0 | 1 | 2 | 3;
};

/** Payload of `dashboard_action`: one write made through the dashboard (its audit record). */
export type DashboardActionEvent = {
  /** Who did it, as the dashboard's `auth` named them. */
  user: string;
  /** The action, e.g. `jobs.cancel`, `deadLetters.replay`, `queues.pause`. */
  action: string;
  /** The ids or queue names it was applied to (empty for a filter action). */
  ids: string[];
  /** The filter of an action on everything matching, or null. */
  filter: Record<string, unknown> | null;
  /** `ok`, or the error code it was refused with. */
  outcome: string;
  /** What it did, e.g. `{ matched, done, skipped }` of a bulk action, or null. */
  result: Record<string, unknown> | null;
};

/** Payload of `schedule_occurrence`: one occurrence of a schedule got its outcome. */
export type ScheduleOccurrenceEvent = {
  /** The worker incarnation whose scheduler (or heartbeat catch-up) took the occurrence. */
  worker_id: string;
  /** The schedule's id. */
  schedule: string;
  /** The occurrence instant (ISO 8601). */
  occurrence: string;
  /** What happened to it (docs/schedules.md). */
  outcome: ScheduleOutcome;
  /** The job it enqueued (`enqueued`, `late`), else `null`. */
  job_id: string | null;
  /** The job's registered name. */
  job_name: string;
  /** Seconds from the occurrence to the database's now when it was taken (the schedule's lag). */
  lag_seconds: number;
};

/**
 * Every Soniq event: name → payload. Subscribe with `soniq.events.on(name, listener)`; a metrics
 * sink given to `new Soniq({ metrics })` receives the same events as `emit(name, payload)`.
 */
export type SoniqEventMap = {
  /**
   * A worker registered its row and began its services; it claims next. Also calls the metrics
   * sink's `start()` (the sink's `emit` does not receive this event).
   */
  worker_started: WorkerStartedEvent;
  /** A job was inserted (not emitted for a duplicate dedup key). */
  job_enqueued: JobEnqueuedEvent;
  /** A claimed job's handler is about to run (after its arguments were checked). */
  job_started: JobStartedEvent;
  /** A job's handler succeeded and its row is `done`. */
  job_done: WorkerJobEvent;
  /** An attempt failed (error or `job_timeout`) and the job was scheduled for a retry. */
  job_failed: WorkerJobEvent;
  /** A handler snoozed its job: back to `queued` later, no attempt spent. */
  job_snoozed: WorkerJobEvent;
  /**
   * A handler returned `ctx.rateLimited(ms, { scope })` (docs/flow-control.md) and its pause is
   * written: its job is back in `queued` (also a `job_snoozed`) and its scope paused on every
   * worker for `paused_ms`.
   */
  scope_paused: ScopePausedEvent;
  /**
   * A job was frozen: an effect step's outcome is unknown (docs/checkpoints.md, "Frozen jobs");
   * it waits for `soniq.jobs.resolveStep` or a cancel, no attempt spent.
   */
  job_frozen: JobFrozenEvent;
  /**
   * A job moved to the dead-letter queue: its last attempt failed (from a worker) or it kept
   * losing its worker (`reason: "crash_loop"`, from crash recovery). Jobs dead-lettered before
   * they ran (unknown name, invalid arguments) do not emit it yet.
   */
  job_dead_lettered: JobDeadLetteredEvent;
  /** Crash recovery requeued a job whose worker is not live (attempt not spent). */
  job_recovered: JobRecoveredEvent;
  /**
   * A job was cancelled: a queued one by `soniq.jobs.cancel` / `soniq.cancel`, a running one when
   * its worker recorded the operator's cancel.
   */
  job_cancelled: JobCancelledEvent;
  /**
   * A worker's write was refused by the owner fence: the row was no longer its claim (recovered
   * and re-claimed, or finished elsewhere). Nothing was written.
   */
  job_fenced_out: JobFencedOutEvent;
  /**
   * Per-queue counts and the oldest claimable job's age, sampled every `metricsInterval` seconds
   * by the maintenance leader only (one process, not every worker).
   */
  queue_metrics: QueueMetricsEvent;
  /**
   * A flow's root ended (done, dead-lettered or cancelled), reported by the maintenance leader
   * within `heartbeatInterval` seconds (docs/workflows.md).
   */
  flow_finished: FlowFinishedEvent;
  /**
   * A sealed batch's last member ended (or a batch whose members all ended was sealed), reported
   * by the maintenance leader within `heartbeatInterval` seconds (docs/workflows.md).
   */
  batch_finished: BatchFinishedEvent;
  /**
   * Due queued jobs that no live worker can run (unknown name, newer version, or no worker for
   * the queue), checked by the maintenance leader every `heartbeatInterval` seconds: sent while
   * any wait, and once with an empty `waiting` when none wait any more.
   */
  jobs_waiting_for_worker: JobsWaitingForWorkerEvent;
  /** A worker began draining: no new claims; in-flight jobs have until `deadline_at`. */
  drain_started: DrainStartedEvent;
  /** `shutdown_timeout` was reached with jobs still running (FORCE_TIMEOUT_PATH). */
  force_timeout_path: ForceTimeoutPathEvent;
  /** At the deadline, sync handler threads are still running and the drain waits for them. */
  wait_for_thread: WaitForThreadEvent;
  /** At the deadline, an async job's row was NACK'd back to `queued`, attempts unchanged. */
  shutdown_nack: ShutdownNackEvent;
  /**
   * Claimed rows that never started went back to `queued` in one write (the prefetch window,
   * docs/shutdown.md): not a deadline release (the exit code is unaffected), not a failure.
   */
  prefetch_released: PrefetchReleasedEvent;
  /** A remote job's submission phase changed durably (every transition, src/backends/contract/phases.ts). */
  remote_phase: RemotePhaseEvent;
  /** A remote job was released, frozen or handed to polling at the drain deadline or after a crash. */
  remote_handoff: RemoteHandoffEvent;
  /** One poll of an accepted remote task ended (its outcome; every poll, not only phase changes). */
  remote_poll: RemotePollEvent;
  /** One `submit` call of a remote job ended (outcome and duration). */
  remote_submit: RemoteSubmitEvent;
  /** One `reconcile` of a frozen remote job ended (its outcome). */
  remote_reconcile: RemoteReconcileEvent;
  /**
   * An abandoned handler settled after its run was recorded (NACK'd at the deadline, or failed by
   * its `job_timeout`): its value or error was discarded (never written).
   */
  late_result_discarded: LateResultDiscardedEvent;
  /**
   * A promise was rejected and nobody handled it (`soniq worker` installs the handler; it logs
   * and goes on instead of exiting).
   */
  unhandled_rejection: UnhandledRejectionEvent;
  /** PostgreSQL's LISTEN connection dropped; it re-connects by itself, polling covers the gap. */
  listen_connection_lost: ListenConnectionEvent;
  /** PostgreSQL's LISTEN connection is back (re-LISTENed); every queue is woken once. */
  listen_connection_restored: ListenConnectionEvent;
  /** A worker stopped; the last event of its incarnation. Then the metrics sink's `end()` runs. */
  worker_stopped: WorkerStoppedEvent;
  /** A write through the dashboard (issue 16): its audit record, also logged. */
  dashboard_action: DashboardActionEvent;
  /**
   * A schedule's occurrence was taken, exactly once across every worker: enqueued, late (by
   * catch-up within the window), missed, skipped for overlap, or paused.
   */
  schedule_occurrence: ScheduleOccurrenceEvent;
};

/** The name of a Soniq event. */
export type SoniqEventName = keyof SoniqEventMap;
