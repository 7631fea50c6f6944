/**
 * The SQLite backend's {@link FlowStore} (contract/flow-store.ts): the enqueue of jobs with
 * dependencies in one `BEGIN IMMEDIATE`, and the reads of edges and flows. Statements:
 * flow-sql.ts; the release is migration 015's triggers.
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
} from "../contract/index.js";
import { assertNoConnection } from "../shared/capability-guard.js";
import { emptyBatch } from "../shared/empty-batch.js";
import { flowPlan, memberEdgePolicy, SQLITE_WAITING_MS } from "../shared/flow-graph.js";
import { secondsToMs } from "./clock.js";
import type { SqliteConnection, SqliteSession } from "./connection.js";
import { insertJobs } from "./transactions.js";

/** See the module comment. */
export class SqliteFlowStore implements FlowStore {
  /** @param wake - wakes this process's claimers of `queue`. */
  constructor(
    private readonly conn: SqliteConnection,
    private readonly wake: (queue: string) => void,
  ) {}

  /** One immediate transaction. See {@link FlowStore.flowEnqueue}. */
  async flowEnqueue(params: FlowEnqueueParams): Promise<EnqueueResult[]> {
    assertNoConnection("sqlite", params.connection);
    if (params.jobs.length === 0) return [];
    const results = await this.conn.use((s) => s.immediate(() => write(s, params)));
    for (const queue of new Set(params.jobs.map((j) => j.queue))) this.wake(queue);
    return results;
  }

  /** One immediate transaction. See {@link FlowStore.batchAdd}. */
  async batchAdd(params: BatchAddParams): Promise<EnqueueResult[]> {
    assertNoConnection("sqlite", params.connection);
    const { batchId } = params;
    const results = await this.conn.use((s) =>
      s.immediate(() => {
        const state = s.statement("batchState").get({ batchId }) as { pending: number } | undefined;
        if (!state) throw new SoniqError("NOT_FOUND", `no batch with id ${batchId}`);
        if (state.pending <= 0) {
          throw new SoniqError(
            "INVALID_STATE",
            `batch ${batchId} is sealed: no member can be added`,
          );
        }
        if (params.jobs.length === 0) return [];
        const callbacks = s.statement("batchCallbacks").all({ batchId }) as Array<{
          job_id: string;
          role: string;
        }>;
        const { results: inserted } = insertJobs(s, params.jobs);
        const node = s.statement("flowInsertNode");
        const edge = s.statement("flowInsertEdge");
        params.jobs.forEach((job, i) => {
          node.run({
            id: job.id,
            flowId: batchId,
            runAt: null,
            pending: 0,
            retentionMs: secondsToMs(params.retentionSeconds[i] ?? 0),
            role: "member",
            membersLeft: 0,
          });
          for (const cb of callbacks) {
            edge.run({ jobId: cb.job_id, depId: job.id, onFailure: memberEdgePolicy(cb.role) });
          }
        });
        for (const cb of callbacks) {
          s.statement("batchBump").run({ id: cb.job_id, n: params.jobs.length });
        }
        s.statement("batchGrow").run({ batchId, n: params.jobs.length });
        return inserted;
      }),
    );
    for (const queue of new Set(params.jobs.map((j) => j.queue))) this.wake(queue);
    return results;
  }

  /** One immediate transaction (the triggers release in it). See {@link FlowStore.batchSeal}. */
  async batchSeal({ batchId }: { batchId: string }): Promise<boolean> {
    const sealed = await this.conn.use((s) =>
      s.immediate(() => {
        if (s.statement("batchSealNode").run({ batchId }).changes === 0) {
          const node = s.statement("batchState").get({ batchId }) as
            | { pending: number }
            | undefined;
          if (!node) throw new SoniqError("NOT_FOUND", `no batch with id ${batchId}`);
          if (node.pending > 0) throw emptyBatch(batchId);
          return false;
        }
        s.statement("batchSealEdges").run({ batchId });
        return true;
      }),
    );
    return sealed;
  }

  /** One statement. See {@link FlowStore.flowDependencies}. */
  async flowDependencies({ jobId }: { jobId: string }): Promise<DependencyRow[]> {
    return this.conn.use((s) => {
      const rows = s.statement("flowDependencies").all({ jobId }) as Array<{
        id: string;
        state: DependencyEnd | null;
        result: string | null;
        on_failure: DependencyFailurePolicy;
      }>;
      return rows.map((r) => ({
        id: r.id,
        state: r.state,
        result: r.result,
        onFailure: r.on_failure,
      }));
    });
  }

  /** One statement. See {@link FlowStore.flowNodeOf}. */
  async flowNodeOf({
    jobId,
  }: {
    jobId: string;
  }): Promise<{ flowId: string | null; role: FlowNodeRole } | null> {
    return this.conn.use((s) => {
      const row = s.statement("flowNodeOf").get({ jobId }) as
        | { flow_id: string | null; role: FlowNodeRole }
        | undefined;
      return row ? { flowId: row.flow_id, role: row.role } : null;
    });
  }

