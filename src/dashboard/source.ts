/**
 * What the dashboard reads and changes: the admin API of the instance (`soniq.jobs`,
 * `soniq.deadLetters`, `soniq.queues`, `soniq.workers()`, issue 14) — the one source for the CLI,
 * the dashboard and metrics (DESIGN.md §6). Declared structurally, as the subset the dashboard
 * calls, so the dashboard depends on the facade's shape and nothing beneath it (no store, no SQL).
 */
import type { Logger } from "../observability/logger.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";

/** A filter value: one or several (any matches). */
type OneOrMany<T> = T | readonly T[];

/** The job filters the dashboard passes through (the admin API's `JobQuery`). */
export interface DashboardJobQuery {
  status?: OneOrMany<"queued" | "processing" | "done" | "cancelled">;
  queue?: OneOrMany<string>;
  name?: OneOrMany<string>;
  id?: OneOrMany<string>;
  dedupKey?: string;
  error?: string;
  args?: { path: string | readonly string[]; equals: string | number | boolean };
  createdAfter?: Date | string;
  createdBefore?: Date | string;
  finishedAfter?: Date | string;
  finishedBefore?: Date | string;
}

/** The dead-letter filters the dashboard passes through (the admin API's `DeadLetterQuery`). */
export interface DashboardDeadLetterQuery {
  reason?: OneOrMany<string>;
  queue?: OneOrMany<string>;
  name?: OneOrMany<string>;
  id?: OneOrMany<string>;
  deadAfter?: Date | string;
  deadBefore?: Date | string;
}

/** Page options of the admin API's lists. */
export interface DashboardPageOptions {
  cursor?: string | null;
  limit?: number;
}

/** The fields of a job the dashboard shows (the admin API's `JobView`). */
export interface SourceJob {
  id: string;
  name: string;
  queue: string;
  status: string;
  args: unknown;
  result?: unknown;
  priority: number;
  attempts: number;
  maxAttempts: number;
  interruptions: number;
  scheduledAt: Date;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt?: Date | null;
  workerId: string | null;
  lastError: string | null;
  dedupKey: string | null;
  cancelRequestedAt?: Date | null;
  progress?: { fraction: number; message: string | null; at: Date | null } | null;
  reason?: string;
  deadAt?: Date;
}

/** One entry of a job's timeline (the admin API's `TimelineEntry`). */
export interface SourceTimelineEntry {
  at: Date;
  kind: string;
  attempt: number | null;
  workerId: string | null;
  detail: string | null;
}

/** What a bulk action did (the admin API's `BulkResult`). */
export interface SourceBulkResult {
  matched: number;
  done: number;
  skipped: number;
  dryRun: boolean;
}

/** Options of every bulk action. */
export interface SourceBulkOptions {
  expectedCount?: number;
  dryRun?: boolean;
  batchSize?: number;
}

/** A queue (the admin API's `QueueInfo`). */
export interface SourceQueue {
  name: string;
  paused: boolean;
  maxRunning: number | null;
  queued: number;
  processing: number;
  oldestDueAgeSeconds: number;
  updatedAt: Date | null;
}

/** A worker incarnation (the admin API's `WorkerDetail`). */
export interface SourceWorker {
  id: string;
  hostname: string;
  pid: number;
  queues: readonly string[] | null;
  concurrency: number;
  status: string;
  startedAt: Date;
  lastHeartbeatAt: Date;
  stoppedAt: Date | null;
  heartbeatTimeoutSeconds: number | null;
  shutdownState: string;
  drainStartedAt: Date | null;
  deadlineAt: Date | null;
  heartbeatAgeSeconds: number;
  live: boolean;
  inFlight: string[];
}

/** The admin API as the dashboard uses it: a `Soniq` instance satisfies it. */
export interface DashboardSource {
  readonly jobs: {
    list(
      query?: DashboardJobQuery,
      page?: DashboardPageOptions,
    ): Promise<{ jobs: SourceJob[]; nextCursor: string | null }>;
    count(query?: DashboardJobQuery): Promise<number>;
    countByQueueStatus(): Promise<Array<{ queue: string; status: string; count: number }>>;
    get(id: string): Promise<(SourceJob & { timeline: SourceTimelineEntry[] }) | null>;
    cancel(id: string): Promise<string>;
    retry(id: string): Promise<void>;
    delete(id: string): Promise<void>;
    bulk(
      request: SourceBulkOptions & {
        action: "cancel" | "retry" | "delete";
        ids?: readonly string[];
        filter?: DashboardJobQuery;
      },
    ): Promise<SourceBulkResult>;
  };
  readonly deadLetters: {
    list(
      query?: DashboardDeadLetterQuery,
      page?: DashboardPageOptions,
    ): Promise<{ deadLetters: SourceJob[]; nextCursor: string | null }>;
    count(query?: DashboardDeadLetterQuery): Promise<number>;
    get(id: string): Promise<SourceJob | null>;
    replay(id: string): Promise<void>;
    delete(id: string): Promise<void>;
    replayMany(
      request: SourceBulkOptions & { ids?: readonly string[]; filter?: DashboardDeadLetterQuery },
    ): Promise<SourceBulkResult>;
    deleteMany(
      request: SourceBulkOptions & { ids?: readonly string[]; filter?: DashboardDeadLetterQuery },
    ): Promise<SourceBulkResult>;
    export(query?: DashboardDeadLetterQuery): AsyncIterable<SourceJob>;
  };
  readonly queues: {
    list(): Promise<SourceQueue[]>;
    pause(name: string): Promise<SourceQueue>;
    resume(name: string): Promise<SourceQueue>;
    set(name: string, settings: { maxRunning?: number | null }): Promise<SourceQueue>;
  };
  workers(): Promise<SourceWorker[]>;
  /** Where audit lines go by default. */
  readonly logger: Logger;
  /** Where the `dashboard_action` audit event is emitted. */
  readonly eventBus: EventBus<SoniqEventMap>;
}
