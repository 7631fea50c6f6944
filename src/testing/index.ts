/**
 * `soniq/testing`: unit tests of code that enqueues and runs Soniq jobs, with no database server
 * (docs/testing.md). Re-exports only.
 */
export type { ArgsMatch, AsymmetricMatcher } from "./args-match.js";
export type { DrainedJob, DrainOutcome, DrainSummary } from "./drain-run.js";
export type { EnqueuedJob } from "./enqueued-jobs.js";
export { TestClock } from "./test-clock.js";
export {
  type DrainOptions,
  type JobMatch,
  type JobRef,
  SoniqTesting,
  startTesting,
  type TestingMode,
  type TestingOptions,
} from "./testing-harness.js";
