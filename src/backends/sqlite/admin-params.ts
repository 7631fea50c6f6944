/**
 * Parameters and rows of the SQLite operations statements (sql.ts "Operations"): the contract's
 * filters as named parameters (lists as JSON arrays, times as ms), the shapes of the listed and the
 * one-job rows (mapped by rows.ts `toListed`, `toDetailed`), queue and worker rows.
 */
import type {
  DeadLetterFilter,
  JobFilter,
  QueueInfo,
  WorkerDetail,
  WorkerShutdownState,
} from "../contract/index.js";
import { jobTablesFor } from "../shared/job-tables.js";
import { dateOrNull } from "./clock.js";
import {
  type ControlsRecord,
  type JobListRecord,
  type JobRecord,
  toWorkerRow,
  type WorkerRecord,
} from "./rows.js";

/** A `jobList` row: the job without its result, and its controls (rows.ts `toListed`). */
export type ListedRecord = JobListRecord & ControlsRecord;

/** A `jobGet` row: the whole job and its controls (rows.ts `toDetailed`). */
export type DetailedRecord = JobRecord & ControlsRecord;

export const list = (values: readonly string[] | undefined) =>
  values === undefined ? null : JSON.stringify(values);
export const ms = (date: Date | undefined) => (date === undefined ? null : date.getTime());

/** A JSON path (`$."a"."b"`) for SQLite's json functions, from object keys. */
export function jsonPath(path: readonly string[]): string {
  return `$${path.map((key) => `.${JSON.stringify(key)}`).join("")}`;
}

/**
 * The job filter as named parameters (sql.ts `JOB_FILTER`), plus `@live` and `@finished`: 1 for
 * each job table the filter can match (shared/job-tables.ts; sql.ts `jobListArm`).
 */
export function jobFilterParams(f: JobFilter): Record<string, unknown> {
  const tables = jobTablesFor(f);
  return {
    live: tables === "finished" ? 0 : 1,
    finished: tables === "live" ? 0 : 1,
    statuses: list(f.status),
    queues: list(f.queue),
    names: list(f.name),
    ids: list(f.ids),
    dedupKey: f.dedupKey ?? null,
    errorText: f.errorContains ?? null,
    argsPath: f.args ? jsonPath(f.args.path) : null,
    argsValue: f.args ? f.args.value : null,
    createdAfter: ms(f.createdAfter),
    createdBefore: ms(f.createdBefore),
    finishedAfter: ms(f.finishedAfter),
    finishedBefore: ms(f.finishedBefore),
  };
}

export function deadFilterParams(f: DeadLetterFilter): Record<string, unknown> {
  return {
    reasons: list(f.reason),
    queues: list(f.queue),
    names: list(f.name),
    ids: list(f.ids),
    deadAfter: ms(f.deadAfter),
    deadBefore: ms(f.deadBefore),
  };
}

/** A row of the `queueList` statement. */
export interface QueueRecord {
  name: string;
  paused: number;
  paused_until: number | null;
  max_running: number | null;
  unclaimable_after: number | null;
  updated_at: number | null;
  queued: number;
  processing: number;
  oldest_due_ms: number;
}

/** Converts a `queueList` row. */
export function toQueueInfo(r: QueueRecord): QueueInfo {
  return {
    name: r.name,
    paused: r.paused === 1,
    pausedUntil: dateOrNull(r.paused_until),
    maxRunning: r.max_running,
    unclaimableAfter: r.unclaimable_after,
    queued: r.queued,
    processing: r.processing,
    oldestDueAgeSeconds: Math.max(0, r.oldest_due_ms) / 1000,
    updatedAt: dateOrNull(r.updated_at),
  };
}

/** A row of the `workerList` statement. */
export type WorkerDetailRecord = WorkerRecord & {
  heartbeat_timeout_ms: number | null;
  shutdown_state: string;
  drain_started_at: number | null;
  deadline_at: number | null;
  age_ms: number;
  live: number;
  in_flight: string;
};

/** Converts a `workerList` row (a stopped row's shutdown state reads STOPPED). */
export function toWorkerDetail(r: WorkerDetailRecord): WorkerDetail {
  return {
    ...toWorkerRow(r),
    heartbeatTimeoutSeconds: r.heartbeat_timeout_ms === null ? null : r.heartbeat_timeout_ms / 1000,
    shutdownState: (r.status === "stopped" ? "STOPPED" : r.shutdown_state) as WorkerShutdownState,
    drainStartedAt: dateOrNull(r.drain_started_at),
    deadlineAt: dateOrNull(r.deadline_at),
    heartbeatAgeSeconds: Math.max(0, r.age_ms) / 1000,
    live: r.live === 1,
    inFlight: JSON.parse(r.in_flight) as string[],
  };
}
