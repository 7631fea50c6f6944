/**
 * The SQLite backend's {@link SubmissionStore}: each method one `BEGIN IMMEDIATE` transaction over
 * the statements of submission-sql.ts, so it is atomic and exactly-once across the processes
 * sharing the file. Contract: contract/submission-store.ts.
 */
import { randomUUID } from "node:crypto";
import { SoniqError } from "../../errors.js";
import { claimedJobOfRow } from "../claimed-job.js";
import { admissionDecision } from "../contract/admission.js";
import type { Owner } from "../contract/index.js";
import { parsePhase } from "../contract/phases.js";
import {
  type AnswerResult,
  type AnswerTarget,
  type ClaimedRemote,
  decodeAnswer,
  encodeAnswer,
  type MarkSubmittingParams,
  type MarkSubmittingResult,
  type RecoveredSubmission,
  type RemoteAnswer,
  type Resolution,
  type SubmissionCounts,
  type SubmissionFilter,
  type SubmissionQueueCount,
  type SubmissionRecord,
  type SubmissionRecoverParams,
  type SubmissionStore,
} from "../contract/submission-store.js";
import { countsOf, filterPhase, queueCountsOf } from "../shared/submission-reads.js";
import { dateOrNull, secondsToMs } from "./clock.js";
import type { SqliteConnection, SqliteSession } from "./connection.js";
import { type ClaimedRecord, type SubmissionRecordRow, toSubmissionRecord } from "./rows.js";
import { recoverSubmissions } from "./submission-recovery.js";
import { COMPLETE, fence, finishJob } from "./transactions.js";

/** See the module comment. */
export class SqliteSubmissionStore implements SubmissionStore {
  /** @param wake - wakes this process's claimers of `queue` (a requeued job). */
  constructor(
    private readonly conn: SqliteConnection,
    private readonly wake: (queue: string) => void,
  ) {}

  private tx<T>(fn: (s: SqliteSession, now: number) => T): Promise<T> {
    return this.conn.use((s) => s.immediate(() => fn(s, s.nowMs())));
  }

  private owns(s: SqliteSession, jobId: string, owner: Owner): { queue: string } | undefined {
    return s
      .statement("subOwnedJob")
      .get({ id: jobId, workerId: owner.workerId, claimToken: owner.claimToken }) as
      | { queue: string }
      | undefined;
  }

  private clearOwner(s: SqliteSession, jobId: string, owner: Owner, now: number): void {
    s.statement("subClearOwner").run({
      id: jobId,
      workerId: owner.workerId,
      claimToken: owner.claimToken,
      now,
    });
  }

  submissionMarkSubmitting(params: MarkSubmittingParams): Promise<MarkSubmittingResult> {
    return this.tx((s, now): MarkSubmittingResult => {
      if (!this.owns(s, params.jobId, params.owner)) return { kind: "fenced" };
      const existing = s.statement("subPhase").get({ id: params.jobId }) as
        | { phase: string }
        | undefined;
      if (existing && existing.phase !== "released") {
        return { kind: "illegal", phase: parsePhase(existing.phase) };
      }
      const counts = s
        .statement("subAdmissionCounts")
        .get({ name: params.name, id: params.jobId, since: now - 60_000 }) as {
        in_flight: number;
        last_minute: number;
      };
      const decision = admissionDecision(
        { inFlight: counts.in_flight, lastMinute: counts.last_minute },
        params.budget,
      );
      if (!decision.admit) {
        return {
          kind: "over_budget",
          reason: decision.reason,
          retryInSeconds: decision.retryInSeconds,
        };
      }
      s.statement("subMarkSubmitting").run({
        id: params.jobId,
        name: params.name,
        queue: params.queue,
        now,
      });
      const row = s.statement("subPhase").get({ id: params.jobId }) as { generation: number };
      return { kind: "marked", generation: row.generation };
    });
  }

  submissionAccept(params: {
    jobId: string;
    owner: Owner;
    taskId: string;
    pollDelaySeconds: number;
  }): Promise<boolean> {
    return this.tx((s, now) => {
      if (!this.owns(s, params.jobId, params.owner)) return false;
      const sub = s.statement("subPhase").get({ id: params.jobId }) as
        | { phase: string; answer: string | null; job_name: string }
        | undefined;
      if (!sub || (sub.phase !== "submitting" && sub.phase !== "frozen")) return false;
      let answer = sub.answer;
      const early = s.statement("subEarlyAnswer").get({ taskId: params.taskId }) as
        | { job_name: string | null; answer: string }
        | undefined;
      if (
        early &&
        answer === null &&
        (early.job_name === null || early.job_name === sub.job_name)
      ) {
        answer = early.answer;
        s.statement("subDeleteEarly").run({ taskId: params.taskId });
      }
      s.statement("subAccept").run({
        id: params.jobId,
        taskId: params.taskId,
        answer,
        dueAt: answer === null ? now + secondsToMs(params.pollDelaySeconds) : now,
        now,
      });
      this.clearOwner(s, params.jobId, params.owner, now);
      return true;
    });
  }

