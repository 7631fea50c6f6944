/**
 * `soniq.jobs.waitFor(id)`: waits until a job is finished, wherever it runs, and settles with
 * its result or its final error. It reads the job's row at a bounded, growing interval (50 ms,
 * then × 1.5 up to 1 s) while it waits: on SQLite and in memory that is the design; on
 * PostgreSQL a completion notification is planned (docs/operations.md, "Waiting for a job's
 * result").
 */
import type { Backend } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";

/** Options of {@link waitForJob}. */
export interface WaitForOptions {
  /**
   * Most **seconds** to wait (a number > 0); past it the wait rejects with
   * `SoniqError("WAIT_TIMEOUT")` and the job is left as it is. Default: no bound.
   */
  timeout?: number;
  /** Aborting it ends the wait at once, rejecting with the signal's reason; the job is untouched. */
  signal?: AbortSignal;
}

/** First interval between reads, in milliseconds. */
const FIRST_MS = 50;
/** Longest interval between reads, in milliseconds. */
const MAX_MS = 1000;

/**
 * Waits for job `id` to finish (see the module comment). Resolves with its result (what its
 * handler returned, parsed from JSON; `undefined` when it returned nothing) once it is `done`.
 * A failure that will be retried is not final: the wait goes on.
 * @throws SoniqError `JOB_FAILED` when it ended in the dead-letter queue (`message`: its last
 * error; `details`: `jobId`, `reason`, `attempts`, `lastError`); `JOB_CANCELLED` when it was
 * cancelled; `NOT_FOUND` when no such job exists (never enqueued, deleted, or finished with
 * nothing kept: `resultRetention` 0, or pruned); `WAIT_TIMEOUT` past `timeout`;
 * `INVALID_OPTION` for a bad `timeout` or `signal`; the signal's reason when it is aborted.
 */
export async function waitForJob(
  backend: () => Promise<Backend>,
  id: string,
  options: WaitForOptions = {},
): Promise<unknown> {
  if (typeof id !== "string" || id.length === 0) {
    throw new SoniqError("INVALID_INPUT", "waitFor(id) takes a job id");
  }
  const { timeout, signal } = checkOptions(options);
  signal?.throwIfAborted();
  const deadline = timeout === undefined ? undefined : Date.now() + timeout * 1000;
  const store = await backend();
  let interval = FIRST_MS;
  for (;;) {
    const settled = await readOutcome(store, id);
    if (settled) return settled.result;
    const left = deadline === undefined ? interval : Math.min(interval, deadline - Date.now());
    if (left <= 0) {
      throw new SoniqError(
        "WAIT_TIMEOUT",
        `job ${id} did not finish within ${timeout} s (it is left as it is)`,
        { details: { jobId: id, timeoutSeconds: timeout } },
      );
    }
    await pause(left, signal);
    interval = Math.min(MAX_MS, Math.round(interval * 1.5));
  }
}

/** The job's final result, undefined while it is not finished; rejects for final failures. */
async function readOutcome(store: Backend, id: string): Promise<{ result: unknown } | undefined> {
  const row = await store.jobGet({ id });
  if (row) {
    if (row.status === "done") {
      return { result: row.result === null ? undefined : JSON.parse(row.result) };
    }
    if (row.status === "cancelled") {
      throw new SoniqError("JOB_CANCELLED", `job ${id} was cancelled`, {
        details: { jobId: id, lastError: row.lastError },
      });
    }
    return undefined;
  }
  const dead = await store.deadLetterGet({ id });
  if (dead) {
    throw new SoniqError("JOB_FAILED", dead.lastError ?? `job ${id} failed (${dead.reason})`, {
      details: {
        jobId: id,
        reason: dead.reason,
        attempts: dead.attempts,
        lastError: dead.lastError,
      },
    });
  }
  // Replayed from the dead-letter queue between the two reads: live again, still waited for.
  if (await store.jobGet({ id })) return undefined;
  throw new SoniqError(
    "NOT_FOUND",
    `no job ${id}: never enqueued, deleted, or finished with nothing kept (resultRetention 0, or pruned)`,
    { details: { jobId: id } },
  );
}

function checkOptions(options: WaitForOptions): WaitForOptions {
  if (typeof options !== "object" || options === null) {
    throw new SoniqError("INVALID_OPTION", "waitFor options must be { timeout?, signal? }");
  }
  const unknown = Object.keys(options).filter((k) => k !== "timeout" && k !== "signal");
  if (unknown.length > 0) {
    throw new SoniqError("INVALID_OPTION", `unknown waitFor option(s) ${unknown.join(", ")}`);
  }
  const { timeout, signal } = options;
  if (
    timeout !== undefined &&
    (typeof timeout !== "number" || !(timeout > 0) || !Number.isFinite(timeout))
  ) {
    throw new SoniqError(
      "INVALID_OPTION",
      `timeout must be a number of seconds > 0, not ${String(timeout)}`,
    );
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new SoniqError("INVALID_OPTION", "signal must be an AbortSignal");
  }
  return options;
}

/** Waits `ms`, or rejects with the signal's reason when it is aborted first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}
