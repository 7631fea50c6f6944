/**
 * `soniq.remote`: completion from outside and the operator's actions on remote jobs
 * (docs/remote-jobs.md, "Completion from outside" and "Operators") — the one source the CLI
 * (`soniq remote …`) uses. Completion by job id or task id is exactly once: the answer is stored
 * (first answer wins) and applied by the next poll claim, which is itself exactly once; a callback
 * that arrives by task id before `accepted` was written is kept and applied when it is.
 */
import type { Backend } from "../backends/contract/index.js";
import type {
  AnswerResult,
  AnswerTarget,
  SubmissionCounts,
  SubmissionFilter,
  SubmissionRecord,
} from "../backends/contract/submission-store.js";
import { SoniqError } from "../errors.js";
import { toJsonText } from "../jobs/payload.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import { type Accepted, assertTaskId, type Failed, type NotSubmitted } from "./results.js";

/** Which job a callback is for: `{ jobId }`, or `{ taskId, job? }` (`job`: the job name). */
export type RemoteTarget = { jobId: string } | { taskId: string; job?: string };

/** What the admin needs from the instance. */
export interface RemoteAdminDeps {
  backend(): Promise<Backend>;
  /** `maxPayloadBytes`. */
  maxPayloadBytes: number;
  /** Emits `remote_phase` for an operator's resolution (worker_id null). */
  events?: EventBus<SoniqEventMap>;
  /**
   * Whether the job `name` can be reconciled: true (its definition here has `reconcile`), false
   * (defined here without one), or undefined (not defined in this instance: unknown). `pollNow`
   * refuses a frozen job that is known not to be reconcilable.
   */
  reconcilable?(name: string): boolean | undefined;
}

function targetOf(target: RemoteTarget): AnswerTarget {
  if (typeof target !== "object" || target === null) {
    throw new SoniqError("INVALID_OPTION", "name the job: { jobId } or { taskId, job? }");
  }
  if ("jobId" in target && typeof target.jobId === "string" && target.jobId.length > 0) {
    return { jobId: target.jobId };
  }
  if ("taskId" in target) {
    assertTaskId(target.taskId);
    if (target.job !== undefined && (typeof target.job !== "string" || target.job === "")) {
      throw new SoniqError("INVALID_OPTION", "job must be the job name of the task, as text");
    }
    return target.job === undefined
      ? { taskId: target.taskId }
      : { taskId: target.taskId, name: target.job };
  }
  throw new SoniqError("INVALID_OPTION", "name the job: { jobId } or { taskId, job? }");
}

/** See the module comment. */
export class RemoteAdmin {
  constructor(private readonly deps: RemoteAdminDeps) {}

  /**
   * A provider's callback says the task finished with `result` (JSON).
   * @returns `stored` (applied by the next poll, exactly once), `early` (no submission has this
   *   task id yet; applied when `accepted` is written) or `already_finished`.
   * @throws SoniqError `INVALID_PAYLOAD` (result not JSON), `NOT_FOUND`, `INVALID_RESULT` (task id).
   */
  async complete(target: RemoteTarget, result: unknown): Promise<AnswerResult> {
    const text =
      result === undefined || result === null
        ? null
        : toJsonText(result, "remote result", this.deps.maxPayloadBytes);
    const backend = await this.deps.backend();
    return backend.submissions.submissionAnswer({
      target: targetOf(target),
      answer: { kind: "done", result: text },
    });
  }

  /**
   * A provider's callback says the task failed. `retry` allows a new submission (new key).
   * @throws SoniqError `NOT_FOUND`, `INVALID_RESULT`, `INVALID_OPTION`.
   */
  async fail(
    target: RemoteTarget,
    error: string,
    options: { retry?: boolean } = {},
  ): Promise<AnswerResult> {
    if (typeof error !== "string" || error.length === 0) {
      throw new SoniqError("INVALID_OPTION", "fail() needs a non-empty error text");
    }
    const backend = await this.deps.backend();
    return backend.submissions.submissionAnswer({
      target: targetOf(target),
      answer: { kind: "failed", error: error.slice(0, 4000), retry: options.retry === true },
    });
  }

