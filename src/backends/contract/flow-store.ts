/**
 * The contract of workflows (docs/workflows.md): jobs that wait for other jobs. A job with
 * dependencies (edges) is inserted **waiting** — a queued row that no claim takes until its last
 * dependency ends well — and is released, failed or cancelled by the engine in the same
 * transaction (PostgreSQL: the same statement) that ends that dependency, whatever the finishing
 * path (PostgreSQL migration 019, SQLite 015).
 */
import type { EnqueueResult, NewJob, PgQueryable } from "./types.js";

/**
 * What a dependency that ended dead-lettered or cancelled does to the job waiting on it:
 * `fail` (the default) moves the waiting job to the dead-letter queue with reason
 * `dependency_failed`; `ignore` counts the edge as met (the job runs; `ctx.dependencies()` shows
 * how the dependency ended); `cancel` cancels the waiting job. The waiting job's own dependants
 * then follow their edges' policies.
 */
export type DependencyFailurePolicy = "fail" | "ignore" | "cancel";

/** The ways a dependency ends: done, cancelled, or moved to the dead-letter queue. */
export type DependencyEnd = "done" | "cancelled" | "dead";

/** One edge: `jobId` waits for `dependsOn`. */
export interface FlowEdge {
  /** The waiting job (one of {@link FlowEnqueueParams.jobs}). */
  jobId: string;
  /** The job it waits for: one of the same call's jobs, or an existing job. */
  dependsOn: string;
  /** What a failed end of `dependsOn` does to `jobId`. */
  onFailure: DependencyFailurePolicy;
}

/** Per job of a {@link FlowStore.flowEnqueue} call: its flow and the retention a cancel keeps. */
export interface FlowNode {
  /** One of {@link FlowEnqueueParams.jobs}. */
  jobId: string;
  /** The flow it belongs to (`soniq.flow()`: the root job's id); null for `after` alone. */
  flowId: string | null;
  /** Seconds a cancel by policy keeps the job as finished (its definition's retention). */
  retentionSeconds: number;
  /** What the node is (default `job`); a batch's own node (`batch`) names no job. */
  role?: FlowNodeRole;
  /** For a `batch` node: 1 while the batch is open, 0 sealed. Ignored for other roles. */
  open?: boolean;
}

/**
 * A node's role: a job of a flow or with `after`; a batch's member or callback; the batch itself
 * (its id names no job).
 */
export type FlowNodeRole = "job" | "member" | "batch" | "on_complete" | "on_success" | "on_failure";

/** Params of {@link FlowStore.flowEnqueue}. */
export interface FlowEnqueueParams {
  /**
   * The jobs, validated by the caller, without dedup keys (refused with dependencies). A job that
   * is the `jobId` of an edge is inserted waiting; its `runAt` / `delaySeconds` apply from its
   * release (a delay counts from the enqueue, not from the release).
   */
  jobs: readonly NewJob[];
  /** One per job that has edges or a flow. */
  nodes: readonly FlowNode[];
  /**
   * The edges. The caller has refused cycles and edges whose `jobId` is not among `jobs`; a
   * `dependsOn` outside `jobs` must exist (live, finished and still kept, or dead-lettered).
   */
  edges: readonly FlowEdge[];
  /**
   * Ids of open batches created by this call (each also a `batch` node): an edge to one is a
   * batch callback's seal edge, met when the batch is sealed ({@link FlowStore.batchSeal}).
   */
  seals?: readonly string[];
  /** PostgreSQL only: the caller's transaction client (as `JobStore.jobEnqueue`). */
  connection?: PgQueryable;
}

/** Params of {@link FlowStore.batchAdd}. */
export interface BatchAddParams {
  /** The batch. */
  batchId: string;
  /** The new members, validated by the caller, without dedup keys. */
  jobs: readonly NewJob[];
  /** Per member, the retention a cancel keeps it for (seconds), aligned with `jobs`. */
  retentionSeconds: readonly number[];
  /** PostgreSQL only: the caller's transaction client. */
  connection?: PgQueryable;
}

/** One dependency of a job, as {@link FlowStore.flowDependencies} reads it. */
export interface DependencyRow {
  /** The dependency's id. */
  id: string;
  /** How it ended; null while it has not. */
  state: DependencyEnd | null;
  /** Its result as JSON text (a done dependency whose handler returned one), else null. */
  result: string | null;
  /** The edge's policy. */
  onFailure: DependencyFailurePolicy;
}

/** One job of a flow, as {@link FlowStore.flowGet} reads it. */
export interface FlowJobRow {
  id: string;
  /** The node's role (a batch's own row is `batch`, with `name` null and state `gone`). */
  role: FlowNodeRole;
  /** Null when the job is gone (pruned, deleted). */
  name: string | null;
  /**
   * `waiting` (dependencies not met), `queued`, `processing`, `done`, `cancelled`, `dead`
   * (in the dead-letter queue), or `gone` (no longer stored).
   */
  state: "waiting" | "queued" | "processing" | "done" | "cancelled" | "dead" | "gone";
  /** Dependencies not yet met (waiting jobs). */
  pending: number;
  /** The jobs it waits for. */
  dependsOn: readonly string[];
}

