/**
 * The memory backend's {@link SubmissionStore}: the same rules as the SQL stores over the memory
 * backend's own job and worker maps (every method runs synchronously, so each is atomic).
 */
import { randomUUID } from "node:crypto";
import { SoniqError } from "../../errors.js";
import { admissionDecision } from "../../remote/admission.js";
import { claimedJobOf } from "../claimed-job.js";
import type { JobRow, Owner } from "../contract/index.js";
import {
  type AnswerResult,
  type AnswerTarget,
  type ClaimedRemote,
  type MarkSubmittingParams,
  type MarkSubmittingResult,
  REMOTE_CUSTODY_PHASES,
  type RecoveredSubmission,
  type RemoteAnswer,
  type Resolution,
  type SubmissionCounts,
  type SubmissionFilter,
  type SubmissionRecord,
  type SubmissionRecoverParams,
  type SubmissionStore,
} from "../contract/submission-store.js";
import type { MemoryState, MemorySubmissionRow as Sub } from "./state.js";
import { countRecords, listRecords, recordOf } from "./submission-reads.js";
import { pruneSubmissions, recoverSubmissions } from "./submission-recovery.js";

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

/** See the module comment. */
export class MemorySubmissionStore implements SubmissionStore {
  constructor(private readonly state: MemoryState) {}

  private get subs(): Map<string, Sub> {
    return this.state.submissions;
  }

  private get early(): MemoryState["earlyAnswers"] {
    return this.state.earlyAnswers;
  }

  /** True when the job row is processing and `owner` holds it. */
  private owned(jobId: string, owner: Owner): JobRow | undefined {
    const row = this.state.jobs.get(jobId);
    if (
      row?.status !== "processing" ||
      row.workerId !== owner.workerId ||
      row.claimToken !== owner.claimToken
    ) {
      return undefined;
    }
    return row;
  }

  private clearOwner(row: JobRow, now: number): void {
    row.workerId = null;
    row.claimToken = null;
    row.updatedAt = new Date(now);
  }

  async submissionMarkSubmitting(params: MarkSubmittingParams): Promise<MarkSubmittingResult> {
    this.state.check();
    if (!this.owned(params.jobId, params.owner)) return { kind: "fenced" };
    const existing = this.subs.get(params.jobId);
    if (existing && existing.phase !== "released")
      return { kind: "illegal", phase: existing.phase };
    const now = this.state.clock();
    let inFlight = 0;
    let lastMinute = 0;
    for (const sub of this.subs.values()) {
      if (sub.name !== params.name || sub.jobId === params.jobId) continue;
      if (sub.phase === "submitting") inFlight += 1;
      if (sub.submittedAt !== null && sub.submittedAt > now - 60_000) lastMinute += 1;
    }
    const decision = admissionDecision({ inFlight, lastMinute }, params.budget);
    if (!decision.admit) {
      return {
        kind: "over_budget",
        reason: decision.reason,
        retryInSeconds: decision.retryInSeconds,
      };
    }
    const generation = existing?.generation ?? 1;
    this.subs.set(params.jobId, {
      jobId: params.jobId,
      name: params.name,
      queue: params.queue,
      phase: "submitting",
      generation,
      taskId: null,
      submittedAt: now,
      acceptedAt: null,
      frozenAt: null,
      frozenReason: null,
      dueAt: null,
      polls: 0,
      answer: existing?.answer ?? null,
      updatedAt: now,
    });
    return { kind: "marked", generation };
  }

  async submissionAccept(params: {
    jobId: string;
    owner: Owner;
    taskId: string;
    pollDelaySeconds: number;
  }): Promise<boolean> {
    this.state.check();
    const row = this.owned(params.jobId, params.owner);
    const sub = this.subs.get(params.jobId);
    if (!row || !sub || (sub.phase !== "submitting" && sub.phase !== "frozen")) return false;
    const now = this.state.clock();
    const early = this.early.get(params.taskId);
    if (early && (early.name === null || early.name === sub.name) && sub.answer === null) {
      sub.answer = early.answer;
      this.early.delete(params.taskId);
    }
    Object.assign(sub, {
      phase: "accepted",
      taskId: params.taskId,
      acceptedAt: now,
      frozenAt: null,
      frozenReason: null,
      dueAt: sub.answer ? now : now + Math.round(params.pollDelaySeconds * 1000),
      updatedAt: now,
    });
    this.clearOwner(row, now);
    return true;
  }