  /**
   * An operator resolves a frozen submission: `accepted(taskId)` (handed to polling, due now),
   * `notSubmitted()` (released and submitted again with the same idempotency key) or
   * `failed(reason)` (dead-lettered `remote_failed` by the next worker).
   * @throws SoniqError `NOT_FOUND` (no such job or submission), `INVALID_STATE` (not frozen, or a
   *   worker holds it right now), `INVALID_RESULT` (bad task id), `INVALID_OPTION` (empty reason).
   */
  async resolve(jobId: string, resolution: Accepted | NotSubmitted | Failed): Promise<void> {
    const backend = await this.deps.backend();
    const kind = (resolution as { kind?: unknown } | null)?.kind;
    let mapped: Parameters<Backend["submissions"]["submissionResolve"]>[0]["resolution"];
    if (kind === "accepted") {
      assertTaskId((resolution as Accepted).taskId);
      mapped = { kind: "accepted", taskId: (resolution as Accepted).taskId };
    } else if (kind === "not_submitted") mapped = { kind: "not_submitted" };
    else if (kind === "failed") {
      const error = (resolution as Failed).error;
      if (typeof error !== "string" || error.length === 0) {
        throw new SoniqError("INVALID_OPTION", "failed(reason) needs a non-empty reason");
      }
      mapped = { kind: "failed", error: error.slice(0, 4000) };
    } else {
      throw new SoniqError(
        "INVALID_RESULT",
        "resolve takes accepted(taskId), notSubmitted() or failed(reason)",
      );
    }
    if (await backend.submissions.submissionResolve({ jobId, resolution: mapped })) {
      if (mapped.kind !== "failed" && this.deps.events) {
        const record = await backend.submissions.submissionGet({ jobId });
        this.deps.events.emit("remote_phase", {
          worker_id: null,
          job_id: jobId,
          job_name: record?.name ?? "",
          phase: mapped.kind === "accepted" ? "accepted" : "released",
          task_id: mapped.kind === "accepted" ? mapped.taskId : null,
        });
      }
      return;
    }
    const record = await this.show(jobId);
    throw new SoniqError(
      "INVALID_STATE",
      `job ${jobId} is in phase ${record.phase}${record.workerId ? ` (held by ${record.workerId})` : ""}; only frozen submissions can be resolved`,
    );
  }

  /**
   * Polls an awaiting (or reconciles a frozen) job now. A frozen job with no stored answer whose
   * definition in this instance has no `reconcile` is refused: no worker would ever claim it (an
   * operator resolves it with `resolve`). When this instance does not define the job, whether it
   * can be reconciled is unknown and the job is made due (a worker whose definition has
   * `reconcile` takes it).
   * @throws SoniqError `NOT_FOUND`, `INVALID_STATE` (not awaiting or frozen, held right now, or
   *   frozen and not reconcilable: resolve it instead). Nothing is written when it throws.
   */
  async pollNow(jobId: string): Promise<void> {
    const backend = await this.deps.backend();
    const before = await this.show(jobId);
    // Decided where the definitions are known; the backend applies it in the same write.
    const frozenNeedsAnswer = this.deps.reconcilable?.(before.name) === false;
    if (await backend.submissions.pollNow({ jobId, frozenNeedsAnswer })) return;
    const record = await this.show(jobId);
    if (
      frozenNeedsAnswer &&
      record.phase === "frozen" &&
      record.answer === null &&
      record.jobStatus === "processing" &&
      record.workerId === null
    ) {
      throw new SoniqError(
        "INVALID_STATE",
        `job ${jobId} is frozen and ${record.name} has no reconcile, so no worker will ever claim it; resolve it instead: soniq remote resolve ${jobId} (--accepted <task-id> | --not-submitted | --failed <reason>)`,
      );
    }
    throw new SoniqError(
      "INVALID_STATE",
      `job ${jobId} is in phase ${record.phase}; only accepted or frozen submissions not being polled right now can be polled now`,
    );
  }

  /**
   * One remote job's submission record.
   * @throws SoniqError `NOT_FOUND`.
   */
  async show(jobId: string): Promise<SubmissionRecord> {
    const backend = await this.deps.backend();
    const record = await backend.submissions.submissionGet({ jobId });
    if (!record) {
      throw new SoniqError(
        "NOT_FOUND",
        (await backend.jobGet({ id: jobId }))
          ? `job ${jobId} has no remote submission (not a remote job, or not submitted yet)`
          : `no job with id ${jobId}`,
      );
    }
    return record;
  }

  /**
   * Remote submissions by filter (`frozen`, `awaiting`, `submitting`, `all`), newest first.
   * @throws SoniqError `INVALID_OPTION` (unknown filter, `limit` not an integer >= 1).
   */
  async list(filter: SubmissionFilter = "all", limit = 100): Promise<SubmissionRecord[]> {
    if (!["frozen", "awaiting", "submitting", "all"].includes(filter)) {
      throw new SoniqError("INVALID_OPTION", `unknown filter ${JSON.stringify(filter)}`);
    }
    if (!Number.isInteger(limit) || limit < 1) {
      throw new SoniqError("INVALID_OPTION", "limit must be an integer >= 1");
    }
    const backend = await this.deps.backend();
    return backend.submissions.submissionList({ filter, limit });
  }

  /** Counts of submitting, awaiting and frozen remote jobs. */
  async counts(): Promise<SubmissionCounts> {
    return (await this.deps.backend()).submissions.submissionCounts();
  }
}
