/**
 * The write side of enqueueing: builds each job's row (build-new-job.ts: every item validated
 * first, so one bad item writes nothing), then inserts them all in one backend call (one round
 * trip on PostgreSQL, optionally in the caller's transaction), traced when tracing is on, and
 * reports `job_enqueued` for each row actually inserted. Used by `Soniq`'s enqueue methods.
 */
import type {
  Backend,
  FlowEdge,
  FlowNode,
  NewJob,
  PgQueryable,
} from "../backends/contract/index.js";
import { memberEdgePolicy } from "../backends/shared/flow-graph.js";
import { SoniqError } from "../errors.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Tracing } from "../observability/tracing.js";
import type { SoniqSettings } from "../settings.js";
import { buildNewJob } from "./build-new-job.js";
import { type EnqueueOptions, resolveDependencies } from "./enqueue-options.js";
import type { JobDefinition } from "./job-definition.js";
import { newJobId } from "./job-id.js";

/** A batch callback's role (docs/workflows.md, "Batches"). */
export type BatchCallbackRole = "on_complete" | "on_success" | "on_failure";

/** One job to enqueue. */
export interface JobToWrite {
  /** Its definition (null: a job another service defines), looked up when its turn comes. */
  definition(): JobDefinition<unknown, unknown, unknown> | null;
  name: string;
  args: unknown;
  options: EnqueueOptions;
}

/** What {@link JobWriter} needs from its Soniq instance. */
export interface JobWriterDeps {
  settings: SoniqSettings;
  backend(): Promise<Backend>;
  eventBus: EventBus<SoniqEventMap>;
  tracing: Tracing | undefined;
}

/** See the module comment. */
export class JobWriter {
  constructor(private readonly deps: JobWriterDeps) {}

  /**
   * Builds every job in input order (the first invalid one throws; nothing is written), then
   * writes them in one call. Ids in input order (the existing id for a duplicate).
   * @param connection - PostgreSQL only: the caller's transaction client.
   * @throws SoniqError as `buildNewJob`, and `UNSUPPORTED` (`connection` off PostgreSQL).
   */
  async enqueue(
    items: readonly JobToWrite[],
    connection: PgQueryable | undefined,
  ): Promise<string[]> {
    const jobs: NewJob[] = [];
    const edges: FlowEdge[] = [];
    const nodes: FlowNode[] = [];
    for (const item of items) {
      const job = await buildNewJob(
        this.deps.settings,
        item.definition(),
        item.name,
        item.args,
        item.options,
      );
      const { after, onFailure } = resolveDependencies(item.options);
      if (after.length > 0) {
        for (const dependsOn of after) edges.push({ jobId: job.id, dependsOn, onFailure });
        nodes.push({ jobId: job.id, flowId: null, retentionSeconds: this.retentionOf(item) });
      }
      jobs.push(job);
    }
    if (jobs.length === 0) return [];
    return edges.length === 0
      ? this.write(jobs, connection)
      : this.writeGraph(jobs, edges, nodes, connection);
  }

  /**
   * Builds every job of a graph (each item's own `after` is refused: the edges are given) and
   * writes jobs, nodes and edges in one transaction (contract/flow-store.ts).
   * @param edges - Per edge, the index of the waiting item and of the item it waits for.
   * @param flowOf - The flow every node belongs to: the id of the item at this index.
   * @returns The ids in input order.
   * @throws as {@link JobWriter.enqueue}, and `UNKNOWN_DEPENDENCY`, `DEPENDENCY_CYCLE`.
   */
  async enqueueGraph(
    items: readonly JobToWrite[],
    edges: ReadonlyArray<{ from: number; to: number; onFailure: FlowEdge["onFailure"] }>,
    flowOf: number,
    connection: PgQueryable | undefined,
  ): Promise<string[]> {
    const jobs = await this.build(items);
    const id = (i: number) => (jobs[i] as NewJob).id;
    const flowId = id(flowOf);
    const nodes = items.map((item, i) => ({
      jobId: id(i),
      flowId,
      retentionSeconds: this.retentionOf(item),
    }));
    const flowEdges = edges.map((e) => ({
      jobId: id(e.from),
      dependsOn: id(e.to),
      onFailure: e.onFailure,
    }));
    return this.writeGraph(jobs, flowEdges, nodes, connection);
  }

  /**
   * Builds and writes a batch (docs/workflows.md, "Batches"): its members, its callbacks
   * (waiting on every member: onComplete ignoring failures, onSuccess cancelled by one, onFailure
   * cancelled when none failed) and, while `open`, a seal edge from each callback to the batch.
   * @returns The batch id, the members' ids and the callbacks' ids (by role), in input order.
   * @throws as {@link JobWriter.enqueueGraph}.
   */
  async enqueueBatch(
    members: readonly JobToWrite[],
    callbacks: ReadonlyArray<{ role: BatchCallbackRole; item: JobToWrite }>,
    open: boolean,
    connection: PgQueryable | undefined,
  ): Promise<{ batchId: string; ids: string[]; callbackIds: string[] }> {
    const all = [...members, ...callbacks.map((c) => c.item)];
    const jobs = await this.build(all);
    const batchId = newJobId();
    const memberJobs = jobs.slice(0, members.length);
    const callbackJobs = jobs.slice(members.length);
    const nodes: FlowNode[] = [
      { jobId: batchId, flowId: batchId, retentionSeconds: 0, role: "batch", open },
      ...memberJobs.map((j, i) => ({
        jobId: j.id,
        flowId: batchId,
        retentionSeconds: this.retentionOf(members[i] as JobToWrite),
        role: "member" as const,
      })),
      ...callbackJobs.map((j, i) => ({
        jobId: j.id,
        flowId: batchId,
        retentionSeconds: this.retentionOf((callbacks[i] as { item: JobToWrite }).item),
        role: (callbacks[i] as { role: BatchCallbackRole }).role,
      })),
    ];
    const edges: FlowEdge[] = [];
    callbackJobs.forEach((cb, i) => {
      const role = (callbacks[i] as { role: BatchCallbackRole }).role;
      const onFailure = memberEdgePolicy(role);
      for (const m of memberJobs) edges.push({ jobId: cb.id, dependsOn: m.id, onFailure });
      if (open) edges.push({ jobId: cb.id, dependsOn: batchId, onFailure: "ignore" });
    });
    const ids = await this.writeGraph(jobs, edges, nodes, connection, open ? [batchId] : []);
    return {
      batchId,
      ids: ids.slice(0, members.length),
      callbackIds: ids.slice(members.length),
    };
  }

