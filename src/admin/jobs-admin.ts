/**
 * `soniq.jobs`: find, inspect and act on jobs (issue 14). Lists with filters and cursor pages,
 * counts per queue × status, one job with its timeline, cancel (queued at once; running through
 * its owner), run now / retry, delete, and bulk actions. Every method reads or writes through the
 * backend's operations store (contract: admin-store.ts); the CLI and the dashboard stand on it.
 */

import type { Backend, CancelRequestState, JobFilter } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { toJsonText } from "../jobs/payload.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { StepRecords } from "../worker/job-resume.js";
import {
  assertBulkRequest,
  type BulkOptions,
  type BulkResult,
  bulkBound,
  bulkIds,
  runBulk,
} from "./bulk.js";
import { type JobQuery, type PageOptions, toJobFilter, toPage } from "./filters.js";
import { splitRemoteCells } from "./remote-split.js";
import { assertReplayable } from "./replayable.js";
import {
  deadLetterView,
  type JobDetail,
  type JobListView,
  jobListView,
  jobView,
  timeline,
} from "./views.js";
import { type WaitForOptions, waitForJob } from "./wait-for-job.js";
import { findWaitingForWorker, type WaitingForWorker } from "./waiting-for-worker.js";

/** What the admin facades need from the instance. */
export interface AdminDeps {
  backend(): Promise<Backend>;
  /** `resultRetention`, in seconds: how long a cancelled job is kept. */
  readonly retentionSeconds: number;
  /**
   * The `resultRetention` (seconds) a job definition of this instance sets for `name`, if any: a
   * queued job cancelled here is kept that long instead (0: not kept).
   */
  readonly retentionOf?: (name: string) => number | undefined;
  /** The instance's event bus: a queued job cancelled here emits `job_cancelled`. */
  readonly events?: EventBus<SoniqEventMap>;
  /**
   * The caller's `heartbeatTimeout`, in seconds: judges the liveness of workers that declared
   * none ({@link JobsAdmin.waitingForWorker}). Default 30.
   */
  readonly heartbeatTimeoutSeconds?: number;
  /** `maxPayloadBytes`: the largest step result an operator may record. Default 1 MiB. */
  readonly maxPayloadBytes?: number;
}

/** A page of jobs, newest first: list rows, which carry no result (`get(id)` does). */
export interface JobPage {
  jobs: JobListView[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** What {@link JobsAdmin.cancel} did. */
export type CancelResult = Extract<
  CancelRequestState,
  "cancelled" | "requested" | "already_requested"
>;

/** An operator's answer for a frozen step ({@link JobsAdmin.resolveStep}). */
export type StepAnswer = { done: unknown } | { rerun: true };

/** The steps' records of a job (worker/job-resume.ts), or null when unreadable. */
function parseSteps(text: string | null): StepRecords | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" ? (parsed as StepRecords) : null;
  } catch {
    return null;
  }
}

/**
 * Appends an operator action's timeline event after the change it records, best effort (as the
 * worker appends its own): the change is made; a lost event never fails it.
 */
async function appendEvent(
  backend: Backend,
  jobId: string,
  kind: "step_resolved" | "checkpoint_cleared",
  detail: string | null,
): Promise<void> {
  await backend.admin.jobEventsAppend({ events: [{ jobId, kind, detail }] }).catch(() => undefined);
}

/** A bulk action on jobs. */
export interface JobBulkRequest extends BulkOptions {
  action: "cancel" | "retry" | "delete";
  /** These jobs; or … */
  ids?: readonly string[];
  /** … everything this filter matches (created before the action began). */
  filter?: JobQuery;
}

/** See the module comment. */
export class JobsAdmin {
  constructor(private readonly deps: AdminDeps) {}

  /**
   * Waits until job `id` finishes, in this process or any other, and resolves with its result
   * (what its handler returned, parsed from JSON; `undefined` when it returned nothing). A failure
   * that will be retried is not final: the wait goes on until the job is `done`, cancelled or
   * dead-lettered. While waiting it reads the job's row at a growing interval (50 ms, then × 1.5,
   * at most once a second); `definition.waitFor(id)` is the same, typed from the definition.
   * See docs/operations.md, "Waiting for a job's result".
   * @param options.timeout - most **seconds** to wait (default: no bound).
   * @param options.signal - aborting it ends the wait (rejects with its reason).
   * @throws SoniqError `JOB_FAILED` when it ended in the dead-letter queue (message: its last
   * error; `details`: `jobId`, `reason`, `attempts`, `lastError`), `JOB_CANCELLED`, `NOT_FOUND`
   * (never enqueued, deleted, or finished with nothing kept), `WAIT_TIMEOUT` (the job is left as
   * it is), `INVALID_OPTION`, `INVALID_INPUT`; the signal's reason when it is aborted.
   */
  waitFor(id: string, options: WaitForOptions = {}): Promise<unknown> {
    return waitForJob(() => this.deps.backend(), id, options);
  }

