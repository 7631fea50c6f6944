/**
 * The retry policy of the worker's row writes (a job's outcome, a release, its own worker row):
 * retry while the database is away, give up only once draining and past the shutdown deadline
 * (or, for bookkeeping, after a short grace). The deadline is read from the {@link ShutdownMachine}.
 */
import { isSoniqError } from "../errors.js";
import { sleep } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import type { ShutdownMachine } from "./shutdown-machine.js";
import { DB_CALL_TIMEOUT_MS, withTimeout } from "./with-timeout.js";

/** Longest wait between two tries of a failed write, in milliseconds. */
const RECORD_RETRY_CAP_MS = 2000;
/** Once draining, how long past the shutdown deadline a failing write keeps trying (ms). */
const RECORD_GRACE_MS = 10_000;
/** How long a failing write of the worker's own row keeps trying (ms). */
const BOOKKEEPING_GRACE_MS = 2000;

/** One write to retry. */
export interface RetriedWrite<T> {
  /** The write; `tryMs` is one try's bound, in milliseconds. */
  write: (tryMs: number) => Promise<T>;
  /** What is written, for the log lines. */
  what: string;
  jobId?: string | undefined;
  /**
   * Not a job's outcome (the worker row): give up after {@link BOOKKEEPING_GRACE_MS} of failures.
   */
  bookkeeping: boolean;
  /** `write` applies its `tryMs` argument itself; otherwise each try is raced against a timer. */
  bounded: boolean;
  /**
   * A first try the caller already made (at `at`, the machine's clock, with
   * {@link firstTryBoundMs}) and the error it failed with: the retries go on from there, as if
   * that try had been this function's first (the outcome recorder's completion fast path).
   */
  firstFailure?: { error: unknown; at: number } | undefined;
}

/**
 * The bound of one try, in milliseconds: {@link DB_CALL_TIMEOUT_MS} while RUNNING; once draining,
 * never past the give-up time `limit` (at least 500 ms, so a slow answer can land).
 */
function tryBoundMs(machine: ShutdownMachine, limit: number | undefined): number {
  return limit === undefined
    ? DB_CALL_TIMEOUT_MS
    : Math.min(DB_CALL_TIMEOUT_MS, Math.max(500, limit - machine.now()));
}

/**
 * When a failing outcome write first tried at `firstTry` gives up (machine clock, ms), or
 * undefined while RUNNING (an outcome waits for the database).
 */
function outcomeGiveUpAt(machine: ShutdownMachine, firstTry: number): number | undefined {
  if (machine.state === "RUNNING") return undefined;
  return Math.max(machine.deadlineAt ?? firstTry, firstTry) + RECORD_GRACE_MS;
}

/**
 * The bound, in milliseconds, of the first try of an outcome write made now: what
 * {@link retryWrite} would give it. For a caller that makes the first try itself and hands a
 * failure to {@link retryWrite} as `firstFailure`.
 */
export function firstTryBoundMs(machine: ShutdownMachine): number {
  return tryBoundMs(machine, outcomeGiveUpAt(machine, machine.now()));
}

/**
 * Runs a write, retrying failures (the database may be restarting) with a backoff that grows to
 * {@link RECORD_RETRY_CAP_MS}. A transient failure is never recorded as a job failure. While
 * RUNNING it retries until the write lands (claims fail too while the database is away, so the
 * worker takes no new work meanwhile). Once draining, it gives up {@link RECORD_GRACE_MS} after
 * the later of the shutdown deadline and its first attempt: the row is left `processing` for
 * crash recovery and, for an outcome, the worker exits with code 3.
 * @throws the last error of the write once it gave up (also at once on `CLOSED` or
 *   `SCHEMA_NOT_READY`).
 */
export async function retryWrite<T>(
  context: { machine: ShutdownMachine; logger: Logger },
  { write, what, jobId, bookkeeping, bounded, firstFailure }: RetriedWrite<T>,
): Promise<T> {
  const { machine, logger } = context;
  const firstTry = firstFailure?.at ?? machine.now();
  /** When to give up, or undefined while RUNNING (an outcome waits for the database). */
  const giveUpAt = (): number | undefined =>
    bookkeeping ? firstTry + BOOKKEEPING_GRACE_MS : outcomeGiveUpAt(machine, firstTry);
  let lastError: unknown;
  for (let attempt = 0; ; attempt++) {
    if (attempt === 0 && firstFailure) lastError = firstFailure.error;
    else {
      const tryMs = tryBoundMs(machine, giveUpAt());
      try {
        return bounded ? await write(tryMs) : await withTimeout(write(tryMs), tryMs, what);
      } catch (err) {
        lastError = err;
      }
    }
    if (isSoniqError(lastError, "CLOSED") || isSoniqError(lastError, "SCHEMA_NOT_READY")) break;
    let wait = Math.min(RECORD_RETRY_CAP_MS, 100 * 2 ** attempt);
    const end = giveUpAt();
    if (end !== undefined) {
      const left = end - machine.now();
      if (left <= 0) break;
      wait = Math.min(wait, left);
    }
    if (attempt === 2) {
      logger.warn(
        { job_id: jobId, err: errorText(lastError, 300), retry_in_ms: wait },
        `cannot record the ${what} yet (database unreachable?); retrying`,
      );
    }
    await sleep(wait);
  }
  logger.error(
    { job_id: jobId, err: errorText(lastError, 500) },
    `could not record the ${what}; the row stays as it was for recovery`,
  );
  throw lastError;
}
