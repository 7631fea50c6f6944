/**
 * `soniq.batches` (docs/workflows.md, "Batches"): read a batch's members, callbacks and counts;
 * add members while it is open; seal it. Through the backend's flow store.
 */
import type { Backend, FlowJobRow, PgQueryable } from "../backends/contract/index.js";
import { isSoniqError, SoniqError } from "../errors.js";
import type { BatchJobSpec } from "../jobs/batch.js";

/** A batch as {@link BatchesAdmin.get} returns it. */
export interface BatchView {
  id: string;
  /** `open` (members may be added), `running` (sealed, a member not ended), `finished`. */
  state: "open" | "running" | "finished";
  /**
   * Members per outcome: `total`, `pending` (not ended), `done`, `dead`, `cancelled`, and `gone`
   * (ended, its job no longer stored: pruned after its retention, or never kept with
   * `resultRetention: 0`). `pending + done + dead + cancelled + gone = total`.
   */
  counts: {
    total: number;
    pending: number;
    done: number;
    dead: number;
    cancelled: number;
    gone: number;
  };
  /** The callbacks, each with its job id and state (`waiting` until the batch finished). */
  callbacks: Array<{
    role: "on_complete" | "on_success" | "on_failure";
    id: string;
    state: FlowJobRow["state"];
  }>;
  /** The members, by id. */
  members: FlowJobRow[];
}

/** What {@link BatchesAdmin.cancel} did. */
export interface BatchCancelResult {
  /** True when the batch was open and this cancel sealed it (no member can be added). */
  sealed: boolean;
  /** Members that were queued: cancelled now. */
  cancelled: number;
  /** Members that were running: a cancel request was stored (their workers stop them). */
  requested: number;
}

/** What {@link BatchesAdmin} needs. */
export interface BatchesAdminDeps {
  backend(): Promise<Backend>;
  /** Seconds a cancelled job of `name` is kept. */
  retentionFor(name: string | null): number;
  /** Builds and adds members (the instance's job writer). */
  add(batchId: string, jobs: readonly BatchJobSpec[], connection?: PgQueryable): Promise<string[]>;
}

/** See the module comment. */
export class BatchesAdmin {
  constructor(private readonly deps: BatchesAdminDeps) {}

  /** Batch `id`, or null when no such batch is stored. */
  async get(id: string): Promise<BatchView | null> {
    const rows = await (await this.deps.backend()).flows.flowGet({ flowId: id });
    const self = rows.find((r) => r.role === "batch");
    if (!self) return null;
    const members = rows.filter((r) => r.role === "member");
    const counts = { total: members.length, pending: 0, done: 0, dead: 0, cancelled: 0, gone: 0 };
    for (const m of members) {
      if (m.state === "done") counts.done += 1;
      else if (m.state === "dead") counts.dead += 1;
      else if (m.state === "cancelled") counts.cancelled += 1;
      else if (m.state === "gone") counts.gone += 1;
      else counts.pending += 1;
    }
    const callbacks = rows
      .filter((r) => r.role === "on_complete" || r.role === "on_success" || r.role === "on_failure")
      .map((r) => ({
        role: r.role as BatchView["callbacks"][number]["role"],
        id: r.id,
        state: r.state,
      }));
    const state = self.pending > 0 ? "open" : counts.pending > 0 ? "running" : "finished";
    return { id, state, counts, callbacks, members };
  }

  /**
   * Adds members to open batch `id`; each callback waits for them too.
   * @returns Their ids, in input order.
   * @throws SoniqError `NOT_FOUND`, `INVALID_STATE` (sealed), and as `soniq.enqueue`.
   */
  add(
    id: string,
    jobs: readonly BatchJobSpec[],
    options: { connection?: PgQueryable } = {},
  ): Promise<string[]> {
    return this.deps.add(id, jobs, options.connection);
  }

  /**
   * Seals batch `id`: no member can be added, and a callback whose members all ended is released
   * (or cancelled) in the same transaction.
   * @returns false when it was sealed already.
   * @throws SoniqError `NOT_FOUND`; `INVALID_STATE` when it has no member yet (a sealed batch
   * needs at least one: add, then seal).
   */
  async seal(id: string): Promise<boolean> {
    return (await this.deps.backend()).flows.batchSeal({ batchId: id });
  }

  /**
   * Cancels batch `id`: seals it if it is open (no member can be added afterwards), then cancels
   * every member that has not ended — queued ones at once, running ones by a cancel request
   * (their workers stop them and record `cancelled`). So the batch finishes `failed` once the
   * last running member stopped, and its callbacks follow their rules: `onComplete` and
   * `onFailure` run, `onSuccess` is cancelled (cancel a callback by its id first to keep it from
   * running). A finished batch is left as it is (all counts 0).
   * @throws SoniqError `NOT_FOUND` when no such batch is stored; `INVALID_STATE` when it is open
   *   with no member (nothing to cancel; nothing written).
   */
  async cancel(id: string): Promise<BatchCancelResult> {
    const backend = await this.deps.backend();
    const view = await this.get(id);
    if (!view) throw new SoniqError("NOT_FOUND", `no batch with id ${id}`);
    let sealed = false;
    if (view.state === "open") {
      try {
        sealed = await backend.flows.batchSeal({ batchId: id });
      } catch (err) {
        if (!isSoniqError(err, "INVALID_STATE")) throw err;
        throw new SoniqError(
          "INVALID_STATE",
          `batch ${id} is open with no member: nothing to cancel (nothing written)`,
          { cause: err },
        );
      }
    }
    const result: BatchCancelResult = { sealed, cancelled: 0, requested: 0 };
    // Read again after the seal: a member added just before it is cancelled too.
    const members = sealed ? ((await this.get(id))?.members ?? []) : view.members;
    for (const member of members) {
      if (member.state !== "waiting" && member.state !== "queued" && member.state !== "processing")
        continue;
      const state = await backend.admin.jobCancelRequest({
        id: member.id,
        retentionSeconds: this.deps.retentionFor(member.name),
      });
      if (state === "cancelled") result.cancelled += 1;
      else if (state === "requested") result.requested += 1;
    }
    return result;
  }
}
