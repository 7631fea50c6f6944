/**
 * `startTesting(soniq, options)` and the {@link SoniqTesting} it returns: the instance's store
 * swapped for a fresh in-memory one on a fake clock, jobs run inline at enqueue or by `drain()`,
 * and assertions on what was enqueued (docs/testing.md).
 */
import { AssertionError } from "node:assert";
import { SoniqError } from "../errors.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { isSoniq, type Soniq } from "../soniq.js";
import { type ArgsMatch, describeValue, matchesArgs } from "./args-match.js";
import { type DrainSummary, runDrain } from "./drain-run.js";
import { type EnqueuedJob, listJobs, readEnqueued } from "./enqueued-jobs.js";
import { TestClock } from "./test-clock.js";
import { TestingStore } from "./testing-store.js";

/**
 * `inline`: each enqueue runs the jobs it made due (and what their handlers enqueue) before it
 * resolves, and rejects with a handler's error. `manual`: nothing runs until `drain()`.
 */
export type TestingMode = "inline" | "manual";

/** Options of {@link startTesting}. */
export interface TestingOptions {
  /** Default `"manual"`. See {@link TestingMode}. */
  mode?: TestingMode;
  /**
   * Where the test clock starts: a `Date` or milliseconds since the epoch. Default: the real
   * time when testing starts.
   */
  now?: Date | number;
  /**
   * Most job runs in one drain (an integer from 1), so a handler that keeps enqueuing fails the
   * test with `DRAIN_LIMIT` instead of hanging it. Default 1000.
   */
  maxJobs?: number;
  /**
   * Jobs a drain runs at once (an integer from 1 to 10000). Default 1: jobs run one after
   * another, in the order a worker claims them (priority, then due time, then enqueue order).
   */
  concurrency?: number;
}

/** Options of {@link SoniqTesting.drain}. */
export interface DrainOptions {
  /** Most job runs in this drain. Default: the `maxJobs` given to {@link startTesting}. */
  maxJobs?: number;
}

/** Which jobs an assertion is about: a definition (arguments typed from it) or a job name. */
export type JobRef<TArgs> = JobDefinition<TArgs, unknown, unknown> | string;

/**
 * How an assertion matches jobs of the name: a partial arguments object (any subset of keys, at
 * any depth; leaves may be `expect.any(…)`-style matchers), or a predicate on the whole job.
 */
export type JobMatch<TArgs> = ArgsMatch<TArgs> | ((job: EnqueuedJob<TArgs>) => boolean);

const OPTION_KEYS = new Set(["mode", "now", "maxJobs", "concurrency"]);

/**
 * Starts testing `soniq`: its store becomes a fresh, empty in-memory database (SQLite's, the same
 * SQL and semantics as a SQLite file) on a fake clock ({@link SoniqTesting.clock}); the configured
 * `databaseUrl` is never opened. Call it before the instance's first enqueue, `setup` or worker
 * (e.g. in `beforeEach`); calling it again (a new test) replaces the store of the previous call,
 * so each test starts empty. End with {@link SoniqTesting.stop}.
 *
 * ```ts
 * const testing = await startTesting(soniq, { mode: "inline" });
 * await signUp("ada@example.com"); // enqueues email.welcome, which runs now
 * await testing.assertEnqueued("email.welcome", { to: "ada@example.com" });
 * ```
 * @throws SoniqError `INVALID_OPTION` (unknown option, bad `mode`, `now`, `maxJobs` or
 * `concurrency`; `soniq` is not a Soniq instance); `INVALID_STATE` when the instance already
 * opened a database that is not in memory; `CLOSED` after `soniq.close()`.
 */
export async function startTesting(
  soniq: Soniq,
  options: TestingOptions = {},
): Promise<SoniqTesting> {
  if (!isSoniq(soniq)) {
    throw new SoniqError("INVALID_OPTION", "startTesting(soniq) takes a Soniq instance");
  }
  const checked = checkOptions(options);
  const clock = new TestClock(options.now ?? Date.now());
  const store = new TestingStore({ clock: () => clock.now() });
  const testing = new SoniqTesting(soniq, store, clock, checked);
  await soniq.attachTesting({ store, afterEnqueue: (ids) => testing.afterEnqueue(ids) });
  return testing;
}

