/**
 * `soniq.flows` (docs/workflows.md): read a flow's jobs with their states, and cancel the jobs of
 * a flow that have not ended. Reads and writes through the backend's flow and admin stores.
 */
import type { Backend, FlowJobRow } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";

/** A flow as {@link FlowsAdmin.get} returns it. */
export interface FlowView {
  /** The flow's id: its root job's id. */
  id: string;
  /**
   * `running` while any job has not ended; else `done` when the root is done, `failed` when it
   * was dead-lettered, `cancelled` when it was cancelled, `gone` when it is no longer stored.
   */
  state: "running" | "done" | "failed" | "cancelled" | "gone";
  /** Jobs per state. */
  counts: Record<FlowJobRow["state"], number>;
  /** Every job of the flow, the root first, then by id. */
  jobs: FlowJobRow[];
}

/** What {@link FlowsAdmin.cancel} did. */
export interface FlowCancelResult {
  /** Jobs that were waiting or queued: cancelled now. */
  cancelled: number;
  /** Jobs that were running: a cancel request was stored (their workers stop them). */
  requested: number;
}

/** What {@link FlowsAdmin} needs. */
export interface FlowsAdminDeps {
  backend(): Promise<Backend>;
  /** Seconds a cancelled job of `name` is kept. */
  retentionFor(name: string | null): number;
}

const LIVE = new Set<FlowJobRow["state"]>(["waiting", "queued", "processing"]);

/** See the module comment. */
export class FlowsAdmin {
  constructor(private readonly deps: FlowsAdminDeps) {}

  /**
   * The flow whose root job is `id`, or null when no such flow is stored — a batch's id
   * included: a batch has no root job (read it with `soniq.batches.get`; {@link isBatch} tells
   * the two apart).
   */
  async get(id: string): Promise<FlowView | null> {
    const backend = await this.deps.backend();
    const rows = await backend.flows.flowGet({ flowId: id });
    if (rows.length === 0 || isBatchRows(rows)) return null;
    const root = rows.find((r) => r.id === id);
    const jobs = root ? [root, ...rows.filter((r) => r !== root)] : rows;
    const counts: FlowView["counts"] = {
      waiting: 0,
      queued: 0,
      processing: 0,
      done: 0,
      cancelled: 0,
      dead: 0,
      gone: 0,
    };
    for (const r of rows) counts[r.state] += 1;
    let state: FlowView["state"];
    if (rows.some((r) => LIVE.has(r.state))) state = "running";
    else if (root?.state === "done") state = "done";
    else if (root?.state === "dead") state = "failed";
    else if (root?.state === "cancelled") state = "cancelled";
    else state = "gone";
    return { id, state, counts, jobs };
  }

  /**
   * The flow or batch job `jobId` belongs to (a flow's job, a batch's member or callback), or null
   * (no such job, a job enqueued with `after` alone, or one whose flow was forgotten).
   */
  async of(jobId: string): Promise<{ kind: "flow" | "batch"; id: string } | null> {
    const node = await (await this.deps.backend()).flows.flowNodeOf({ jobId });
    if (!node?.flowId || node.role === "batch") return null;
    return { kind: node.role === "job" ? "flow" : "batch", id: node.flowId };
  }

  /** True when `id` is a stored batch's id (not a flow's): for messages that point to the batch API. */
  async isBatch(id: string): Promise<boolean> {
    const rows = await (await this.deps.backend()).flows.flowGet({ flowId: id });
    return isBatchRows(rows);
  }

  /**
   * Cancels every job of the flow that has not ended: waiting and queued jobs at once, running
   * ones by a cancel request (their workers stop them and record `cancelled`). Dependants are
   * cancelled before their dependencies, so no failure policy moves them to the dead-letter
   * queue on the way.
   * @throws SoniqError `NOT_FOUND` when no such flow is stored; `INVALID_ARGS` when `id` is a
   *   batch's (nothing cancelled: `soniq.batches.cancel` cancels a batch).
   */
  async cancel(id: string): Promise<FlowCancelResult> {
    const backend = await this.deps.backend();
    const rows = await backend.flows.flowGet({ flowId: id });
    if (rows.length === 0) throw new SoniqError("NOT_FOUND", `no flow with id ${id}`);
    if (isBatchRows(rows)) {
      throw new SoniqError(
        "INVALID_ARGS",
        `${id} is a batch's id, not a flow's: cancel it with soniq.batches.cancel (nothing cancelled)`,
        { details: { batchId: id } },
      );
    }
    const result: FlowCancelResult = { cancelled: 0, requested: 0 };
    for (const row of dependantsFirst(id, rows)) {
      if (!LIVE.has(row.state)) continue;
      const state = await backend.admin.jobCancelRequest({
        id: row.id,
        retentionSeconds: this.deps.retentionFor(row.name),
      });
      if (state === "cancelled") result.cancelled += 1;
      else if (state === "requested") result.requested += 1;
    }
    return result;
  }
}

/** True when `rows` (one flow id's) are a batch's: its own node has role `batch`. */
function isBatchRows(rows: readonly FlowJobRow[]): boolean {
  return rows.some((r) => r.role === "batch");
}

/** The rows ordered by depth from the root (the root first): dependants before dependencies. */
function dependantsFirst(rootId: string, rows: readonly FlowJobRow[]): FlowJobRow[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const depth = new Map<string, number>([[rootId, 0]]);
  const queue = [rootId];
  for (let head = 0; head < queue.length; head += 1) {
    const id = queue[head] as string;
    for (const child of byId.get(id)?.dependsOn ?? []) {
      if (!depth.has(child)) {
        depth.set(child, (depth.get(id) ?? 0) + 1);
        queue.push(child);
      }
    }
  }
  return [...rows].sort(
    (a, b) =>
      (depth.get(a.id) ?? Number.MAX_SAFE_INTEGER) - (depth.get(b.id) ?? Number.MAX_SAFE_INTEGER),
  );
}
