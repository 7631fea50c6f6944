/** What the worker keeps per claimed job, and how a run ended. */
import type { ClaimedJob, Owner } from "../backends/backend.js";
import type { JobTimeoutError } from "../jobs/context.js";
import type { LazyAbortController } from "./lazy-abort-controller.js";

/** How one run of a handler ended, before it is written. */
export type Outcome =
  | { kind: "success"; value: unknown }
  | { kind: "snooze"; seconds: number }
  | { kind: "error"; error: unknown }
  | { kind: "timeout"; error: JobTimeoutError }
  | { kind: "released" };

export interface InFlight {
  job: ClaimedJob;
  owner: Owner;
  /** Aborts `ctx.signal` (job timeout, shutdown deadline). */
  controller: LazyAbortController;
  /** Set while the handler runs (or waits for a thread permit); called at FORCE_TIMEOUT_PATH. */
  force?: () => void;
  /** True while the job holds one of the worker's concurrency slots (until its outcome is known). */
  holdsSlot: boolean;
  /** Sync jobs: settles when the worker thread has returned (the permit is released then). */
  thread?: Promise<void>;
  done: Promise<void>;
}