  /**
   * Due queued jobs that no live worker can run, per queue and name: how many, the oldest one's
   * age in seconds, and why (`unknown_name`: no live worker serving the queue has a definition
   * of that name; `version_too_new`: some do, all of a lower version than the job's;
   * `no_worker_for_queue`: no live worker serves the queue). Such jobs wait, untouched, for a
   * worker that can run them (docs/operations.md, "Jobs waiting for a worker that can run them").
   * Reads the live workers' rows and an index of queued jobs, one probe per (queue, name,
   * version), counting only the groups no live worker can run; never finished jobs. A live worker
   * of an earlier release recorded no job names and counts as able to run any job of its queues.
   */
  async waitingForWorker(): Promise<WaitingForWorker[]> {
    const backend = await this.deps.backend();
    const scan = await findWaitingForWorker(backend.admin, this.deps.heartbeatTimeoutSeconds ?? 30);
    return scan.waiting;
  }

  /**
   * Jobs matching `query`, newest first, one page (`limit` default 50, at most 1000). The rows
   * carry no result (a result may be megabytes and no list shows it): {@link JobsAdmin.get} does.
   * @throws SoniqError `INVALID_OPTION` for a bad filter, limit or cursor.
   */
  async list(query: JobQuery = {}, page: PageOptions = {}): Promise<JobPage> {
    const filter = toJobFilter(query);
    const { cursor, limit } = toPage(page);
    const backend = await this.deps.backend();
    // The database's now, read once for the page: whether a queued row reads `scheduled`. A job
    // that becomes due between this read and the page's own may read either way.
    const now = await backend.now();
    const result = await backend.admin.jobList({ filter, cursor, limit });
    return {
      jobs: result.items.map((row) => jobListView(row, now)),
      nextCursor: result.nextCursor,
    };
  }

  /**
   * How many jobs match `query` (dead letters are not jobs here: `soniq.deadLetters`). Exact. A
   * query by status and queue only is answered from the live table and the finished-job counters,
   * in the same time at any history size; any other filter counts the matching rows of both job
   * tables (docs/backends.md, "Counting without scanning").
   * @throws SoniqError `INVALID_OPTION` for a bad filter.
   */
  async count(query: JobQuery = {}): Promise<number> {
    const filter = toJobFilter(query);
    return (await this.deps.backend()).admin.jobCount({ filter });
  }

  /**
   * Counts per queue × status (dead letters as `dead_letter`; queued jobs not yet due as
   * `scheduled`, due ones as `queued`, by the database clock; remote jobs apart from
   * `processing` as `remote_submitting`, `remote_accepted`, `remote_frozen`), zero cells left out.
   */
  async countByQueueStatus(): Promise<Array<{ queue: string; status: string; count: number }>> {
    const backend = await this.deps.backend();
    const [cells, remote] = await Promise.all([
      backend.admin.jobCountByQueueStatus({}),
      backend.submissions.submissionCountsByQueue(),
    ]);
    return splitRemoteCells(cells, remote);
  }

  /**
   * One job with its result and timeline; a dead-lettered job is found too
   * (`status: "dead_letter"`, no result). Null when neither table has it.
   */
  async get(id: string): Promise<JobDetail | null> {
    const backend = await this.deps.backend();
    const [row, events, now] = await Promise.all([
      backend.admin.jobDetail({ id }),
      backend.admin.jobEventsList({ jobId: id }),
      backend.now(),
    ]);
    if (row) {
      const view = jobView(row, now);
      return { ...view, timeline: timeline(row, events, view) };
    }
    const dead = await backend.deadLetterGet({ id });
    if (!dead) return null;
    return {
      ...deadLetterView(dead),
      status: "dead_letter",
      timeline: timeline({ ...dead, status: "dead_letter" }, events),
    };
  }

  /** How long job `id` is kept once cancelled: its definition's `resultRetention`, if any. */
  private async retentionFor(backend: Backend, id: string): Promise<number> {
    if (this.deps.retentionOf === undefined) return this.deps.retentionSeconds;
    const row = await backend.jobGet({ id });
    return (row && this.deps.retentionOf(row.name)) ?? this.deps.retentionSeconds;
  }

