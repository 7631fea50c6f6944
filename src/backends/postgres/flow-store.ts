/**
 * The PostgreSQL backend's {@link FlowStore} (contract/flow-store.ts): the enqueue of jobs with
 * dependencies in one transaction (the caller's, or one of its own on a pool client), and the
 * reads of edges and flows. Statements: flow-sql.ts; the release is migration 019's triggers.
 */

import { SoniqError } from "../../errors.js";
import type {
  BatchAddParams,
  DependencyEnd,
  DependencyFailurePolicy,
  DependencyRow,
  EnqueueResult,
  FlowEndCount,
  FlowEndRow,
  FlowEnqueueParams,
  FlowJobRow,
  FlowNodeRole,
  FlowStore,
  NewJob,
  PgQueryable,
} from "../contract/index.js";
import { emptyBatch } from "../shared/empty-batch.js";
import { flowPlan, memberEdgePolicy, WAITING_RUN_AT } from "../shared/flow-graph.js";
import type { PgConnection } from "./connection.js";
import type { FlowStatements } from "./flow-sql.js";
import { isUuid } from "./identifiers.js";

/** What the store needs from the backend. */
export interface PgFlowDeps {
  conn: PgConnection;
  sql: FlowStatements;
  /** The job store's insert, on `client` (inside the transaction). */
  insertJobs(jobs: readonly NewJob[], client: PgQueryable): Promise<EnqueueResult[]>;
  /** Wakes this process's claimers of `queue`. */
  wake(queue: string): void;
}

/** See the module comment. */
export class PgFlowStore implements FlowStore {
  constructor(private readonly deps: PgFlowDeps) {}

  /**
   * On `connection` when given (inside the caller's transaction), else in `BEGIN … COMMIT` on a
   * pool client; then this process's claimers of the jobs' queues are woken (its own NOTIFY is
   * skipped by its listener). See {@link FlowStore.flowEnqueue}.
   */
  async flowEnqueue(params: FlowEnqueueParams): Promise<EnqueueResult[]> {
    this.deps.conn.assertOpen();
    if (params.jobs.length === 0) return [];
    const run = (client: PgQueryable) => this.write(params, client);
    if (params.connection) return run(params.connection);
    const results = await this.deps.conn.transaction((client) => run(client));
    for (const queue of new Set(params.jobs.map((j) => j.queue))) this.deps.wake(queue);
    return results;
  }

  private async write(params: FlowEnqueueParams, client: PgQueryable): Promise<EnqueueResult[]> {
    const { sql, conn } = this.deps;
    const plan = flowPlan(params);
    const outside = plan.external;
    const ended = new Map<string, { state: DependencyEnd; result: string | null }>();
    if (outside.length > 0) {
      const bad = outside.filter((id) => !isUuid(id));
      if (bad.length > 0) throw plan.unknown(bad);
      const live = await conn.run<{ id: string }>(sql.lockLive, [outside], client);
      const liveIds = new Set(live.rows.map((r) => r.id));
      const rest = outside.filter((id) => !liveIds.has(id));
      if (rest.length > 0) {
        const found = await conn.run<{ id: string; state: DependencyEnd; result: string | null }>(
          sql.ended,
          [rest],
          client,
        );
        for (const row of found.rows) ended.set(row.id, { state: row.state, result: row.result });
        const unknown = rest.filter((id) => !ended.has(id));
        if (unknown.length > 0) throw plan.unknown(unknown);
      }
    }
    const toInsert = params.jobs.map((job) =>
      plan.waiting.has(job.id) ? { ...job, runAt: WAITING_RUN_AT, delaySeconds: 0 } : job,
    );
    const results = await this.deps.insertJobs(toInsert, client);
    const waitingIds = [...plan.waiting];
    if (waitingIds.length > 0) await conn.run(sql.markWaiting, [waitingIds], client);
    const nodes = params.nodes;
    const byId = new Map(params.jobs.map((j) => [j.id, j]));
    await conn.run(
      sql.insertNodes,
      [
        nodes.map((n) => n.jobId),
        nodes.map((n) => n.flowId),
        nodes.map((n) => plan.waiting.has(n.jobId)),
        nodes.map((n) => byId.get(n.jobId)?.runAt?.toISOString() ?? null),
        nodes.map((n) => byId.get(n.jobId)?.delaySeconds ?? 0),
        nodes.map((n) =>
          n.role === "batch" ? (n.open ? 1 : 0) : (plan.edgeCount.get(n.jobId) ?? 0),
        ),
        nodes.map((n) => n.retentionSeconds),
        nodes.map((n) => n.role ?? "job"),
      ],
      client,
    );
    if (params.edges.length > 0) {
      await conn.run(
        sql.insertEdges,
        [
          params.edges.map((e) => e.jobId),
          params.edges.map((e) => e.dependsOn),
          params.edges.map((e) => e.onFailure),
        ],
        client,
      );
    }
    if (ended.size > 0) {
      const ids = [...ended.keys()];
      await conn.run(
        sql.settleEnded,
        [
          ids,
          ids.map((id) => ended.get(id)?.state),
          ids.map((id) => ended.get(id)?.result ?? null),
          waitingIds,
        ],
        client,
      );
    }
    return results;
  }

