/**
 * What the dashboard reads and changes: the admin API of the instance (`soniq.jobs`,
 * `soniq.deadLetters`, `soniq.queues`, `soniq.workers()`, issue 14; `soniq.schedules`,
 * `soniq.remote`, `soniq.flows`, `soniq.batches`) — the one source for the CLI, the dashboard and metrics (docs/operations.md) —
 * plus the logger and event bus the audit writes to. A `Soniq` instance is one; nothing beneath the
 * admin API (no store, no SQL) is reached.
 */
import type { BatchesAdmin } from "../admin/batches-admin.js";
import type { DeadLettersAdmin } from "../admin/dead-letters-admin.js";
import type { DeadLetterQuery, JobQuery } from "../admin/filters.js";
import type { FlowsAdmin } from "../admin/flows-admin.js";
import type { JobsAdmin } from "../admin/jobs-admin.js";
import type { QueuesAdmin } from "../admin/queues-admin.js";
import type { DeadLetterView, JobListView, JobView, TimelineEntry } from "../admin/views.js";
import type { WorkerDetail } from "../backends/contract/admin-store.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import type { RemoteAdmin } from "../remote/remote-admin.js";
import type { ScheduleAdmin } from "../scheduler/admin.js";

/** The job filters the dashboard passes through (the admin API's `JobQuery`). */
export type DashboardJobQuery = JobQuery;
/** The dead-letter filters the dashboard passes through (the admin API's `DeadLetterQuery`). */
export type DashboardDeadLetterQuery = DeadLetterQuery;
/** A job (with its result) or a dead-letter entry as the admin API shows one. */
export type SourceJob = JobView | DeadLetterView;
/** A job or a dead-letter entry as the admin API lists it (a job without its result). */
export type SourceListJob = JobListView | DeadLetterView;
/** One entry of a job's timeline. */
export type SourceTimelineEntry = TimelineEntry;

/** The admin API as the dashboard uses it: a `Soniq` instance satisfies it. */
export interface DashboardSource {
  readonly jobs: Pick<
    JobsAdmin,
    | "list"
    | "count"
    | "countByQueueStatus"
    | "get"
    | "cancel"
    | "retry"
    | "delete"
    | "bulk"
    | "waitingForWorker"
    | "resolveStep"
    | "clearCheckpoint"
  >;
  readonly deadLetters: Pick<
    DeadLettersAdmin,
    | "list"
    | "count"
    | "countByReason"
    | "get"
    | "replay"
    | "delete"
    | "replayMany"
    | "deleteMany"
    | "export"
  >;
  readonly queues: Pick<QueuesAdmin, "list" | "history" | "flow" | "pause" | "resume" | "set">;
  /** Schedules: list, show, pause, resume, run now. */
  readonly schedules: Pick<ScheduleAdmin, "list" | "show" | "pause" | "resume" | "runNow">;
  /** Remote jobs: list, show, counts, resolve a frozen one, poll now. */
  readonly remote: Pick<RemoteAdmin, "list" | "show" | "counts" | "resolve" | "pollNow">;
  /**
   * Flows: one flow's jobs and states; the flow or batch a job belongs to; whether an id is a
   * batch's; cancelling a flow (docs/workflows.md).
   */
  readonly flows: Pick<FlowsAdmin, "get" | "of" | "isBatch" | "cancel">;
  /** Batches: one batch's counts, callbacks and members; cancelling a batch. */
  readonly batches: Pick<BatchesAdmin, "get" | "cancel">;
  /** Worker incarnations with their shutdown state. */
  workers(): Promise<WorkerDetail[]>;
  /** Where audit lines go. */
  readonly logger: Logger;
  /** Where the `dashboard_action` audit event is emitted. */
  readonly eventBus: EventBus<SoniqEventMap>;
}
