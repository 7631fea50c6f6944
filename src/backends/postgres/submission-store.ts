/**
 * The PostgreSQL backend's {@link SubmissionStore}: each write one transaction on one pooled
 * connection, locking the job row it fences on (`FOR UPDATE`), so it is atomic and exactly-once
 * across processes; the admission check takes a transaction-scoped advisory lock per job name.
 * Statements: submission-sql.ts, run by submission-runners.ts. Contract:
 * contract/submission-store.ts.
 */
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
import type { PgConnection } from "./connection.js";
import { isUuid } from "./identifiers.js";
import { type RawClaimedRow, type RawSubmissionRecord, toSubmissionRecord } from "./rows.js";
import { type SubmissionRunners, submissionRunners } from "./submission-runners.js";
import type { SubmissionStatements } from "./submission-sql.js";

export type { PgRun } from "./submission-runners.js";

/** What the store needs from the backend. */
export interface PostgresSubmissionDeps {
  conn: PgConnection;
  sql: SubmissionStatements;
  /** Wakes this process's claimers of `queue` (a requeued job; other processes poll). */
  wake(queue: string): void;
}

const fence = (jobId: string, owner: Owner) => ({
  id: jobId,
  workerId: owner.workerId,
  claimToken: owner.claimToken,
});

/** See the module comment. */
export class PostgresSubmissionStore implements SubmissionStore {
  private readonly deps: PostgresSubmissionDeps & SubmissionRunners;

  constructor(deps: PostgresSubmissionDeps) {
    this.deps = { ...deps, ...submissionRunners(deps.conn) };
  }

  private get sql(): SubmissionStatements {
    return this.deps.sql;
  }

  submissionMarkSubmitting(params: MarkSubmittingParams): Promise<MarkSubmittingResult> {
    const { sql } = this;
    return this.deps.transaction(async (run): Promise<MarkSubmittingResult> => {
      if (params.budget) await run(sql.admissionLock, { name: params.name });
      const owned = await run(sql.ownedJob, fence(params.jobId, params.owner));
      if (owned.rowCount === 0) return { kind: "fenced" };
      const existing = await run<{ phase: string }>(sql.phase, { id: params.jobId });
      const phase = existing.rows[0]?.phase;
      if (phase !== undefined && phase !== "released") {
        return { kind: "illegal", phase: parsePhase(phase) };
      }
      if (params.budget) {
        const counts = await run<{ in_flight: number; last_minute: number }>(sql.admissionCounts, {
          name: params.name,
          id: params.jobId,
        });
        const row = counts.rows[0] ?? { in_flight: 0, last_minute: 0 };
        const decision = admissionDecision(
          { inFlight: row.in_flight, lastMinute: row.last_minute },
          params.budget,
        );
        if (!decision.admit) {
          return {
            kind: "over_budget",
            reason: decision.reason,
            retryInSeconds: decision.retryInSeconds,
          };
        }
      }
      const marked = await run<{ generation: number }>(sql.markSubmitting, {
        id: params.jobId,
        name: params.name,
        queue: params.queue,
      });
      return { kind: "marked", generation: marked.rows[0]?.generation ?? 1 };
    });
  }

  submissionAccept(params: {
    jobId: string;
    owner: Owner;
    taskId: string;
    pollDelaySeconds: number;
  }): Promise<boolean> {
    const { sql } = this;
    return this.deps.transaction(async (run) => {
      if ((await run(sql.ownedJob, fence(params.jobId, params.owner))).rowCount === 0) return false;
      const sub = (
        await run<{ phase: string; answer: string | null; job_name: string }>(sql.phase, {
          id: params.jobId,
        })
      ).rows[0];
      if (!sub || (sub.phase !== "submitting" && sub.phase !== "frozen")) return false;
      let answer = sub.answer;
      if (answer === null) {
        const early = await run<{ answer: string }>(sql.takeEarly, {
          taskId: params.taskId,
          name: sub.job_name,
        });
        answer = early.rows[0]?.answer ?? null;
      }
      await run(sql.accept, {
        id: params.jobId,
        taskId: params.taskId,
        answer,
        delay: params.pollDelaySeconds,
      });
      await run(sql.clearOwner, fence(params.jobId, params.owner));
      return true;
    });
  }