  /**
   * Cancels a job: a queued one at once (`cancelled`); a running one through its owner, which
   * aborts `ctx.signal` (reason `JobCancelledError`) and records `cancelled` when the handler
   * returns or after `shutdownSettle` (a sync handler sees `stopRequested()` and is recorded
   * when its thread returns). If its owner is dead, recovery records it `cancelled`.
   * @returns `cancelled`, `requested` (running; its owner will stop it) or `already_requested`.
   * @throws SoniqError `NOT_FOUND`; `INVALID_STATE` when it is done or cancelled already.
   */
  async cancel(id: string): Promise<CancelResult> {
    const backend = await this.deps.backend();
    const state = await backend.admin.jobCancelRequest({
      id,
      retentionSeconds: await this.retentionFor(backend, id),
    });
    if (state === "not_found") {
      if (await backend.deadLetterGet({ id })) {
        throw new SoniqError("INVALID_STATE", `job ${id} is in the dead-letter queue`);
      }
      throw new SoniqError("NOT_FOUND", `no job with id ${id}`);
    }
    if (state === "finished") {
      const row = await backend.jobGet({ id });
      throw new SoniqError("INVALID_STATE", `job ${id} is ${row?.status ?? "finished"} already`);
    }
    if (state === "cancelled") await this.emitCancelled(backend, id);
    return state;
  }

  /**
   * An operator's answer for a job frozen on an effect step whose outcome is unknown
   * (docs/checkpoints.md, "Frozen jobs"): `{ done: result }` records the step as done with that
   * result (plain JSON; the handler gets it back without running the step), `{ rerun: true }`
   * lets the step run again. The job becomes due now. Also accepted for a queued job whose effect
   * step is still marked running (answered before its next attempt freezes it). The freeze's
   * `last_error` (`frozen: …`) is cleared with the answer.
   * @throws SoniqError `NOT_FOUND` (no such job), `INVALID_STATE` (the job is not queued — in
   *   the dead-letter queue, which keeps no steps, included — the
   *   step is not frozen or running, or the job changed meanwhile), `INVALID_PAYLOAD` (a result
   *   that is not plain JSON or larger than `maxPayloadBytes` bytes), `INVALID_ARGS` (a bad
   *   answer).
   */
  async resolveStep(id: string, step: string, answer: StepAnswer): Promise<void> {
    const done = answer !== null && typeof answer === "object" && "done" in answer;
    const rerun = answer !== null && typeof answer === "object" && "rerun" in answer;
    if (done === rerun || (rerun && (answer as { rerun: unknown }).rerun !== true)) {
      throw new SoniqError(
        "INVALID_ARGS",
        "resolveStep(id, step, answer): answer must be { done: result } or { rerun: true }",
      );
    }
    const backend = await this.deps.backend();
    const state = await backend.jobResumeRead({ id });
    if (state === null) {
      if (!(await backend.jobGet({ id }))) {
        if (await backend.deadLetterGet({ id })) {
          throw new SoniqError(
            "INVALID_STATE",
            `job ${id} is in the dead-letter queue, which keeps no steps: nothing to resolve (a replay starts it afresh, running every step)`,
          );
        }
        throw new SoniqError("NOT_FOUND", `no job with id ${id}`);
      }
      throw new SoniqError(
        "INVALID_STATE",
        `job ${id} is not queued: only a frozen job is resolved`,
      );
    }
    const steps = parseSteps(state.steps);
    const record = steps?.[step];
    if (!steps || !record || (record.s !== "frozen" && record.s !== "running")) {
      throw new SoniqError(
        "INVALID_STATE",
        `job ${id} has no step "${step}" frozen or running (nothing to resolve)`,
      );
    }
    if (done) {
      const value = (answer as { done: unknown }).done;
      const limit = this.deps.maxPayloadBytes ?? 1024 * 1024;
      const t = Date.now();
      steps[step] =
        value === undefined
          ? { s: "done", t }
          : { s: "done", r: JSON.parse(toJsonText(value, `result of step "${step}"`, limit)), t };
    } else delete steps[step];
    const changed = await backend.jobStepsResolve({
      id,
      expected: state.steps as string,
      steps: JSON.stringify(steps),
    });
    if (!changed) {
      throw new SoniqError("INVALID_STATE", `job ${id} changed meanwhile; read it and try again`);
    }
    await appendEvent(backend, id, "step_resolved", `${step}: ${done ? "done" : "rerun"}`);
  }

  /**
   * Clears a queued job's checkpoint and steps (docs/checkpoints.md): its next attempt starts
   * afresh (`ctx.resume` undefined, every step runs). Its due time is unchanged: a frozen job
   * stays frozen (answer it with {@link JobsAdmin.resolveStep}, or cancel it).
   * @throws SoniqError `NOT_FOUND` (no such job), `INVALID_STATE` (the job is not queued; one in
   *   the dead-letter queue, which keeps no checkpoint, is told so).
   */
  async clearCheckpoint(id: string): Promise<void> {
    const backend = await this.deps.backend();
    if (await backend.jobResumeClear({ id })) {
      await appendEvent(backend, id, "checkpoint_cleared", null);
      return;
    }
    if (!(await backend.jobGet({ id }))) {
      if (await backend.deadLetterGet({ id })) {
        throw new SoniqError(
          "INVALID_STATE",
          `job ${id} is in the dead-letter queue, which keeps no checkpoint or steps: nothing to clear (a replay starts it afresh)`,
        );
      }
      throw new SoniqError("NOT_FOUND", `no job with id ${id}`);
    }
    throw new SoniqError(
      "INVALID_STATE",
      `job ${id} is not queued: only a queued job's checkpoint is cleared`,
    );
  }