/** The checked options, with defaults. */
function checkOptions(options: TestingOptions): Required<Omit<TestingOptions, "now">> {
  if (typeof options !== "object" || options === null) {
    throw new SoniqError("INVALID_OPTION", "startTesting options must be an object");
  }
  const unknown = Object.keys(options).filter((key) => !OPTION_KEYS.has(key));
  if (unknown.length > 0) {
    throw new SoniqError("INVALID_OPTION", `unknown testing option(s) ${unknown.join(", ")}`);
  }
  const mode = options.mode ?? "manual";
  if (mode !== "inline" && mode !== "manual") {
    throw new SoniqError(
      "INVALID_OPTION",
      `mode must be "inline" or "manual", not ${String(mode)}`,
    );
  }
  return {
    mode,
    maxJobs: positiveInt(options.maxJobs ?? 1000, "maxJobs", Number.MAX_SAFE_INTEGER),
    concurrency: positiveInt(options.concurrency ?? 1, "concurrency", 10_000),
  };
}

function positiveInt(value: number, what: string, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${what} must be an integer from 1 to ${max}, not ${String(value)}`,
    );
  }
  return value;
}

/**
 * A Soniq instance under test (made by {@link startTesting}): its fake clock, `drain()`, and
 * assertions that read its in-memory store. Assertions throw node's `AssertionError`
 * (`code: "ERR_ASSERTION"`), which vitest, jest and `node:test` report as a failed assertion; its
 * message lists what the store holds.
 */
export class SoniqTesting {
  /** The mode given to {@link startTesting}. */
  readonly mode: TestingMode;
  private readonly maxJobs: number;
  private readonly concurrency: number;
  /** Drains run one after another. */
  private queue: Promise<unknown> = Promise.resolve();
  private draining = 0;
  private stopped = false;

  /** @internal Made by {@link startTesting}. */
  constructor(
    /** The instance under test. */
    readonly soniq: Soniq,
    private readonly store: TestingStore,
    /**
     * The store's clock: stands still until `advance(ms)` or `set(at)`; due times, delays,
     * retries' back-off and snoozes are read from it.
     */
    readonly clock: TestClock,
    options: Required<Omit<TestingOptions, "now">>,
  ) {
    this.mode = options.mode;
    this.maxJobs = options.maxJobs;
    this.concurrency = options.concurrency;
  }

  /**
   * Runs every job that is due on {@link SoniqTesting.clock}, and what their handlers enqueue
   * (when due), with a real worker of the instance, until nothing due is left; then resolves with
   * what ran. A job that fails is retried after its back-off on the test clock, so it runs again
   * only after `clock.advance(ms)` and another drain. Drains run one at a time.
   * @throws SoniqError `DRAIN_LIMIT` when `maxJobs` runs happened and jobs are still due;
   * `INVALID_OPTION` for a bad `maxJobs`; `CLOSED` after {@link SoniqTesting.stop}.
   */
  drain(options: DrainOptions = {}): Promise<DrainSummary> {
    if (this.stopped) return Promise.reject(closed());
    let maxJobs: number;
    try {
      maxJobs = positiveInt(options.maxJobs ?? this.maxJobs, "maxJobs", Number.MAX_SAFE_INTEGER);
    } catch (err) {
      return Promise.reject(err);
    }
    this.draining += 1;
    const run = this.queue.then(() =>
      runDrain({ soniq: this.soniq, store: this.store, maxJobs, concurrency: this.concurrency }),
    );
    const settled = run.finally(() => {
      this.draining -= 1;
    });
    this.queue = settled.catch(() => undefined);
    return settled;
  }

  /**
   * @internal Runs after each enqueue through the instance. Inline mode: drains, then rejects
   * with the error of a job of `ids` that failed in it, else of any job that failed in it. An
   * enqueue made while a drain runs (by a handler, or a second enqueue in parallel) returns at
   * once: the running drain takes its job, and its errors reject the enqueue that started it.
   */
  async afterEnqueue(ids: readonly string[]): Promise<void> {
    if (this.stopped || this.mode !== "inline" || this.draining > 0) return;
    const summary = await this.drain();
    const failures = summary.jobs.filter((job) => "error" in job);
    const failure = failures.find((job) => ids.includes(job.id)) ?? failures[0];
    if (failure) throw failure.error;
  }

  /**
   * The jobs of `job` (a definition, or a name) that the store holds, in enqueue order, whatever
   * their state (`status`: queued, scheduled, processing, done, cancelled, dead_letter), that
   * match `match` and `where`. Finished jobs are kept for `resultRetention` on the test clock.
   * @param match - a partial arguments object (see {@link JobMatch}) or a predicate on the job.
   * @param where - a further predicate on the job.
   * @throws SoniqError `CLOSED` after {@link SoniqTesting.stop}.
   */
  async enqueued<TArgs = unknown>(
    job: JobRef<TArgs>,
    match?: JobMatch<TArgs>,
    where?: (job: EnqueuedJob<TArgs>) => boolean,
  ): Promise<EnqueuedJob<TArgs>[]> {
    const jobs = (await readEnqueued(this.soniq, nameOf(job))) as EnqueuedJob<TArgs>[];
    return jobs.filter((j) => matches(j, match) && (where === undefined || where(j)));
  }

  /**
   * Passes when at least one job of `job` matches (see {@link SoniqTesting.enqueued}) and
   * returns the matching jobs; otherwise throws an `AssertionError` whose message lists every
   * job the store holds.
   * @throws AssertionError (`ERR_ASSERTION`) when no job matches; SoniqError `CLOSED`.
   */
  async assertEnqueued<TArgs = unknown>(
    job: JobRef<TArgs>,
    match?: JobMatch<TArgs>,
    where?: (job: EnqueuedJob<TArgs>) => boolean,
  ): Promise<EnqueuedJob<TArgs>[]> {
    const found = await this.enqueued(job, match, where);
    if (found.length > 0) return found;
    const all = await readEnqueued(this.soniq);
    throw new AssertionError({
      message: `expected a job ${describeWanted(job, match, where)} to be enqueued, but none was; the store holds ${count(all.length)}:\n${listJobs(all)}`,
      operator: "assertEnqueued",
    });
  }

  /**
   * Passes when no job of `job` matches (see {@link SoniqTesting.enqueued}); otherwise throws an
   * `AssertionError` whose message lists the matching jobs.
   * @throws AssertionError (`ERR_ASSERTION`) when a job matches; SoniqError `CLOSED`.
   */
  async refuteEnqueued<TArgs = unknown>(
    job: JobRef<TArgs>,
    match?: JobMatch<TArgs>,
    where?: (job: EnqueuedJob<TArgs>) => boolean,
  ): Promise<void> {
    const found = await this.enqueued(job, match, where);
    if (found.length === 0) return;
    throw new AssertionError({
      message: `expected no job ${describeWanted(job, match, where)} to be enqueued, but the store holds ${count(found.length)} matching:\n${listJobs(found)}`,
      operator: "refuteEnqueued",
    });
  }

  /**
   * Ends this test's use of the instance: waits for a running drain, then closes the in-memory
   * store (its jobs are gone). The instance stays on that closed store, so a stray enqueue
   * rejects with `CLOSED` instead of reaching the configured database; a later
   * {@link startTesting} installs a fresh store. Idempotent.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.queue;
    await this.store.close();
  }
}

function closed(): SoniqError {
  return new SoniqError("CLOSED", "this test's store is closed (testing.stop() was called)");
}

function nameOf<TArgs>(job: JobRef<TArgs>): string {
  return typeof job === "string" ? job : job.name;
}

function matches<TArgs>(job: EnqueuedJob<TArgs>, match: JobMatch<TArgs> | undefined): boolean {
  if (match === undefined) return true;
  if (typeof match === "function") return (match as (job: EnqueuedJob<TArgs>) => boolean)(job);
  return matchesArgs(job.args, match);
}

function describeWanted<TArgs>(
  job: JobRef<TArgs>,
  match: JobMatch<TArgs> | undefined,
  where: unknown,
): string {
  let text = JSON.stringify(nameOf(job));
  if (typeof match === "function") text += " matching the predicate";
  else if (match !== undefined) text += ` matching ${describeValue(match)}`;
  if (where !== undefined) text += `${match === undefined ? " matching" : " and"} the predicate`;
  return text;
}

function count(n: number): string {
  return n === 1 ? "1 job" : `${n} jobs`;
}