  /**
   * Builds and adds members to open batch `batchId` (contract/flow-store.ts `batchAdd`).
   * @throws as {@link JobWriter.enqueue}; `NOT_FOUND`, `INVALID_STATE` (sealed).
   */
  async addToBatch(
    batchId: string,
    items: readonly JobToWrite[],
    connection: PgQueryable | undefined,
  ): Promise<string[]> {
    const jobs = await this.build(items);
    this.refuseDedup(jobs);
    const backend = await this.deps.backend();
    const results = await backend.flows.batchAdd({
      batchId,
      jobs,
      retentionSeconds: items.map((item) => this.retentionOf(item)),
      ...(connection ? { connection } : {}),
    });
    return results.map((r) => r.id);
  }

  /**
   * Builds every item (refusing `after`: edges come from the batch or flow; and a job's own
   * `connection`: the flow or batch is one transaction).
   */
  private async build(items: readonly JobToWrite[]): Promise<NewJob[]> {
    const jobs: NewJob[] = [];
    for (const item of items) {
      if (item.options.after !== undefined || item.options.onDependencyFailure !== undefined) {
        throw new SoniqError(
          "INVALID_ENQUEUE_OPTION",
          "a job of a flow or batch takes its dependencies from it, not from `after`",
        );
      }
      if (item.options.connection !== undefined) {
        throw new SoniqError(
          "INVALID_ENQUEUE_OPTION",
          "a job of a flow or batch is written in its transaction: give `connection` to soniq.flow / soniq.batch (or batches.add), not to one job",
        );
      }
      jobs.push(
        await buildNewJob(
          this.deps.settings,
          item.definition(),
          item.name,
          item.args,
          item.options,
        ),
      );
    }
    return jobs;
  }

  /** @throws SoniqError `INVALID_ENQUEUE_OPTION` when a job has a dedup key. */
  private refuseDedup(jobs: readonly NewJob[]): void {
    for (const job of jobs) {
      if (job.dedupKey !== null) {
        throw new SoniqError(
          "INVALID_ENQUEUE_OPTION",
          `job ${job.name} of a flow or batch (or with dependencies) cannot take a dedup key (uniqueByArgs included)`,
        );
      }
    }
  }

  /** The retention a cancel by policy keeps `item` for: its definition's, else the instance's. */
  private retentionOf(item: JobToWrite): number {
    return item.definition()?.resultRetention ?? this.deps.settings.resultRetention;
  }

  private async writeGraph(
    jobs: NewJob[],
    edges: FlowEdge[],
    nodes: FlowNode[],
    connection: PgQueryable | undefined,
    seals: readonly string[] = [],
  ): Promise<string[]> {
    this.refuseDedup(jobs);
    const backend = await this.deps.backend();
    if (connection && !backend.capabilities.transactionalEnqueue) {
      throw new SoniqError("UNSUPPORTED", "`connection` (transactional enqueue) needs PostgreSQL");
    }
    const insert = async (traced: readonly NewJob[]): Promise<string[]> => {
      const results = await backend.flows.flowEnqueue(
        connection
          ? { jobs: traced, nodes, edges, seals, connection }
          : { jobs: traced, nodes, edges, seals },
      );
      if (this.deps.eventBus.hasListeners("job_enqueued")) {
        for (const job of traced) {
          this.deps.eventBus.emit("job_enqueued", {
            job_id: job.id,
            job_name: job.name,
            queue: job.queue,
          });
        }
      }
      return results.map((r) => r.id);
    };
    return this.deps.tracing ? this.deps.tracing.traceEnqueue(jobs, insert) : insert(jobs);
  }

  private async write(jobs: NewJob[], connection: PgQueryable | undefined): Promise<string[]> {
    const backend = await this.deps.backend();
    if (connection && !backend.capabilities.transactionalEnqueue) {
      throw new SoniqError("UNSUPPORTED", "`connection` (transactional enqueue) needs PostgreSQL");
    }
    const insert = async (traced: readonly NewJob[]): Promise<string[]> => {
      const results = await backend.jobEnqueue(
        connection ? { jobs: traced, connection } : { jobs: traced },
      );
      if (this.deps.eventBus.hasListeners("job_enqueued")) {
        results.forEach((result, i) => {
          const job = traced[i];
          if (result.inserted && job) {
            this.deps.eventBus.emit("job_enqueued", {
              job_id: job.id,
              job_name: job.name,
              queue: job.queue,
            });
          }
        });
      }
      return results.map((r) => r.id);
    };
    return this.deps.tracing ? this.deps.tracing.traceEnqueue(jobs, insert) : insert(jobs);
  }
}