  /** One statement. See {@link FlowStore.flowGet}. */
  async flowGet({ flowId }: { flowId: string }): Promise<FlowJobRow[]> {
    return this.conn.use((s) => {
      const rows = s.statement("flowGet").all({ flowId }) as Array<{
        id: string;
        name: string | null;
        state: FlowJobRow["state"];
        pending: number;
        depends_on: string;
        role: FlowNodeRole;
      }>;
      return rows.map((r) => ({
        id: r.id,
        role: r.role,
        name: r.name,
        state: r.state,
        pending: r.pending,
        dependsOn: JSON.parse(r.depends_on) as string[],
      }));
    });
  }

  /** One immediate transaction. See {@link FlowStore.flowEndsTake}. */
  async flowEndsTake({ limit }: { limit: number }): Promise<FlowEndRow[]> {
    return this.conn.use((s) =>
      s.immediate(() => {
        const rows = s.statement("flowEndsOldest").all({ limit }) as Array<{
          seq: number;
          kind: FlowEndRow["kind"];
          id: string;
          outcome: FlowEndRow["outcome"];
          ended_at: number;
        }>;
        const last = rows.at(-1);
        if (!last) return [];
        s.statement("flowEndsDelete").run({ upTo: last.seq });
        const tally = new Map<string, { kind: string; outcome: string; n: number }>();
        for (const r of rows) {
          const key = `${r.kind} ${r.outcome}`;
          const t = tally.get(key) ?? { kind: r.kind, outcome: r.outcome, n: 0 };
          t.n += 1;
          tally.set(key, t);
        }
        for (const t of tally.values()) s.statement("flowEndsCount").run(t);
        return rows.map((r) => ({
          seq: r.seq,
          kind: r.kind,
          id: r.id,
          outcome: r.outcome,
          endedAt: new Date(r.ended_at),
        }));
      }),
    );
  }

  /** One immediate transaction. See {@link FlowStore.flowPrune}. */
  async flowPrune(params: {
    after: string | null;
    limit: number;
  }): Promise<{ next: string | null; pruned: number }> {
    return this.conn.use((s) =>
      s.immediate(() => {
        const scan = s.statement("flowPruneScan").all(params) as Array<{
          job_id: string;
          grp: string;
        }>;
        let pruned = 0;
        for (const grp of new Set(scan.map((r) => r.grp))) {
          if (s.statement("flowPruneKept").get({ grp }) !== undefined) continue;
          s.statement("flowPruneEdges").run({ grp });
          pruned += s.statement("flowPruneNodes").run({ grp }).changes;
        }
        const next = scan.length < params.limit ? null : (scan.at(-1)?.job_id ?? null);
        return { next, pruned };
      }),
    );
  }

  /** One statement. See {@link FlowStore.flowEndCounts}. */
  async flowEndCounts(): Promise<FlowEndCount[]> {
    return this.conn.use((s) => s.statement("flowEndCounts").all({}) as FlowEndCount[]);
  }
}

/** The enqueue, inside the caller's immediate transaction. */
function write(s: SqliteSession, params: FlowEnqueueParams): EnqueueResult[] {
  const plan = flowPlan(params);
  const seals = new Set(params.seals ?? []);
  const ended = new Map<string, { state: DependencyEnd; result: string | null }>();
  const unknown: string[] = [];
  for (const id of plan.external) {
    if (s.statement("flowLive").get({ id }) !== undefined) continue;
    const row = s.statement("flowEnded").get({ id }) as
      | { state: DependencyEnd; result: string | null }
      | undefined;
    if (row === undefined) unknown.push(id);
    else ended.set(id, row);
  }
  if (unknown.length > 0) throw plan.unknown(unknown);
  const now = s.nowMs();
  const byId = new Map(params.jobs.map((j) => [j.id, j]));
  const toInsert = params.jobs.map((job) =>
    plan.waiting.has(job.id)
      ? { ...job, runAt: new Date(SQLITE_WAITING_MS), delaySeconds: 0 }
      : job,
  );
  const { results } = insertJobs(s, toInsert);
  const node = s.statement("flowInsertNode");
  const members = params.nodes.filter((n) => n.role === "member").length;
  for (const n of params.nodes) {
    const job = byId.get(n.jobId);
    const waits = plan.waiting.has(n.jobId);
    node.run({
      id: n.jobId,
      flowId: n.flowId,
      runAt:
        !waits || !job
          ? null
          : job.runAt
            ? job.runAt.getTime()
            : now + secondsToMs(job.delaySeconds),
      pending: n.role === "batch" ? (n.open ? 1 : 0) : (plan.edgeCount.get(n.jobId) ?? 0),
      retentionMs: secondsToMs(n.retentionSeconds),
      role: n.role ?? "job",
      membersLeft: n.role === "batch" ? members : 0,
    });
  }
  const edge = s.statement("flowInsertEdge");
  for (const e of params.edges) {
    edge.run({ jobId: e.jobId, depId: e.dependsOn, onFailure: e.onFailure });
  }
  const settle = s.statement("flowSettleEnded");
  for (const e of params.edges) {
    if (seals.has(e.dependsOn)) continue;
    const end = ended.get(e.dependsOn);
    if (end)
      settle.run({ jobId: e.jobId, depId: e.dependsOn, state: end.state, result: end.result });
  }
  return results;
}