  submissionFreeze(params: { jobId: string; owner: Owner; reason: string }): Promise<boolean> {
    const { sql } = this;
    return this.deps.transaction(async (run) => {
      if ((await run(sql.ownedJob, fence(params.jobId, params.owner))).rowCount === 0) return false;
      const frozen = await run(sql.freeze, { id: params.jobId, reason: params.reason });
      if (frozen.rowCount === 0) return false;
      await run(sql.clearOwner, fence(params.jobId, params.owner));
      return true;
    });
  }

  async submissionRelease(params: {
    jobId: string;
    owner: Owner;
    newKey: boolean;
    requeue: boolean;
  }): Promise<boolean> {
    const { sql } = this;
    if (!isUuid(params.jobId)) return false;
    const queue = await this.deps.transaction(async (run) => {
      const owned = await run<{ queue: string }>(sql.ownedJob, fence(params.jobId, params.owner));
      const job = owned.rows[0];
      if (!job) return undefined;
      const released = await run(sql.release, { id: params.jobId, bump: params.newKey ? 1 : 0 });
      if (released.rowCount === 0) return undefined;
      if (params.requeue) await run(sql.requeueJob, fence(params.jobId, params.owner));
      return job.queue;
    });
    if (queue !== undefined && params.requeue) this.deps.wake(queue);
    return queue !== undefined;
  }

  submissionComplete(params: {
    jobId: string;
    owner: Owner;
    result: string | null;
    retentionSeconds: number;
  }): Promise<boolean> {
    const { sql } = this;
    return this.deps.transaction(async (run) => {
      if ((await run(sql.ownedJob, fence(params.jobId, params.owner))).rowCount === 0) return false;
      if ((await run(sql.finish, { id: params.jobId })).rowCount === 0) return false;
      await run(sql.completeJob, {
        ...fence(params.jobId, params.owner),
        result: params.result,
        retention: params.retentionSeconds,
      });
      return true;
    });
  }

  async submissionFinish(params: { jobId: string }): Promise<void> {
    await this.deps.run(this.sql.finish, { id: params.jobId });
  }

  async pollClaimDue(params: {
    workerId: string;
    names: readonly string[];
    reconcilable: readonly string[];
    limit: number;
  }): Promise<ClaimedRemote[]> {
    const limit = Math.floor(params.limit);
    if (!(limit >= 1)) return [];
    const { rows } = await this.deps.run<
      RawClaimedRow & {
        phase: string;
        task_id: string | null;
        generation: number;
        accepted_at: Date | null;
        polls: number;
        answer: string | null;
      }
    >(this.sql.claimDue, {
      workerId: params.workerId,
      names: params.names,
      reconcilable: params.reconcilable,
      limit,
    });
    return rows.map((r) => ({
      job: claimedJobOfRow(r),
      phase: r.phase === "frozen" ? "frozen" : "accepted",
      taskId: r.task_id,
      generation: r.generation,
      acceptedAt: r.accepted_at,
      polls: r.polls,
      answer: decodeAnswer(r.answer),
    }));
  }

  pollRelease(params: {
    jobId: string;
    owner: Owner;
    delaySeconds: number;
    countPoll: boolean;
  }): Promise<boolean> {
    const { sql } = this;
    return this.deps.transaction(async (run) => {
      if ((await run(sql.ownedJob, fence(params.jobId, params.owner))).rowCount === 0) return false;
      const moved = await run(sql.reschedule, {
        id: params.jobId,
        delay: params.delaySeconds,
        count: params.countPoll ? 1 : 0,
      });
      if (moved.rowCount === 0) return false;
      await run(sql.clearOwner, fence(params.jobId, params.owner));
      return true;
    });
  }

  submissionAnswer(params: { target: AnswerTarget; answer: RemoteAnswer }): Promise<AnswerResult> {
    const { sql } = this;
    const answer = encodeAnswer(params.answer);
    return this.deps.transaction(async (run): Promise<AnswerResult> => {
      let jobId: string;
      if ("jobId" in params.target) {
        jobId = params.target.jobId;
        // Not a UUID: no such job (a `::uuid` cast would fail the statement instead).
        if (!isUuid(jobId)) throw new SoniqError("NOT_FOUND", `no job with id ${jobId}`);
        const sub = await run(sql.phase, { id: jobId });
        if (sub.rowCount === 0) {
          const job = await run(sql.jobStatus, { id: jobId });
          throw new SoniqError(
            "NOT_FOUND",
            job.rowCount > 0 ? `job ${jobId} has no remote submission` : `no job with id ${jobId}`,
          );
        }
      } else {
        const { taskId, name } = params.target;
        const matches = (
          await run<{ job_id: string; job_name: string }>(sql.byTask, { taskId })
        ).rows.filter((m) => name === undefined || m.job_name === name);
        if (matches.length > 1) {
          throw new SoniqError(
            "INVALID_STATE",
            `task id ${taskId} belongs to ${matches.length} jobs; name the job`,
          );
        }
        const match = matches[0];
        if (!match) {
          await run(sql.insertEarly, { taskId, name: name ?? null, answer });
          return "early";
        }
        jobId = match.job_id;
        await run(sql.phase, { id: jobId });
      }
      const job = (await run<{ status: string }>(sql.jobStatus, { id: jobId })).rows[0];
      if (job?.status !== "processing") return "already_finished";
      const stored = await run(sql.storeAnswer, { id: jobId, answer });
      return stored.rowCount > 0 ? "stored" : "already_finished";
    });
  }

