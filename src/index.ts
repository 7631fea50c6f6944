/**
 * Soniq: background jobs for Node.js in PostgreSQL (production), SQLite (embedded default) or
 * memory (tests), with a graceful-shutdown contract. This is the only module users import.
 */
/**
 * The backend contract's types. `Backend` is `@internal`: not a stable public API, it may change
 * in any release (docs/backends.md); it is exported for tests that inject a backend.
 */

export type { BatchesAdmin, BatchView } from "./admin/batches-admin.js";
export type { BulkOptions, BulkResult } from "./admin/bulk.js";
export type {
  DeadLetterBulkRequest,
  DeadLetterPage,
  DeadLettersAdmin,
} from "./admin/dead-letters-admin.js";
export type {
  DeadLetterQuery,
  Instant,
  JobQuery,
  OneOrMany,
  PageOptions,
} from "./admin/filters.js";
export type { FlowCancelResult, FlowsAdmin, FlowView } from "./admin/flows-admin.js";
export type {
  CancelResult,
  JobBulkRequest,
  JobPage,
  JobsAdmin,
  StepAnswer,
} from "./admin/jobs-admin.js";
export type {
  BulkResultJson,
  ErrorJson,
  JobActionJson,
  JobDetailJson,
  JobJson,
  JobValuesJson,
  QueueJson,
  RemoteJobJson,
  RemotePollNowJson,
  RemoteResolveJson,
  ScheduleActionJson,
  ScheduleDetailJson,
  ScheduleJson,
  ScheduleRunJson,
  ScheduleRunNowJson,
  StatusJson,
  StatusQueueJson,
  TimelineEntryJson,
  WorkerJson,
} from "./admin/json/index.js";
export type { KeyFlow, QueueFlow } from "./admin/key-flow.js";
export type {
  QueueFlowOptions,
  QueueHistoryOptions,
  QueueSettings,
  QueuesAdmin,
} from "./admin/queues-admin.js";
export type { JobStats } from "./admin/remote-split.js";
export type {
  DeadLetterView,
  JobDetail,
  JobListView,
  JobView,
  TimelineEntry,
  TimelineKind,
} from "./admin/views.js";
export type { WaitForOptions } from "./admin/wait-for-job.js";
export type { AdmissionBudget } from "./backends/contract/admission.js";
export type {
  DependencyEnd,
  DependencyFailurePolicy,
  FlowJobRow,
} from "./backends/contract/flow-store.js";
export type {
  Backend,
  BackendKind,
  ClaimedJob,
  DeadLetterRow,
  EnqueueResult,
  HistoryPoint,
  JobListStatus,
  JobRow,
  JobStatus,
  NewJob,
  Owner,
  PgQueryable,
  QueueHistory,
  QueueInfo,
  QueueStats,
  RateKeyInfo,
  ScheduleOutcome,
  ScheduleRow,
  ScheduleRunRow,
  ScheduleSpec,
  WorkerDetail,
  WorkerRow,
  WorkerShutdownState,
  WorkerStatus,
} from "./backends/contract/index.js";
export { PHASE_TRANSITIONS } from "./backends/contract/phases.js";
export type {
  AnswerResult,
  SubmissionCounts,
  SubmissionFilter,
  SubmissionPhase,
  SubmissionRecord,
} from "./backends/contract/submission-store.js";
export { MemoryBackend, type MemoryBackendOptions } from "./backends/memory/memory-backend.js";
export { parseDatabaseUrl } from "./backends/select.js";
export { isSoniqError, SoniqError, type SoniqErrorCode } from "./errors.js";
export type { Batch, BatchJobSpec, BatchSpec } from "./jobs/batch.js";
export type { ConcurrencySettings } from "./jobs/concurrency.js";
export {
  type DependencyResult,
  JobCancelledError,
  type JobContext,
  JobTimeoutError,
  type ScheduleContext,
  ShutdownTimeoutError,
  type StepDecision,
  type StepOptions,
} from "./jobs/context.js";
export type { EnqueueOptions } from "./jobs/enqueue-options.js";
export type { EnqueuedJob } from "./jobs/enqueued-job.js";
export type { FlowOptions, FlowSpec } from "./jobs/flow.js";
export type { RemoteJobOptions } from "./jobs/job-definition.js";
export {
  JobDefinition,
  type JobHandler,
  type JobKind,
  type JobOptions,
  type JobSettings,
  type SyncJobOptions,
} from "./jobs/job-definition.js";
export type { RateLimitSettings } from "./jobs/rate-limit.js";
export {
  RateLimited,
  type RateLimitedOptions,
  type RateLimitScope,
  rateLimited,
} from "./jobs/rate-limited.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./jobs/retry-policy.js";
export { Snooze, snooze } from "./jobs/snooze.js";
export type { StopReason, ThreadJobContext } from "./jobs/thread-context.js";
export type {
  AnyEventListener,
  EventListener,
  EventMap,
  EventSubscriber,
  Unsubscribe,
} from "./observability/event-bus.js";
export type {
  BatchFinishedEvent,
  DrainStartedEvent,
  FlowFinishedEvent,
  FlowsFinishedSample,
  ForceTimeoutPathEvent,
  JobCancelledEvent,
  JobDeadLetteredEvent,
  JobEnqueuedEvent,
  JobFencedOutEvent,
  JobFrozenEvent,
  JobRecoveredEvent,
  JobStartedEvent,
  QueueMetricsEvent,
  QueueSample,
  ScheduleOccurrenceEvent,
  ScopePausedEvent,
  ShutdownNackEvent,
  SoniqEventMap,
  SoniqEventName,
  WaitForThreadEvent,
  WorkerJobEvent,
  WorkerStartedEvent,
  WorkerStoppedEvent,
} from "./observability/events.js";
export {
  type HealthHandler,
  type HealthHandlerOptions,
  healthHandler,
  type ProbedWorker,
} from "./observability/health/health-handler.js";
export { HealthServer, type HealthServerOptions } from "./observability/health/health-server.js";
export { createLogger, type Logger } from "./observability/logger.js";
export type { MetricsSink } from "./observability/metrics.js";
export type { Tracing } from "./observability/tracing.js";
export type { CircuitBreakerOptions, CircuitState } from "./remote/circuit-breaker.js";
export { DISPOSITIONS, type HandoffAction } from "./remote/dispositions.js";
export type { RemoteAdmin, RemoteTarget } from "./remote/remote-admin.js";
export type {
  RemoteJobContext,
  RemotePollContext,
  RemoteSubmitContext,
} from "./remote/remote-job.js";
export {
  type Accepted,
  accepted,
  type Done,
  done,
  type Failed,
  failed,
  MAX_TASK_ID_LENGTH,
  type NotSubmitted,
  notSubmitted,
  type Pending,
  type PollResult,
  pending,
  type ReconcileResult,
  type SubmitResult,
} from "./remote/results.js";
export type { PreviewOptions, ScheduleAdmin, ScheduleDetails } from "./scheduler/admin.js";
export type { SyncReport } from "./scheduler/reconcile.js";
export type {
  MissedOptions,
  ScheduleDefinition,
  ScheduleEnqueueOptions,
  ScheduleOptions,
} from "./scheduler/schedule-definition.js";
export type { SoniqSettings, SoniqSettingsInput } from "./settings.js";
export { envName, resolveSettings } from "./settings-resolution.js";
export {
  type DeadLetterJob,
  type EnqueueManyItem,
  isSoniq,
  type Job,
  Soniq,
  type SoniqOptions,
} from "./soniq.js";
export type { ExitReason, ShutdownState } from "./worker/shutdown-machine.js";
export { Worker, type WorkerExit, type WorkerOptions } from "./worker/worker.js";