  submissionFreeze(params: { jobId: string; owner: Owner; reason: string }): Promise<boolean> {
    return this.tx((s, now) => {
      if (!this.owns(s, params.jobId, params.owner)) return false;
      if (
        s.statement("subFreeze").run({ id: params.jobId, reason: params.reason, now }).changes === 0
      ) {
        return false;
      }
      this.clearOwner(s, params.jobId, params.owner, now);
      return true;
    });
  }

  async submissionRelease(params: {
    jobId: string;
    owner: Owner;
    newKey: boolean;
    requeue: boolean;
  }): Promise<boolean> {
    const queue = await this.tx((s, now) => {
      const job = this.owns(s, params.jobId, params.owner);
      if (!job) return undefined;
      const bump = params.newKey ? 1 : 0;
      if (s.statement("subRelease").run({ id: params.jobId, bump, now }).changes === 0) {
        return undefined;
      }
      if (params.requeue) {
        s.statement("subRequeueJob").run({
          id: params.jobId,
          workerId: params.owner.workerId,
          claimToken: params.owner.claimToken,
          now,
        });
      }
      return job.queue;
    });
    if (queue !== undefined && params.requeue) this.wake(queue);
    return queue !== undefined;
  }

  submissionComplete(params: {
    jobId: string;
    owner: Owner;
    result: string | null;
    retentionSeconds: number;
  }): Promise<boolean> {
    return this.tx((s, now) => {
      if (!this.owns(s, params.jobId, params.owner)) return false;
      if (s.statement("subFinish").run({ id: params.jobId, now }).changes === 0) return false;
      // The job's success: moved to soniq_finished_jobs (or deleted at retention 0), as jobComplete.
      const owned = { id: params.jobId, ...fence(params.owner), result: params.result };
      finishJob(s, COMPLETE, owned, secondsToMs(params.retentionSeconds));
      return true;
    });
  }

  async submissionFinish(params: { jobId: string }): Promise<void> {
    await this.tx((s, now) => s.statement("subFinish").run({ id: params.jobId, now }));
  }

  pollClaimDue(params: {
    workerId: string;
    names: readonly string[];
    reconcilable: readonly string[];
    limit: number;
  }): Promise<ClaimedRemote[]> {
    const limit = Math.floor(params.limit);
    if (!(limit >= 1)) return Promise.resolve([]);
    return this.tx((s, now) => {
      const due = s.statement("subDue").all({
        now,
        names: JSON.stringify(params.names),
        reconcilable: JSON.stringify(params.reconcilable),
        limit,
      }) as Array<{ job_id: string }>;
      const out: ClaimedRemote[] = [];
      for (const { job_id } of due) {
        const job = s
          .statement("subTakeJob")
          .get({ id: job_id, workerId: params.workerId, claimToken: randomUUID(), now }) as
          | ClaimedRecord
          | undefined;
        if (!job) continue;
        const sub = s.statement("subRow").get({ id: job_id }) as {
          phase: string;
          task_id: string | null;
          generation: number;
          accepted_at: number | null;
          polls: number;
          answer: string | null;
        };
        out.push({
          job: claimedJobOfRow(job),
          phase: sub.phase === "frozen" ? "frozen" : "accepted",
          taskId: sub.task_id,
          generation: sub.generation,
          acceptedAt: dateOrNull(sub.accepted_at),
          polls: sub.polls,
          answer: decodeAnswer(sub.answer),
        });
      }
      return out;
    });
  }

  pollRelease(params: {
    jobId: string;
    owner: Owner;
    delaySeconds: number;
    countPoll: boolean;
  }): Promise<boolean> {
    return this.tx((s, now) => {
      if (!this.owns(s, params.jobId, params.owner)) return false;
      const changed = s.statement("subReschedule").run({
        id: params.jobId,
        dueAt: now + secondsToMs(params.delaySeconds),
        count: params.countPoll ? 1 : 0,
        now,
      }).changes;
      if (changed === 0) return false;
      this.clearOwner(s, params.jobId, params.owner, now);
      return true;
    });
  }