  /** `job_cancelled` for a queued job cancelled here (a running one's worker emits its own). */
  private async emitCancelled(backend: Backend, id: string): Promise<void> {
    const events = this.deps.events;
    if (!events?.hasListeners("job_cancelled")) return;
    const row = await backend.jobGet({ id });
    if (row) events.emit("job_cancelled", { job_id: id, job_name: row.name, queue: row.queue });
  }

  /**
   * Run now / retry: a queued job becomes due now; a done or cancelled job goes back to queued,
   * due now (attempts kept); a dead-lettered job is replayed (attempts reset).
   * @throws SoniqError `NOT_FOUND`; `INVALID_STATE` while it runs, or for a dead letter whose
   *   failed dependency is in the dead-letter queue (replay that one); `DEDUP_CONFLICT` (replay).
   */
  async retry(id: string): Promise<void> {
    const backend = await this.deps.backend();
    const state = await backend.admin.jobRetryNow({ id });
    if (state === "done") return;
    if (state === "processing") {
      throw new SoniqError("INVALID_STATE", `job ${id} is running; cancel it first`);
    }
    await assertReplayable(backend, id);
    if (await backend.deadLetterReplay({ id })) {
      await backend.admin.jobEventsAppend({ events: [{ jobId: id, kind: "replayed" }] });
      return;
    }
    throw new SoniqError("NOT_FOUND", `no job with id ${id}`);
  }

  /**
   * Deletes a job that is not running (or a dead-letter entry with this id).
   * @throws SoniqError `NOT_FOUND`; `INVALID_STATE` while it runs.
   */
  async delete(id: string): Promise<void> {
    const backend = await this.deps.backend();
    const state = await backend.admin.jobDelete({ id });
    if (state === "done") return;
    if (state === "processing") {
      throw new SoniqError("INVALID_STATE", `job ${id} is running; cancel it first`);
    }
    if ((await backend.admin.deadLetterDelete({ ids: [id] })) === 0) {
      throw new SoniqError("NOT_FOUND", `no job with id ${id}`);
    }
  }

  /**
   * A bulk action on `ids` or on everything `filter` matches, in batches, guarded by
   * `expectedCount` (see bulk.ts). Cancel skips finished jobs; retry and delete skip running ones.
   * @throws SoniqError `INVALID_OPTION` (neither or both of ids and filter, bad filter),
   * `COUNT_MISMATCH`.
   */
  async bulk(request: JobBulkRequest): Promise<BulkResult> {
    assertBulkRequest(request, ["action", "ids", "filter"]);
    const { action, ids, filter: query, ...options } = request;
    if (!["cancel", "retry", "delete"].includes(action)) {
      throw new SoniqError("INVALID_OPTION", `action must be cancel, retry or delete`);
    }
    if ((ids === undefined) === (query === undefined)) {
      throw new SoniqError("INVALID_OPTION", "give either ids or filter (use filter: {} for all)");
    }
    const backend = await this.deps.backend();
    let filter: JobFilter;
    if (ids !== undefined) filter = { ids: bulkIds(ids) };
    else {
      // Bounded by the instant the action began: later enqueues are not touched.
      const checked = toJobFilter(query);
      filter = {
        ...checked,
        createdBefore: await bulkBound(() => backend.now(), checked.createdBefore),
      };
    }
    const act = async (id: string): Promise<boolean> => {
      if (action === "cancel") {
        const state = await backend.admin.jobCancelRequest({
          id,
          retentionSeconds: await this.retentionFor(backend, id),
        });
        if (state === "cancelled") await this.emitCancelled(backend, id);
        return state === "cancelled" || state === "requested";
      }
      const state =
        action === "retry"
          ? await backend.admin.jobRetryNow({ id })
          : await backend.admin.jobDelete({ id });
      return state === "done";
    };
    return runBulk(
      {
        count: () => backend.admin.jobCount({ filter }),
        page: async (cursor, limit) => {
          const p = await backend.admin.jobList({ filter, cursor, limit });
          return { ids: p.items.map((j) => j.id), nextCursor: p.nextCursor };
        },
      },
      options,
      act,
    );
  }
}
