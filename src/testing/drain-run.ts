/**
 * One drain of `soniq/testing`: a real worker of the instance runs on the in-memory store until
 * nothing it can run is due (on the test clock), then drains and stops. Every outcome goes through
 * the same worker code as in production (retries with back-off, snoozes, the dead-letter queue,
 * cancellation); the summary says what each job came to.
 */
import { SoniqError } from "../errors.js";
import type { Soniq } from "../soniq.js";
import type { RecordedOutcome } from "../worker/outcome-recorder.js";
import { Worker } from "../worker/worker.js";
import type { TestingStore } from "./testing-store.js";

/**
 * What one run of a job came to in a drain: `done` (its handler returned), `failed` (it threw or
 * timed out and will be retried after its back-off, on the test clock), `dead_lettered` (failed
 * with no attempt left, or could not run here), `snoozed` (it asked to run again later),
 * `cancelled` (cancelled while it ran).
 */
export type DrainOutcome = "done" | "failed" | "dead_lettered" | "snoozed" | "cancelled" | "frozen";

/** One run of a job in a drain. */
export interface DrainedJob {
  /** The job's id. */
  id: string;
  /** Its registered name. */
  name: string;
  /** Its queue. */
  queue: string;
  /** What this run came to. */
  outcome: DrainOutcome;
  /** What the handler returned (`done` only). */
  result?: unknown;
  /**
   * What the handler threw, as it threw it (`failed`, `dead_lettered`); for a job that could not
   * run here (unknown name, arguments its schema refuses), an `Error` with the reason.
   */
  error?: unknown;
}

/** What {@link SoniqTesting.drain} resolves to: the runs in the order they finished, and counts. */
export interface DrainSummary {
  /** Runs in this drain (a job retried within one drain counts once per run). */
  ran: number;
  /** Runs whose handler returned (`done`). */
  done: number;
  /** Runs that failed and wait for a retry (`failed`). */
  failed: number;
  /** Runs that ended in the dead-letter queue (`dead_lettered`). */
  deadLettered: number;
  /** Runs that snoozed (`snoozed`). */
  snoozed: number;
  /** Runs cancelled while they ran (`cancelled`). */
  cancelled: number;
  /** Runs that froze on an effect step whose outcome is unknown (`frozen`; docs/checkpoints.md). */
  frozen: number;
  /** Each run, in the order they finished. */
  jobs: DrainedJob[];
}

/** What a drain needs. */
export interface DrainParams {
  soniq: Soniq;
  store: TestingStore;
  /** Most runs before the drain stops with `DRAIN_LIMIT`. */
  maxJobs: number;
  /** The drain worker's slots. */
  concurrency: number;
}

/** The drain worker's poll interval in seconds: a missed wake-up costs at most this. */
const POLL_SECONDS = 0.05;

/**
 * Runs one drain (see the module comment). Resolves once the worker found nothing due with no job
 * running and nothing written since that claim began, and has stopped.
 * @throws SoniqError `DRAIN_LIMIT` when `maxJobs` runs happened and jobs are still due (the
 * summary so far is in `details.summary`); errors of the worker's start (e.g. `CLOSED`).
 */
export async function runDrain(params: DrainParams): Promise<DrainSummary> {
  const { soniq, store, maxJobs } = params;
  const runs: DrainedJob[] = [];
  if (soniq.definitions.size === 0) return summarize(runs);
  let idle = () => {};
  const idled = new Promise<void>((resolve) => {
    idle = resolve;
  });
  let outcomes = 0;
  const worker = new Worker(
    {
      jobs: soniq.definitions,
      settings: soniq.settings,
      logger: quietLogger(soniq),
      eventBus: soniq.eventBus,
      backend: () => soniq.backend(),
      scheduleDefinitions: soniq.scheduleDefinitions,
      onSchedulesChanged: (listener) => soniq.onSchedulesChanged(listener),
      observeOutcome: (recorded) => {
        outcomes += 1;
        if (!recorded.changed || recorded.outcome.kind === "released") return;
        runs.push(drained(recorded));
        if (runs.length >= maxJobs) idle();
      },
    },
    { concurrency: params.concurrency, prefetch: 0, pollInterval: POLL_SECONDS },
  );
  // Activity: every outcome and every job written. A claim that found nothing proves the drain
  // is over only when nothing happened while it ran and no job is claimed.
  const mark = () => outcomes + store.writes;
  store.watcher = {
    claimStarted: mark,
    claimAnswered: (started, claimed) => {
      if (claimed === 0 && worker.inFlightCount === 0 && mark() === started) idle();
    },
  };
  try {
    await worker.start();
    await idled;
  } finally {
    store.watcher = undefined;
    await worker.stop("soniq/testing");
  }
  const summary = summarize(runs);
  if (runs.length >= maxJobs && (await soniq.jobs.count({ status: "queued" })) > 0) {
    throw new SoniqError(
      "DRAIN_LIMIT",
      `drain() ran its bound of ${maxJobs} jobs and jobs are still due: a handler that keeps enqueuing? (raise maxJobs if this is expected)`,
      { details: { maxJobs, summary } },
    );
  }
  return summary;
}

/** The instance's logger, no chattier than `warn` (a drain starts and stops a worker each time). */
function quietLogger(soniq: Soniq) {
  const level = soniq.logger.levelVal >= 40 ? soniq.logger.level : "warn";
  return soniq.logger.child({ component: "soniq/testing" }, { level });
}

/** A recorded outcome as a {@link DrainedJob}. */
function drained({ job, outcome, op }: RecordedOutcome): DrainedJob {
  const base = { id: job.id, name: job.name, queue: job.queue };
  switch (outcome.kind) {
    case "success":
      return { ...base, outcome: "done", result: outcome.value };
    case "snooze":
      return { ...base, outcome: "snoozed" };
    case "cancelled":
    case "released":
      return { ...base, outcome: "cancelled" };
    case "frozen":
      return { ...base, outcome: "frozen" };
    default:
      // error, timeout. (Released never reaches here: the observer drops it.)
      return {
        ...base,
        outcome: op === "dead_letter" ? "dead_lettered" : "failed",
        error: outcome.error,
      };
  }
}

/** Counts of `runs`. */
function summarize(runs: DrainedJob[]): DrainSummary {
  const count = (outcome: DrainOutcome) => runs.filter((r) => r.outcome === outcome).length;
  return {
    ran: runs.length,
    done: count("done"),
    failed: count("failed"),
    deadLettered: count("dead_lettered"),
    snoozed: count("snoozed"),
    cancelled: count("cancelled"),
    frozen: count("frozen"),
    jobs: runs,
  };
}