  async submissionFreeze(params: {
    jobId: string;
    owner: Owner;
    reason: string;
  }): Promise<boolean> {
    this.state.check();
    const row = this.owned(params.jobId, params.owner);
    const sub = this.subs.get(params.jobId);
    if (!row || sub?.phase !== "submitting") return false;
    const now = this.state.clock();
    Object.assign(sub, {
      phase: "frozen",
      frozenAt: now,
      frozenReason: params.reason,
      dueAt: now,
      updatedAt: now,
    });
    this.clearOwner(row, now);
    return true;
  }

  async submissionRelease(params: {
    jobId: string;
    owner: Owner;
    newKey: boolean;
    requeue: boolean;
  }): Promise<boolean> {
    this.state.check();
    const row = this.owned(params.jobId, params.owner);
    const sub = this.subs.get(params.jobId);
    if (!row || !sub || !REMOTE_CUSTODY_PHASES.includes(sub.phase)) return false;
    const now = this.state.clock();
    Object.assign(sub, {
      phase: "released",
      generation: sub.generation + (params.newKey ? 1 : 0),
      taskId: null,
      answer: null,
      dueAt: null,
      updatedAt: now,
    });
    if (params.requeue) {
      Object.assign(row, { status: "queued", scheduledAt: new Date(now) });
      this.clearOwner(row, now);
      this.state.bus.wake(row.queue);
    }
    return true;
  }

  async submissionComplete(params: {
    jobId: string;
    owner: Owner;
    result: string | null;
    retentionSeconds: number;
  }): Promise<boolean> {
    this.state.check();
    const row = this.owned(params.jobId, params.owner);
    const sub = this.subs.get(params.jobId);
    if (!row || !sub || !REMOTE_CUSTODY_PHASES.includes(sub.phase)) return false;
    const now = this.state.clock();
    Object.assign(sub, { phase: "finished", dueAt: null, updatedAt: now });
    Object.assign(row, {
      status: "done",
      attempts: row.attempts + 1,
      result: params.result,
      finishedAt: new Date(now),
      updatedAt: new Date(now),
      resultExpiresAt: new Date(now + Math.round(params.retentionSeconds * 1000)),
    });
    return true;
  }

  async submissionFinish(params: { jobId: string }): Promise<void> {
    this.state.check();
    const sub = this.subs.get(params.jobId);
    if (sub && REMOTE_CUSTODY_PHASES.includes(sub.phase)) {
      Object.assign(sub, { phase: "finished", dueAt: null, updatedAt: this.state.clock() });
    }
  }

  async pollClaimDue(params: {
    workerId: string;
    names: readonly string[];
    reconcilable: readonly string[];
    limit: number;
  }): Promise<ClaimedRemote[]> {
    this.state.check();
    const now = this.state.clock();
    const due = [...this.subs.values()]
      .filter((sub) => {
        const row = this.state.jobs.get(sub.jobId);
        if (row?.status !== "processing" || row.workerId !== null) return false;
        if (sub.dueAt === null || sub.dueAt > now) return false;
        if (sub.phase === "accepted") return params.names.includes(sub.name);
        if (sub.phase === "frozen") {
          return (
            params.reconcilable.includes(sub.name) ||
            (sub.answer !== null && params.names.includes(sub.name))
          );
        }
        return false;
      })
      .sort((a, b) => (a.dueAt ?? 0) - (b.dueAt ?? 0))
      .slice(0, Math.max(0, Math.floor(params.limit)));
    return due.map((sub) => {
      const row = this.state.jobs.get(sub.jobId) as JobRow;
      Object.assign(row, {
        workerId: params.workerId,
        claimToken: randomUUID(),
        updatedAt: new Date(now),
      });
      return {
        job: claimedJobOf(row),
        phase: sub.phase as "accepted" | "frozen",
        taskId: sub.taskId,
        generation: sub.generation,
        acceptedAt: date(sub.acceptedAt),
        polls: sub.polls,
        answer: sub.answer,
      };
    });
  }

  async pollRelease(params: {
    jobId: string;
    owner: Owner;
    delaySeconds: number;
    countPoll: boolean;
  }): Promise<boolean> {
    this.state.check();
    const row = this.owned(params.jobId, params.owner);
    const sub = this.subs.get(params.jobId);
    if (!row || (sub?.phase !== "accepted" && sub?.phase !== "frozen")) return false;
    const now = this.state.clock();
    sub.dueAt = now + Math.round(params.delaySeconds * 1000);
    if (params.countPoll) sub.polls += 1;
    sub.updatedAt = now;
    this.clearOwner(row, now);
    return true;
  }

