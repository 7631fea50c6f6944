/**
 * The jobs a worker has claimed and not yet settled: what it keeps per job, how a run ended, and
 * the table of concurrency slots they hold (a slot is freed once the outcome is known, so the next
 * claim overlaps the outcome write, which the drain still waits for).
 */
import type { ClaimedJob, JobResumeState, Owner } from "../backends/contract/index.js";
import type { JobTimeoutError } from "../jobs/context.js";
import type { ProgressValue } from "../jobs/progress.js";
import type { RateLimitScope } from "../jobs/rate-limited.js";
import type { JobResume } from "./job-resume.js";
import { LazyAbortController } from "./lazy-abort-controller.js";

/** How one run of a handler ended, before it is written. */
export type Outcome =
  | { kind: "success"; value: unknown }
  /**
   * Back to `queued` in `seconds`, no attempt spent. `scope`: the handler returned
   * `ctx.rateLimited` (docs/flow-control.md): the scope pauses for as long.
   */
  | { kind: "snooze"; seconds: number; scope?: RateLimitScope }
  /**
   * `invalidResult`: the handler returned a value that cannot be stored (not JSON, over
   * `maxPayloadBytes`, or not sendable back from its thread): dead-lettered `invalid_result` at
   * once, as every attempt would return it again.
   */
  | { kind: "error"; error: unknown; invalidResult?: boolean }
  | { kind: "timeout"; error: JobTimeoutError }
  | { kind: "released" }
  /** An operator cancelled it: recorded `cancelled` through the owner fence. */
  | { kind: "cancelled" }
  /**
   * An effect step's outcome is unknown (docs/checkpoints.md): the job is frozen (fenced) with
   * `steps` (JSON text, the step marked frozen) until an operator resolves it.
   */
  | { kind: "frozen"; step: string; steps: string };

/** The placeholder of {@link InFlight.done} until `track` sets it (one for every entry). */
const NOT_STARTED: Promise<void> = Promise.resolve();

/** One claimed job. */
export interface InFlight {
  job: ClaimedJob;
  owner: Owner;
  /** Aborts `ctx.signal` (job timeout, shutdown deadline). */
  controller: LazyAbortController;
  /** True while the job holds one of the worker's concurrency slots (until its outcome is known). */
  holdsSlot: boolean;
  /** True once this claim's start mark was written (jobs with a crash history only). */
  startMarked?: boolean;
  /** True when its wait for a start outlasted the start TTL: NACK'd as never started. */
  staleStart?: boolean;
  /** Gives back the start the job holds (start-isolation.ts), once its run has ended. */
  startRelease?: () => void;
  /** Sync jobs: settles when the worker thread has returned (the permit is released then). */
  thread?: Promise<void>;
  /**
   * Aborted when an operator cancels the job (a notification or the heartbeat said so); the
   * executors stop the handler and the run ends as `cancelled`.
   */
  cancel: LazyAbortController;
  /** The latest progress an async handler reported, kept until a heartbeat writes it. */
  progress: ProgressValue | null;
  /** True while {@link InFlight.progress} (or the sync buffer) has news for the heartbeat. */
  progressDirty: boolean;
  /** Sync jobs: the buffer the thread writes its progress into (jobs/progress.ts). */
  progressBuffer?: SharedArrayBuffer;
  /** Sync jobs: the buffer's sequence number the last heartbeat wrote. */
  progressSeq: number;
  /**
   * The checkpoint and steps read before the handler started (only for a job whose `meta` says it
   * has some: job-resume.ts); undefined otherwise.
   */
  resumeState?: JobResumeState;
  /** Its checkpoints and steps, once the handler used them (job-resume.ts). */
  resume?: JobResume;
  /** Settles when everything about the job is done (outcome written or given up). */
  done: Promise<void>;
}

/**
 * The claimed jobs of one worker, by id, and the slots they hold. A job can be tracked again while
 * its earlier claim's run is still settling (NACK'd unstarted, then claimed again by this worker):
 * lookups by id see the newest claim, and {@link settled} waits for both.
 */