  submissionAnswer(params: { target: AnswerTarget; answer: RemoteAnswer }): Promise<AnswerResult> {
    const answer = encodeAnswer(params.answer);
    return this.tx((s, now): AnswerResult => {
      let jobId: string;
      if ("jobId" in params.target) {
        jobId = params.target.jobId;
        if (!s.statement("subPhase").get({ id: jobId })) {
          const exists = s.statement("subJobStatus").get({ id: jobId });
          throw new SoniqError(
            "NOT_FOUND",
            exists ? `job ${jobId} has no remote submission` : `no job with id ${jobId}`,
          );
        }
      } else {
        const { taskId, name } = params.target;
        const matches = (
          s.statement("subByTask").all({ taskId }) as Array<{ job_id: string; job_name: string }>
        ).filter((m) => name === undefined || m.job_name === name);
        if (matches.length > 1) {
          throw new SoniqError(
            "INVALID_STATE",
            `task id ${taskId} belongs to ${matches.length} jobs; name the job`,
          );
        }
        const match = matches[0];
        if (!match) {
          s.statement("subInsertEarly").run({ taskId, name: name ?? null, answer, now });
          return "early";
        }
        jobId = match.job_id;
      }
      const job = s.statement("subJobStatus").get({ id: jobId }) as { status: string } | undefined;
      if (job?.status !== "processing") return "already_finished";
      const changed = s.statement("subStoreAnswer").run({ id: jobId, answer, now }).changes;
      return changed > 0 ? "stored" : "already_finished";
    });
  }

  async submissionResolve(params: { jobId: string; resolution: Resolution }): Promise<boolean> {
    const queue = await this.tx((s, now) => {
      const job = s.statement("subJobStatus").get({ id: params.jobId }) as
        | { status: string; worker_id: string | null }
        | undefined;
      const sub = s.statement("subPhase").get({ id: params.jobId }) as
        | { phase: string }
        | undefined;
      if (job?.status !== "processing" || job.worker_id !== null || sub?.phase !== "frozen") {
        return undefined;
      }
      const { resolution } = params;
      if (resolution.kind === "accepted") {
        s.statement("subResolveAccepted").run({ id: params.jobId, taskId: resolution.taskId, now });
        return null;
      }
      if (resolution.kind === "failed") {
        const answer = encodeAnswer({ kind: "failed", error: resolution.error, retry: false });
        s.statement("subResolveFailed").run({ id: params.jobId, answer, now });
        return null;
      }
      s.statement("subResolveReleased").run({ id: params.jobId, now });
      s.statement("subRequeueUnowned").run({ id: params.jobId, now });
      const row = s.statement("subGet").get({ id: params.jobId }) as SubmissionRecordRow;
      return row.queue;
    });
    if (typeof queue === "string") this.wake(queue);
    return queue !== undefined;
  }

  pollNow(params: { jobId: string; frozenNeedsAnswer?: boolean }): Promise<boolean> {
    const needsAnswer = params.frozenNeedsAnswer === true ? 1 : 0;
    return this.tx(
      (s, now) => s.statement("subPollNow").run({ id: params.jobId, now, needsAnswer }).changes > 0,
    );
  }

  /** Recovery by last durable phase, liveness by each owner's declared timeout (submission-recovery.ts). */
  submissionRecover(params: SubmissionRecoverParams): Promise<RecoveredSubmission[]> {
    const timeoutMs =
      params.heartbeatTimeoutSeconds === null ? null : secondsToMs(params.heartbeatTimeoutSeconds);
    return this.tx((s, now) => recoverSubmissions(s, now, timeoutMs, params.liveWorkerId ?? null));
  }

  submissionPrune(params: { limit: number }): Promise<number> {
    return this.conn.use((s) => s.statement("subPrune").run({ limit: params.limit }).changes);
  }

  submissionGet(params: { jobId: string }): Promise<SubmissionRecord | null> {
    return this.conn.use((s) => {
      const row = s.statement("subGet").get({ id: params.jobId }) as
        | SubmissionRecordRow
        | undefined;
      return row ? toSubmissionRecord(row) : null;
    });
  }

  /** Most recently updated first. */
  submissionList(params: { filter: SubmissionFilter; limit: number }): Promise<SubmissionRecord[]> {
    return this.conn.use((s) =>
      (
        s
          .statement("subList")
          .all({ phase: filterPhase(params.filter), limit: params.limit }) as SubmissionRecordRow[]
      ).map(toSubmissionRecord),
    );
  }

  /** Submissions in custody whose job is processing. */
  submissionCounts(): Promise<SubmissionCounts> {
    return this.conn.use((s) =>
      countsOf(s.statement("subCounts").all() as Array<{ phase: string; n: number }>),
    );
  }

  /** See {@link SubmissionStore.submissionCountsByQueue}. */
  submissionCountsByQueue(): Promise<SubmissionQueueCount[]> {
    return this.conn.use((s) =>
      queueCountsOf(
        s.statement("subCountsByQueue").all() as Array<{ queue: string; phase: string; n: number }>,
      ),
    );
  }
}
