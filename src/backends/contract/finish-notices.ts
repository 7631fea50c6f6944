/**
 * Finish notices (docs/operations.md, "Waiting for a job's result"): how a backend that can tells
 * a waiting process that a job left its live state, so `soniq.jobs.waitFor(id)` reads the job's
 * row only when something happened instead of at an interval. PostgreSQL implements it (a
 * registration row, a trigger's NOTIFY, the instance's one LISTEN connection); SQLite and memory
 * do not, and their waits read at a bounded interval.
 * @internal
 */

/** One registered wait, from {@link FinishNotices.watch}. */
export interface FinishWatch {
  /**
   * True while a finish of the job would reach the watch's callback: its registration is stored
   * and the LISTEN connection is in place. While false (LISTEN lost, re-connecting) the waiter
   * reads at an interval; when LISTEN is back the callback is called (a notice may have been
   * missed meanwhile).
   */
  readonly live: boolean;
  /** Removes the registration (best effort; errors are swallowed). Idempotent. */
  release(): Promise<void>;
}

/** Notices of finished jobs. */
export interface FinishNotices {
  /**
   * Registers a wait for job `id`: `onNotice` is called (in a microtask) after the job has been
   * taken out of its live state — done, cancelled, dead-lettered or deleted — in any process, and
   * whenever a notice may have been missed (LISTEN re-established). A call means "read the job
   * now", never "it is done": a spurious call is harmless. Resolves once the registration is
   * stored, so a finish committed after it is always noticed; a finish committed before it is
   * what the caller's first read finds.
   */
  watch(id: string, onNotice: () => void): Promise<FinishWatch>;
}