export class InFlightTable {
  private readonly entries = new Map<string, InFlight>();
  /** Every unsettled entry, including one a newer claim of the same job replaced in `entries`. */
  private readonly open = new Set<InFlight>();
  private busy = 0;
  private slotListener: (() => void) | undefined;

  /** @param onSlotFreed - called whenever a slot is given back (wakes the claim loop). */
  constructor(private readonly onSlotFreed: () => void) {}

  /**
   * Also calls `listener` whenever a slot is given back, after `onSlotFreed` (the claim loop's
   * prefetch buffer starts its next job). One listener; a later call replaces it.
   */
  setSlotListener(listener: () => void): void {
    this.slotListener = listener;
  }

  /**
   * Wakes the claim loop as a freed slot does, without giving a slot back: called once the outcome
   * of a job with a concurrency key is written. The job's slot was freed before that write (so a
   * quick job's successor starts at once), and a claim sent then still saw the key held by it; its
   * key's slot is free in the store only now (docs/flow-control.md, "A key's slot").
   */
  wakeClaims(): void {
    this.onSlotFreed();
  }

  /** Claims not settled (an earlier claim of a job claimed again still counts until it settles). */
  get size(): number {
    return this.open.size;
  }

  /** Slots in use: jobs whose outcome is not known yet. */
  get busySlots(): number {
    return this.busy;
  }

  /** True when `jobId` is claimed by this worker and not settled. */
  has(jobId: string): boolean {
    return this.entries.has(jobId);
  }

  /** The entry of `jobId`, when claimed by this worker and not settled. */
  get(jobId: string): InFlight | undefined {
    return this.entries.get(jobId);
  }

  /** The entries, in claim order. */
  values(): IterableIterator<InFlight> {
    return this.entries.values();
  }

  /** The ids, in claim order. */
  ids(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Takes a slot for `job` and runs `run` on its entry; the entry leaves the table when `run`
   * settles. `run` rejecting is handed to `onUnexpected` (a bug of ours must not strand the row).
   */
  track(
    job: ClaimedJob,
    run: (entry: InFlight) => Promise<void>,
    onUnexpected: (job: ClaimedJob, err: unknown) => Promise<void>,
  ): InFlight {
    const entry: InFlight = {
      job,
      owner: { workerId: job.workerId, claimToken: job.claimToken },
      controller: new LazyAbortController(),
      cancel: new LazyAbortController(),
      progress: null,
      progressDirty: false,
      progressSeq: 0,
      holdsSlot: true,
      done: NOT_STARTED,
    };
    this.busy += 1;
    this.entries.set(job.id, entry);
    this.open.add(entry);
    const settle = () => {
      this.freeSlot(entry);
      this.open.delete(entry);
      // Only its own entry: a newer claim of the same job may have replaced it.
      if (this.entries.get(job.id) === entry) this.entries.delete(job.id);
    };
    // One settlement on the happy path (no catch/catch/finally chain per job).
    entry.done = run(entry).then(settle, (err: unknown) =>
      onUnexpected(job, err).then(settle, settle),
    );
    return entry;
  }

  /**
   * Holds one slot for a job not tracked yet (a hand-off at enqueue, hand-off.ts): it counts in
   * {@link busySlots} at once, so no claim takes it. Give it back with {@link releaseReserved}
   * before tracking the job (or when nothing came).
   */
  reserveSlot(): void {
    this.busy += 1;
  }

  /**
   * Gives back a slot held by {@link reserveSlot}.
   * @param wake - true when nothing will use it (wakes the claim loop); false when the job is
   *   tracked right after, taking the slot again.
   */
  releaseReserved(wake: boolean): void {
    this.busy -= 1;
    if (wake) this.onSlotFreed();
  }

  /** Gives the job's slot back once its outcome is known (idempotent). */
  freeSlot(entry: InFlight): void {
    if (!entry.holdsSlot) return;
    entry.holdsSlot = false;
    this.busy -= 1;
    this.onSlotFreed();
    this.slotListener?.();
  }

  /** Resolves once every tracked entry has settled (jobs tracked meanwhile are waited for too). */
  async settled(): Promise<void> {
    while (this.open.size > 0) {
      await Promise.all([...this.open].map((entry) => entry.done));
    }
  }
}