/**
 * A flow or batch that finished, as {@link FlowStore.flowEndsTake} returns it (docs/workflows.md,
 * "Knowing when a flow or batch finished").
 */
export interface FlowEndRow {
  /** Its place in the order finishes were written (increasing). */
  seq: number;
  /** `flow` (`id` is its root's) or `batch`. */
  kind: "flow" | "batch";
  id: string;
  /**
   * A flow: its root's end, `done`, `failed` (dead-lettered) or `cancelled`; a batch: `succeeded`
   * (every member done) or `failed` (a member dead-lettered or cancelled).
   */
  outcome: "done" | "failed" | "cancelled" | "succeeded";
  /** When it finished (the database clock). */
  endedAt: Date;
}

/** Finishes of one kind and outcome taken so far ({@link FlowStore.flowEndCounts}). */
export interface FlowEndCount {
  kind: FlowEndRow["kind"];
  outcome: FlowEndRow["outcome"];
  /** How many, since the schema was set up. */
  n: number;
}

/** See the module comment. */
export interface FlowStore {
  /**
   * Inserts the jobs, the flow nodes and the edges in one transaction (PostgreSQL: on
   * `connection` inside the caller's transaction when given; the rows exist iff it commits),
   * with the edges whose dependency already ended settled at once (released, failed or
   * cancelled by the same rules as a later end). Each existing dependency that is still live is
   * locked against its end (`FOR KEY SHARE` on PostgreSQL) until the transaction ends.
   * @returns One result per job, in input order (all inserted).
   * @throws SoniqError `UNKNOWN_DEPENDENCY` (nothing written) when a `dependsOn` outside `jobs`
   * names no job this store has (never enqueued, or finished and no longer kept).
   */
  flowEnqueue(params: FlowEnqueueParams): Promise<EnqueueResult[]>;
  /** The dependencies of job `jobId`, ordered by id; empty when it has none. */
  flowDependencies(params: { jobId: string }): Promise<DependencyRow[]>;
  /**
   * The jobs of flow `flowId` (or of batch `flowId`, with the batch's own row: role `batch`,
   * `pending` 1 while open), ordered by id; empty when no such flow is stored.
   */
  flowGet(params: { flowId: string }): Promise<FlowJobRow[]>;
  /**
   * The node of job `jobId`: its flow or batch (`flowId`, null for a job enqueued with `after`
   * alone) and role; null when the job has none (or it was forgotten).
   */
  flowNodeOf(params: {
    jobId: string;
  }): Promise<{ flowId: string | null; role: FlowNodeRole } | null>;
  /**
   * Adds members to an open batch, in one transaction: inserts them and makes each callback wait
   * for them too (the callbacks cannot have been released: the batch's seal edge is pending).
   * Serialised with {@link batchSeal} by a lock on the batch's node.
   * @throws SoniqError `NOT_FOUND` (no such batch), `INVALID_STATE` (sealed); nothing written.
   */
  batchAdd(params: BatchAddParams): Promise<EnqueueResult[]>;
  /**
   * Seals an open batch: its callbacks' seal edges are met, so a callback whose members all
   * ended is released (or cancelled) in this transaction. `false` when it was sealed already.
   * @throws SoniqError `NOT_FOUND` when there is no such batch; `INVALID_STATE` when it is open
   * with no member yet (nothing written).
   */
  batchSeal(params: { batchId: string }): Promise<boolean>;
  /**
   * Takes the oldest `limit` finishes of flows and batches, in the order they were written: they
   * are deleted and added to the counters ({@link flowEndCounts}) in one statement (PostgreSQL) or
   * transaction (SQLite), so each is taken once, whoever takes it. Rows another taker holds are
   * skipped (PostgreSQL).
   */
  flowEndsTake(params: { limit: number }): Promise<FlowEndRow[]>;
  /** The finishes taken so far, per kind and outcome (a handful of rows). */
  flowEndCounts(): Promise<FlowEndCount[]>;
  /**
   * One step of the walk that forgets flows and batches whose jobs are all gone (docs/workflows.md,
   * "Retention"): reads the next `limit` nodes after `after` (by job id; null: from the start;
   * SQLite reads only each group's head, the node whose id is the group's: migration 023),
   * and for each flow, batch, or job enqueued with `after` alone among them, deletes its nodes and
   * the edges of its jobs when none of its jobs is stored any more (live, finished and kept, or
   * in the dead-letter queue) and it is not an open batch. Jobs are looked up by id; the job
   * tables are never scanned.
   * @returns `next`: the last node read, to pass as `after` (null when the walk reached the end);
   * `pruned`: nodes deleted.
   */
  flowPrune(params: {
    after: string | null;
    limit: number;
  }): Promise<{ next: string | null; pruned: number }>;
}