  async submissionAnswer(params: {
    target: AnswerTarget;
    answer: RemoteAnswer;
  }): Promise<AnswerResult> {
    this.state.check();
    let sub: Sub | undefined;
    if ("jobId" in params.target) {
      const jobId = params.target.jobId;
      sub = this.subs.get(jobId);
      if (!sub) {
        if (!this.state.jobs.has(jobId))
          throw new SoniqError("NOT_FOUND", `no job with id ${jobId}`);
        throw new SoniqError("NOT_FOUND", `job ${jobId} has no remote submission`);
      }
    } else {
      const { taskId, name } = params.target;
      const matches = [...this.subs.values()].filter(
        (s) => s.taskId === taskId && (name === undefined || s.name === name),
      );
      if (matches.length > 1) {
        throw new SoniqError(
          "INVALID_STATE",
          `task id ${taskId} belongs to ${matches.length} jobs; name the job`,
        );
      }
      sub = matches[0];
      if (!sub) {
        if (!this.early.has(taskId))
          this.early.set(taskId, { name: name ?? null, answer: params.answer });
        return "early";
      }
    }
    const row = this.state.jobs.get(sub.jobId);
    if (
      row?.status !== "processing" ||
      !REMOTE_CUSTODY_PHASES.includes(sub.phase) ||
      sub.answer !== null
    ) {
      return "already_finished";
    }
    const now = this.state.clock();
    sub.answer = params.answer;
    if (sub.phase !== "submitting") sub.dueAt = now;
    sub.updatedAt = now;
    return "stored";
  }

  async submissionResolve(params: { jobId: string; resolution: Resolution }): Promise<boolean> {
    this.state.check();
    const sub = this.subs.get(params.jobId);
    const row = this.state.jobs.get(params.jobId);
    if (sub?.phase !== "frozen" || row?.status !== "processing" || row.workerId !== null) {
      return false;
    }
    const now = this.state.clock();
    const { resolution } = params;
    if (resolution.kind === "accepted") {
      Object.assign(sub, {
        phase: "accepted",
        taskId: resolution.taskId,
        acceptedAt: now,
        frozenAt: null,
        frozenReason: null,
        dueAt: now,
      });
    } else if (resolution.kind === "not_submitted") {
      Object.assign(sub, { phase: "released", taskId: null, answer: null, dueAt: null });
      Object.assign(row, {
        status: "queued",
        scheduledAt: new Date(now),
        updatedAt: new Date(now),
      });
      this.state.bus.wake(row.queue);
    } else {
      sub.answer = { kind: "failed", error: resolution.error, retry: false };
      sub.dueAt = now;
    }
    sub.updatedAt = now;
    return true;
  }

  async pollNow(params: { jobId: string; frozenNeedsAnswer?: boolean }): Promise<boolean> {
    this.state.check();
    const sub = this.subs.get(params.jobId);
    const row = this.state.jobs.get(params.jobId);
    if (
      (sub?.phase !== "accepted" && sub?.phase !== "frozen") ||
      (sub.phase === "frozen" && params.frozenNeedsAnswer === true && sub.answer === null) ||
      row?.status !== "processing" ||
      row.workerId !== null
    ) {
      return false;
    }
    sub.dueAt = this.state.clock();
    return true;
  }

  /** Recovery by last durable phase, liveness by each owner's declared timeout (submission-recovery.ts). */
  async submissionRecover(params: SubmissionRecoverParams): Promise<RecoveredSubmission[]> {
    return recoverSubmissions(this.state, params.heartbeatTimeoutSeconds, params.liveWorkerId);
  }

  async submissionPrune(params: { limit: number }): Promise<number> {
    return pruneSubmissions(this.state, params.limit);
  }

  async submissionGet(params: { jobId: string }): Promise<SubmissionRecord | null> {
    this.state.check();
    const sub = this.subs.get(params.jobId);
    return sub ? recordOf(this.state, sub) : null;
  }

  async submissionList(params: {
    filter: SubmissionFilter;
    limit: number;
  }): Promise<SubmissionRecord[]> {
    this.state.check();
    return listRecords(this.state, params.filter, params.limit);
  }

  async submissionCounts(): Promise<SubmissionCounts> {
    this.state.check();
    return countRecords(this.state);
  }
}
