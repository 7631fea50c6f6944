/**
 * The admission budget of one remote job (docs/remote-jobs.md, "Independent controls": it decides
 * only whether capacity permits a new submission): at most `maxConcurrent` submissions in phase
 * `submitting` at once and at most `perMinute` submissions started in any 60 s, counted over every
 * worker process (the store counts durable `submitting` rows and their `submitted_at` in the same
 * transaction that marks a new one, then asks {@link admissionDecision}). A refusal delays the job
 * without spending an attempt; it never stops polls and never decides whether a worker may claim.
 * `soniq.remoteJob` checks a budget with src/remote/admission.ts.
 */

/** The budget; a field left out is unlimited. */
export interface AdmissionBudget {
  /** Submissions in phase `submitting` at once, over all workers (integer >= 1). */
  maxConcurrent?: number;
  /** Submissions started per 60 seconds, over all workers (integer >= 1). */
  perMinute?: number;
}

/** What the store counted for one job name when a submission asked to start. */
export interface AdmissionCounts {
  /** Rows of this job name in phase `submitting` (not counting the asking job). */
  inFlight: number;
  /** Submissions of this job name started in the last 60 s. */
  lastMinute: number;
}

/** The decision. */
export type AdmissionDecision =
  | { admit: true }
  | { admit: false; reason: "concurrency" | "rate"; retryInSeconds: number };

/** Seconds a refused submission waits before its job is claimed again. */
export const ADMISSION_RETRY_SECONDS = { concurrency: 1, rate: 5 } as const;

/** Whether a new submission may start now under `budget`, given the store's `counts`. */
export function admissionDecision(
  counts: AdmissionCounts,
  budget: AdmissionBudget | undefined,
): AdmissionDecision {
  if (budget?.maxConcurrent !== undefined && counts.inFlight >= budget.maxConcurrent) {
    return {
      admit: false,
      reason: "concurrency",
      retryInSeconds: ADMISSION_RETRY_SECONDS.concurrency,
    };
  }
  if (budget?.perMinute !== undefined && counts.lastMinute >= budget.perMinute) {
    return { admit: false, reason: "rate", retryInSeconds: ADMISSION_RETRY_SECONDS.rate };
  }
  return { admit: true };
}