  async submissionResolve(params: { jobId: string; resolution: Resolution }): Promise<boolean> {
    const { sql } = this;
    if (!isUuid(params.jobId)) return false;
    const queue = await this.deps.transaction(async (run) => {
      const job = (await run<{ queue: string }>(sql.unownedJob, { id: params.jobId })).rows[0];
      const sub = (await run<{ phase: string }>(sql.phase, { id: params.jobId })).rows[0];
      if (!job || sub?.phase !== "frozen") return undefined;
      const { resolution } = params;
      if (resolution.kind === "accepted") {
        await run(sql.resolveAccepted, { id: params.jobId, taskId: resolution.taskId });
        return null;
      }
      if (resolution.kind === "failed") {
        const answer = encodeAnswer({ kind: "failed", error: resolution.error, retry: false });
        await run(sql.resolveFailed, { id: params.jobId, answer });
        return null;
      }
      await run(sql.resolveReleased, { id: params.jobId });
      await run(sql.requeueUnowned, { id: params.jobId });
      return job.queue;
    });
    if (typeof queue === "string") this.deps.wake(queue);
    return queue !== undefined;
  }

  async pollNow(params: { jobId: string; frozenNeedsAnswer?: boolean }): Promise<boolean> {
    if (!isUuid(params.jobId)) return false;
    const needsAnswer = params.frozenNeedsAnswer === true;
    return (await this.deps.run(this.sql.pollNow, { id: params.jobId, needsAnswer })).rowCount > 0;
  }

  async submissionRecover(params: SubmissionRecoverParams): Promise<RecoveredSubmission[]> {
    const { rows } = await this.deps.run<{
      job_id: string;
      job_name: string;
      phase: "submitting" | "accepted" | "frozen";
      task_id: string | null;
      worker_id: string;
    }>(this.sql.recover, {
      timeout: params.heartbeatTimeoutSeconds,
      live: params.liveWorkerId ?? null,
    });
    return rows.map((r) => ({
      jobId: r.job_id,
      name: r.job_name,
      phase: r.phase,
      taskId: r.task_id,
      previousOwner: r.worker_id,
      action: r.phase === "submitting" ? "freeze" : "handoff",
    }));
  }

  async submissionPrune(params: { limit: number }): Promise<number> {
    return (await this.deps.run(this.sql.prune, { limit: params.limit })).rowCount;
  }

  async submissionGet(params: { jobId: string }): Promise<SubmissionRecord | null> {
    if (!isUuid(params.jobId)) return null;
    const { rows } = await this.deps.run<RawSubmissionRecord>(this.sql.get, { id: params.jobId });
    return rows[0] ? toSubmissionRecord(rows[0]) : null;
  }

  async submissionList(params: {
    filter: SubmissionFilter;
    limit: number;
  }): Promise<SubmissionRecord[]> {
    const { rows } = await this.deps.run<RawSubmissionRecord>(this.sql.list, {
      phase: filterPhase(params.filter),
      limit: params.limit,
    });
    return rows.map(toSubmissionRecord);
  }

  async submissionCounts(): Promise<SubmissionCounts> {
    const { rows } = await this.deps.run<{ phase: string; n: number }>(this.sql.counts, {});
    return countsOf(rows);
  }

  /** See {@link SubmissionStore.submissionCountsByQueue}. */
  async submissionCountsByQueue(): Promise<SubmissionQueueCount[]> {
    const { rows } = await this.deps.run<{ queue: string; phase: string; n: number }>(
      this.sql.countsByQueue,
      {},
    );
    return queueCountsOf(rows);
  }
}
