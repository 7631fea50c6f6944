/**
 * `soniq.jobs.waitFor(id)`: waits until a job is finished, wherever it runs, and settles with
 * its result or its final error (docs/operations.md, "Waiting for a job's result").
 *
 * How it learns of the end: on PostgreSQL (with a LISTEN connection) it registers the wait and
 * reads the job's row once, then again only when the finishing statement's notice arrives (or
 * LISTEN was re-established): nothing is read while the job runs. Elsewhere — SQLite, memory,
 * PostgreSQL behind a transaction-mode pooler without `listenUrl`, or while LISTEN is lost — it
 * reads at a bounded, growing interval (50 ms, then × 1.5 up to 1 s).
 */
import type { Backend, FinishWatch } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";

/** Options of {@link waitForJob}. */
export interface WaitForOptions {
  /**
   * Most **seconds** to wait (a number > 0); past it the wait rejects with
   * `SoniqError("WAIT_TIMEOUT")` and the job is left as it is. Default: no bound. Any length:
   * one longer than a Node.js timer (2^31 ms, about 24.8 days) is slept in steps of that length.
   */
  timeout?: number;
  /**
   * Aborting it ends the wait at once, rejecting with `SoniqError("WAIT_ABORTED")` (the signal's
   * reason as its `cause`); the job is untouched.
   */
  signal?: AbortSignal;
}

/** First interval between reads, in milliseconds. */
const FIRST_MS = 50;
/** Longest interval between reads, in milliseconds. */
const MAX_MS = 1000;
/**
 * Longest timer Node.js holds (2^31 - 1 ms, about 24.8 days): a longer one fires after 1 ms. A
 * wait whose `timeout` is longer sleeps at most this long, reads once, and sleeps again.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits for job `id` to finish (see the module comment). Resolves with its result (what its
 * handler returned, parsed from JSON; `undefined` when it returned nothing) once it is `done`.
 * A failure that will be retried is not final: the wait goes on.
 * @throws SoniqError `JOB_FAILED` when it ended in the dead-letter queue (`message`: its last
 * error; `details`: `jobId`, `reason`, `attempts`, `lastError`); `JOB_CANCELLED` when it was
 * cancelled; `NOT_FOUND` when no such job exists (never enqueued, deleted, or finished with
 * nothing kept: `resultRetention` 0, or pruned); `WAIT_TIMEOUT` past `timeout`;
 * `INVALID_OPTION` for a bad `timeout` or `signal`; `WAIT_ABORTED` (the signal's reason as
 * `cause`) when the signal is aborted; the store's errors (e.g. `CLOSED`, connection errors).
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
  if (signal?.aborted) throw aborted(id, signal);
  const deadline = timeout === undefined ? undefined : Date.now() + timeout * 1000;
  const store = await backend();
  const bell = new Bell();
  let watch: FinishWatch | undefined;
  try {
    watch = await store.finishNotices?.watch(id, () => bell.ring());
    let interval = FIRST_MS;
    for (;;) {
      if (signal?.aborted) throw aborted(id, signal);
      const settled = await readOutcome(store, id);
      if (settled) return settled.result;
      // A live watch is rung when the job finishes: no reads meanwhile, only the deadline.
      const live = watch?.live === true;
      const left = deadline === undefined ? undefined : deadline - Date.now();
      if (left !== undefined && left <= 0) {
        throw new SoniqError(
          "WAIT_TIMEOUT",
          `job ${id} did not finish within ${timeout} s (it is left as it is)`,
          { details: { jobId: id, timeoutSeconds: timeout } },
        );
      }
      const wait = live ? left : Math.min(interval, left ?? interval);
      const outcome = await bell.wait(wait, signal);
      if (outcome === "aborted" && signal) throw aborted(id, signal);
      if (!live && outcome === "timer") interval = Math.min(MAX_MS, Math.round(interval * 1.5));
    }
  } finally {
    await watch?.release();
  }
}

/** The coded error of an aborted wait. */
function aborted(id: string, signal: AbortSignal): SoniqError {
  return new SoniqError(
    "WAIT_ABORTED",
    `the wait for job ${id} was aborted (the job is untouched)`,
    {
      cause: signal.reason,
      details: { jobId: id },
    },
  );
}

/**
 * A wake-up for one waiter: {@link ring} (a notice) settles the current {@link wait}, or the
 * next one at once when nobody was waiting (a notice that came while the row was being read).
 */
class Bell {
  private rung = false;
  private wake: (() => void) | null = null;

  ring(): void {
    if (this.wake) this.wake();
    else this.rung = true;
  }

  /**
   * Resolves `"rung"` on a ring, `"timer"` after `ms` (never when undefined), `"aborted"` when
   * the signal aborts; removes its timer and listener either way.
   */
  wait(
    ms: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<"rung" | "timer" | "aborted"> {
    if (this.rung) {
      this.rung = false;
      return Promise.resolve("rung");
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (outcome: "rung" | "timer" | "aborted") => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.wake = null;
        resolve(outcome);
      };
      const onAbort = () => done("aborted");
      this.wake = () => done("rung");
      if (ms !== undefined) {
        timer = setTimeout(() => done("timer"), Math.min(MAX_TIMER_MS, Math.max(0, ms)));
      }
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
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
