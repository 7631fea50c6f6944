/**
 * The worker store: rows of `soniq_workers`, one per process incarnation (docs/reliability.md,
 * "Crash recovery, in brief").
 * Times by the database clock; durations in **seconds**.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */
import type { WorkerInfo, WorkerListRow, WorkerStatus } from "./types.js";

/** Params of {@link WorkerStore.workerRegister}: the incarnation to record. */
export interface WorkerRegisterParams extends WorkerInfo {
  /**
   * Per job name the worker has a definition for, that definition's version: recorded on its row
   * (`job_versions`) for the leader's search for jobs no live worker can run. Absent or null:
   * not recorded (read as "unknown": may run any job of its queues).
   */
  jobVersions?: Readonly<Record<string, number>> | null;
}

/** Params of {@link WorkerStore.workerHeartbeat}. */
export interface WorkerHeartbeatParams {
  /** The worker incarnation. */
  workerId: string;
  /** Its lifecycle state now. */
  status: WorkerStatus;
}

/**
 * How a worker's process ended, as counted in `soniq_worker_exits`: `drained` (exit 0),
 * `shutdown_timeout` (the deadline path, exit 1), `record_failed` (exit 3), `uncaught_exception`
 * (exit 4, `soniq worker` only).
 */
export type WorkerExitReason =
  | "drained"
  | "shutdown_timeout"
  | "record_failed"
  | "uncaught_exception";

/** Every {@link WorkerExitReason}, in a fixed order. */
export const WORKER_EXIT_REASONS: readonly WorkerExitReason[] = [
  "drained",
  "shutdown_timeout",
  "record_failed",
  "uncaught_exception",
];

/** Params of {@link WorkerStore.workerMarkStopped}. */
export interface WorkerMarkStoppedParams {
  /** The worker incarnation. */
  workerId: string;
  /**
   * How it ended: counted once in `soniq_worker_exits` in the same write, when the row existed
   * and was not stopped yet (a retried or repeated mark counts nothing). Omitted: not counted.
   */
  exitReason?: WorkerExitReason;
}

/** One exit reason's count (`WorkerStore.workerExitCounts`). */
export interface WorkerExitCount {
  exitReason: WorkerExitReason;
  /** Workers that stopped with it since the schema was set up. */
  exits: number;
  /** The latest such stop, database clock. */
  lastAt: Date;
}

/** Params of {@link WorkerStore.workerList}. */
export interface WorkerListParams {
  /** A worker is live when not stopped and its last heartbeat is within this many **seconds**. */
  heartbeatTimeoutSeconds: number;
}

/** Params of {@link WorkerStore.workerForget}. */
export interface WorkerForgetParams {
  /** Forget rows whose last heartbeat is older than this many **seconds**. */
  notSeenForSeconds: number;
  /** Delete at most this many rows; all when omitted. */
  limit?: number;
}

/** The worker store. */
export interface WorkerStore {
  /** Inserts a worker row (`status='running'`, heartbeat now); re-registering an id resets it. */
  workerRegister(params: WorkerRegisterParams): Promise<void>;
  /** Sets `last_heartbeat_at = now` and `status`; an unknown id changes nothing. */
  workerHeartbeat(params: WorkerHeartbeatParams): Promise<void>;
  /**
   * Sets `status='stopped'`, `stopped_at = now` and, with `exitReason`, counts it in
   * `soniq_worker_exits` (once per incarnation); an unknown id changes nothing.
   */
  workerMarkStopped(params: WorkerMarkStoppedParams): Promise<void>;
  /**
   * How workers ended, cluster-wide, since the schema was set up: one entry per exit reason seen,
   * in {@link WORKER_EXIT_REASONS} order (docs/metrics.md, `soniq_worker_exits_total`).
   */
  workerExitCounts(): Promise<WorkerExitCount[]>;
  /** Worker rows, newest first, each with its liveness by the database clock. */
  workerList(params: WorkerListParams): Promise<WorkerListRow[]>;
  /**
   * Deletes worker rows whose last heartbeat is older than `notSeenForSeconds`, at most `limit`
   * of them, in one statement; returns how many.
   */
  workerForget(params: WorkerForgetParams): Promise<number>;
}
