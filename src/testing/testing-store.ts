/**
 * The in-memory store `soniq/testing` installs: a {@link MemoryBackend} on the test clock that
 * tells the running drain when a claim starts and what it found, and counts every job written, so
 * the drain knows when nothing is left to run.
 */
import type { ClaimedJob, EnqueueResult } from "../backends/contract/index.js";
import type { JobClaimParams, JobEnqueueParams } from "../backends/contract/job-store.js";
import { MemoryBackend } from "../backends/memory/memory-backend.js";

/** What the running drain is told of each claim. */
export interface ClaimWatcher {
  /** A claim is about to read the store; returns a mark handed back with its answer. */
  claimStarted(): number;
  /** The claim that `mark` started found `claimed` jobs. */
  claimAnswered(mark: number, claimed: number): void;
}

/** See the module comment. Errors: as {@link MemoryBackend}. */
export class TestingStore extends MemoryBackend {
  /** The running drain's watcher, if a drain runs. */
  watcher: ClaimWatcher | undefined;
  private enqueues = 0;

  /** Enqueue statements run so far (by the test, its handlers or the scheduler). */
  get writes(): number {
    return this.enqueues;
  }

  /** See {@link MemoryBackend.jobEnqueue}; counted in {@link TestingStore.writes}. */
  override async jobEnqueue(params: JobEnqueueParams): Promise<EnqueueResult[]> {
    this.enqueues += 1;
    try {
      return await super.jobEnqueue(params);
    } finally {
      this.enqueues += 1;
    }
  }

  /** See {@link MemoryBackend.jobClaim}; reported to {@link TestingStore.watcher}. */
  override async jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    const watcher = this.watcher;
    const mark = watcher?.claimStarted();
    const jobs = await super.jobClaim(params);
    if (watcher && mark !== undefined) watcher.claimAnswered(mark, jobs.length);
    return jobs;
  }
}
