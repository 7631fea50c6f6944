/**
 * What `enqueue` returns: the promise of the job's id — `await` it exactly as before — that also
 * has {@link EnqueuedJob.result}, so the enqueuing code can wait for the job's result without
 * keeping the id around (docs/operations.md, "Waiting for a job's result").
 */
import type { WaitForOptions } from "../admin/wait-for-job.js";

/**
 * A `Promise<string>` of the job's id (the existing id for a duplicate) with a handle on the job.
 *
 * ```ts
 * const job = render.enqueue({ page: 7 });
 * const id = await job; // the id, as ever
 * const { url } = await job.result({ timeout: 60 }); // typed from the definition
 * ```
 */
export interface EnqueuedJob<TResult = unknown> extends Promise<string> {
  /**
   * Waits until the job finishes, in this process or any other, and resolves with what its
   * handler returned: `soniq.jobs.waitFor(id, options)` on the enqueued id (see there for how
   * it learns of the end on each backend). Rejects with the enqueue's own error when the enqueue
   * failed.
   * @param options.timeout - most **seconds** to wait (a number > 0; default: no bound).
   * @param options.signal - aborting it ends the wait (`WAIT_ABORTED`); the job is untouched.
   * @throws SoniqError `JOB_FAILED` (dead-lettered: its last error), `JOB_CANCELLED`,
   * `NOT_FOUND` (nothing kept: `resultRetention` 0), `WAIT_TIMEOUT`, `WAIT_ABORTED`,
   * `INVALID_OPTION`.
   */
  result(options?: WaitForOptions): Promise<TResult>;
}

/**
 * Gives `id` (an enqueue's promise) the {@link EnqueuedJob.result} method, waiting through
 * `waitFor`.
 */
export function enqueuedJob<TResult>(
  id: Promise<string>,
  waitFor: (id: string, options?: WaitForOptions) => Promise<unknown>,
): EnqueuedJob<TResult> {
  return Object.assign(id, {
    result: (options?: WaitForOptions) =>
      id.then((jobId) => waitFor(jobId, options) as Promise<TResult>),
  });
}