  /**
   * On `connection` when given, else in a transaction of its own: locks the batch's node, reads
   * its callbacks, inserts the members, their nodes and the callbacks' edges to them. See
   * {@link FlowStore.batchAdd}.
   */
  async batchAdd(params: BatchAddParams): Promise<EnqueueResult[]> {
    this.deps.conn.assertOpen();
    if (!isUuid(params.batchId)) throw noBatch(params.batchId);
    const run = async (client: PgQueryable): Promise<EnqueueResult[]> => {
      const { sql, conn } = this.deps;
      const lock = await conn.run<{ pending: number }>(sql.batchLock, [params.batchId], client);
      const node = lock.rows[0];
      if (!node) throw noBatch(params.batchId);
      if (node.pending <= 0) throw sealedBatch(params.batchId);
      if (params.jobs.length === 0) return [];
      const callbacks = await conn.run<{ job_id: string; role: string }>(
        sql.batchCallbacks,
        [params.batchId],
        client,
      );
      const results = await this.deps.insertJobs(params.jobs, client);
      const ids = params.jobs.map((j) => j.id);
      await conn.run(
        sql.insertNodes,
        [
          ids,
          ids.map(() => params.batchId),
          ids.map(() => false),
          ids.map(() => null),
          ids.map(() => 0),
          ids.map(() => 0),
          params.retentionSeconds,
          ids.map(() => "member"),
        ],
        client,
      );
      const cbs = callbacks.rows;
      if (cbs.length > 0) {
        const from = cbs.flatMap((c) => ids.map(() => c.job_id));
        const to = cbs.flatMap(() => ids);
        const policy = cbs.flatMap((c) => ids.map(() => memberEdgePolicy(c.role)));
        await conn.run(sql.insertEdges, [from, to, policy], client);
        await conn.run(sql.batchBump, [cbs.map((c) => c.job_id), ids.length], client);
      }
      await conn.run(sql.batchGrow, [params.batchId, ids.length], client);
      return results;
    };
    if (params.connection) return run(params.connection);
    const results = await this.deps.conn.transaction((client) => run(client));
    for (const queue of new Set(params.jobs.map((j) => j.queue))) this.deps.wake(queue);
    return results;
  }

  /** One statement (the triggers release in it). See {@link FlowStore.batchSeal}. */
  async batchSeal({ batchId }: { batchId: string }): Promise<boolean> {
    if (!isUuid(batchId)) throw noBatch(batchId);
    const { rows } = await this.deps.conn.run<{ sealed: number }>(this.deps.sql.batchSeal, [
      batchId,
    ]);
    if ((rows[0]?.sealed ?? 0) > 0) return true;
    const found = await this.deps.conn.run<{ pending: number }>(this.deps.sql.batchExists, [
      batchId,
    ]);
    const node = found.rows[0];
    if (!node) throw noBatch(batchId);
    if (node.pending > 0) throw emptyBatch(batchId);
    return false;
  }

