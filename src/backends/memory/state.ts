/**
 * The memory backend's shared state: the tables as maps, the clock, the wake bus and the
 * open/closed guard, held once and handed to each memory store.
 */
import { SoniqError } from "../../errors.js";
import type {
  DeadLetterRow,
  JobRow,
  RemoteAnswer,
  SubmissionPhase,
  WorkerRow,
} from "../contract/index.js";
import { WakeBus } from "../shared/wake-bus.js";

/** A row of `soniq_remote_submissions`; instants in milliseconds since the epoch. */
export interface MemorySubmissionRow {
  jobId: string;
  name: string;
  queue: string;
  phase: SubmissionPhase;
  generation: number;
  taskId: string | null;
  submittedAt: number | null;
  acceptedAt: number | null;
  frozenAt: number | null;
  frozenReason: string | null;
  dueAt: number | null;
  polls: number;
  answer: RemoteAnswer | null;
  updatedAt: number;
}

/** The tables and clock every memory store reads and writes. */
export class MemoryState {
  /** `soniq_jobs` by id. */
  readonly jobs = new Map<string, JobRow>();
  /** `soniq_dead_letter_jobs` by id. */
  readonly dead = new Map<string, DeadLetterRow>();
  /** `soniq_workers` by id. */
  readonly workers = new Map<string, WorkerRow>();
  /** `soniq_leases` by name; `expiresAt` in milliseconds since the epoch. */
  readonly leases = new Map<string, { holder: string; expiresAt: number }>();
  /** This backend's wake-ups. */
  readonly bus = new WakeBus();
  /** `soniq_remote_submissions` by job id (remote jobs, seed 002). */
  readonly submissions = new Map<string, MemorySubmissionRow>();
  /** `soniq_remote_early_answers` by task id. */
  readonly earlyAnswers = new Map<string, { name: string | null; answer: RemoteAnswer }>();
  private closed = false;

  /** @param clock The "database clock": milliseconds since the epoch. */
  constructor(readonly clock: () => number) {}

  /** @throws SoniqError `CLOSED` after {@link close}. */
  check(): void {
    if (this.closed) throw new SoniqError("CLOSED", "the memory backend is closed");
  }

  /** Marks the state closed and drops every wake-up subscriber. */
  close(): void {
    this.closed = true;
    this.bus.close();
  }

  /** The clock's now plus `offsetSeconds` (**seconds**), as a `Date`. */
  date(offsetSeconds = 0): Date {
    return new Date(this.clock() + Math.round(offsetSeconds * 1000));
  }

  /** Whether a job row is in remote custody (`submitting`, `accepted`, `frozen`): recovered by phase. */
  inRemoteCustody(jobId: string): boolean {
    const phase = this.submissions.get(jobId)?.phase;
    return phase === "submitting" || phase === "accepted" || phase === "frozen";
  }

  /**
   * Whether `workerId` is a live incarnation: registered, not stopped, and (when
   * `staleAfterSeconds` is given) heartbeating within that many **seconds**.
   */
  isLive(workerId: string | null, staleAfterSeconds: number | undefined): boolean {
    const w = workerId === null ? undefined : this.workers.get(workerId);
    return (
      w !== undefined &&
      w.status !== "stopped" &&
      (staleAfterSeconds === undefined ||
        this.clock() - w.lastHeartbeatAt.getTime() <= staleAfterSeconds * 1000)
    );
  }
}