  /** One statement. See {@link FlowStore.flowDependencies}. */
  async flowDependencies({ jobId }: { jobId: string }): Promise<DependencyRow[]> {
    if (!isUuid(jobId)) return [];
    const { rows } = await this.deps.conn.run<{
      id: string;
      state: DependencyEnd | null;
      result: string | null;
      on_failure: DependencyFailurePolicy;
    }>(this.deps.sql.dependencies, [jobId]);
    return rows.map((r) => ({
      id: r.id,
      state: r.state,
      result: r.result,
      onFailure: r.on_failure,
    }));
  }

  /** One statement. See {@link FlowStore.flowNodeOf}. */
  async flowNodeOf({
    jobId,
  }: {
    jobId: string;
  }): Promise<{ flowId: string | null; role: FlowNodeRole } | null> {
    if (!isUuid(jobId)) return null;
    const { rows } = await this.deps.conn.run<{ flow_id: string | null; role: FlowNodeRole }>(
      this.deps.sql.nodeOf,
      [jobId],
    );
    const row = rows[0];
    return row ? { flowId: row.flow_id, role: row.role } : null;
  }

  /** One statement. See {@link FlowStore.flowGet}. */
  async flowGet({ flowId }: { flowId: string }): Promise<FlowJobRow[]> {
    if (!isUuid(flowId)) return [];
    const { rows } = await this.deps.conn.run<{
      id: string;
      name: string | null;
      state: FlowJobRow["state"];
      pending: number;
      depends_on: string[];
      role: FlowNodeRole;
    }>(this.deps.sql.flowGet, [flowId]);
    return rows.map((r) => ({
      id: r.id,
      role: r.role,
      name: r.name,
      state: r.state,
      pending: r.pending,
      dependsOn: r.depends_on,
    }));
  }

  /** One statement. See {@link FlowStore.flowEndsTake}. */
  async flowEndsTake({ limit }: { limit: number }): Promise<FlowEndRow[]> {
    const { rows } = await this.deps.conn.run<{
      seq: string;
      kind: FlowEndRow["kind"];
      id: string;
      outcome: FlowEndRow["outcome"];
      ended_at: Date;
    }>(this.deps.sql.endsTake, [limit]);
    return rows.map((r) => ({
      seq: Number(r.seq),
      kind: r.kind,
      id: r.id,
      outcome: r.outcome,
      endedAt: r.ended_at,
    }));
  }

  /** One statement. See {@link FlowStore.flowPrune}. */
  async flowPrune(params: {
    after: string | null;
    limit: number;
  }): Promise<{ next: string | null; pruned: number }> {
    const { rows } = await this.deps.conn.run<{ next: string | null; pruned: number }>(
      this.deps.sql.prune,
      [params.after, params.limit],
    );
    return { next: rows[0]?.next ?? null, pruned: rows[0]?.pruned ?? 0 };
  }

  /** One statement. See {@link FlowStore.flowEndCounts}. */
  async flowEndCounts(): Promise<FlowEndCount[]> {
    const { rows } = await this.deps.conn.run<{
      kind: FlowEndCount["kind"];
      outcome: FlowEndCount["outcome"];
      n: string;
    }>(this.deps.sql.endCounts, []);
    return rows.map((r) => ({ kind: r.kind, outcome: r.outcome, n: Number(r.n) }));
  }
}

/** `NOT_FOUND` for batch `id`. */
function noBatch(id: string): SoniqError {
  return new SoniqError("NOT_FOUND", `no batch with id ${id}`);
}

/** `INVALID_STATE` for sealed batch `id`. */
function sealedBatch(id: string): SoniqError {
  return new SoniqError("INVALID_STATE", `batch ${id} is sealed: no member can be added`);
}
