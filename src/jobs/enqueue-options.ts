import type { DependencyFailurePolicy, PgQueryable } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { valueText } from "../value-text.js";
import { QUEUE_NAME_PATTERN } from "./job-name.js";

/** Options for one enqueue. */
export interface EnqueueOptions {
  /** Run no earlier than this many **seconds** from now (database clock). Not with `runAt`. */
  delay?: number;
  /**
   * Run no earlier than this instant: a `Date`, or an ISO-8601 string **with** a time zone
   * (`Z` or `±hh:mm`). Naive strings and invalid dates are rejected. Not with `delay`.
   */
  runAt?: Date | string;
  /** Overrides the job's priority (integer -1000..1000, lower runs first). */
  priority?: number;
  /** Overrides the job's queue. */
  queue?: string;
  /** Overrides the job's max attempts (1..1000). */
  maxAttempts?: number;
  /**
   * A duplicate (same key while a job holds it: queued, processing, or finished within its
   * `resultRetention`) returns the existing job's id instead of inserting. Up to 500 characters.
   */
  dedupKey?: string;
  /** Use a key derived from the name and the canonical JSON of the arguments as `dedupKey`. */
  uniqueByArgs?: boolean;
  /**
   * The job's key, instead of the one its definition computes (`concurrency.key`,
   * `rateLimit.key` or the job's name; 1 to 200 characters; docs/flow-control.md). Only for a job
   * whose definition declares `concurrency` or `rateLimit` (the limits come from there).
   */
  concurrencyKey?: string;
  /**
   * Workflows (docs/workflows.md): ids of jobs this one waits for. The job is inserted
   * **waiting** — never claimed, holding no slot — and becomes due in the same transaction that
   * ends the last of them well (its `delay` or `runAt` then applies, counted from the enqueue).
   * Each id may be a job that is queued, running, or already ended (and still kept); a dependency
   * that ends dead-lettered or cancelled applies {@link onDependencyFailure}. Its handler reads
   * their results with `ctx.dependencies()`. At most 1,000 ids; not with `dedupKey` or
   * `uniqueByArgs`.
   * @throws SoniqError `UNKNOWN_DEPENDENCY` at enqueue when an id names no stored job (nothing is
   * written), `INVALID_ENQUEUE_OPTION` for a malformed list.
   */
  after?: readonly string[];
  /**
   * What a dependency in {@link after} that ends dead-lettered or cancelled does to this job:
   * `"fail"` (default) moves it to the dead-letter queue with reason `dependency_failed`;
   * `"ignore"` runs it anyway; `"cancel"` cancels it. Only with `after`.
   */
  onDependencyFailure?: DependencyFailurePolicy;
  /**
   * PostgreSQL only: a `pg` client (or anything with the same `query`) inside the caller's
   * transaction. The job exists if and only if the caller commits.
   */
  connection?: PgQueryable;
}

/** The most dependencies one job may list. */
export const MAX_DEPENDENCIES = 1000;

/**
 * Validates `after` and `onDependencyFailure` (docs/workflows.md).
 * @returns The dependency ids (empty when none) and the policy.
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` for a list that is not 1..1000 strings, a policy
 * other than fail/ignore/cancel, a policy without `after`, or `after` with a dedup key.
 */
export function resolveDependencies(options: EnqueueOptions): {
  after: string[];
  onFailure: DependencyFailurePolicy;
} {
  const { after, onDependencyFailure } = options;
  const onFailure = onDependencyFailure ?? "fail";
  if (onFailure !== "fail" && onFailure !== "ignore" && onFailure !== "cancel") {
    throw bad(
      `onDependencyFailure must be "fail", "ignore" or "cancel", got ${valueText(onFailure)}`,
    );
  }
  if (after === undefined) {
    if (onDependencyFailure !== undefined) throw bad("onDependencyFailure needs `after`");
    return { after: [], onFailure };
  }
  if (!Array.isArray(after) || after.length === 0 || after.length > MAX_DEPENDENCIES) {
    throw bad(`after must be a list of 1 to ${MAX_DEPENDENCIES} job ids`);
  }
  for (const id of after) {
    if (typeof id !== "string" || id.length === 0 || id.length > 100) {
      throw bad(`after must hold job ids (strings), got ${valueText(id)}`);
    }
  }
  if (new Set(after).size !== after.length) throw bad("after lists a job id twice");
  if (options.dedupKey !== undefined || options.uniqueByArgs === true) {
    throw bad("a job with dependencies (`after`) cannot take a dedup key");
  }
  return { after: [...after], onFailure };
}

const MIN_RUN_AT = Date.UTC(1970, 0, 1);
const MAX_RUN_AT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** JavaScript rolls 2026-02-30 over to March 2; refuse a day the month does not have. */
function calendarDateExists(iso: string): boolean {
  const [year, month, day] = iso.slice(0, 10).split("-").map(Number) as [number, number, number];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= days;
}

const ZONED_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** The validated timing and overrides of an enqueue. */
export interface ResolvedTiming {
  runAt: Date | null;
  delaySeconds: number;
}

function bad(message: string): SoniqError {
  return new SoniqError("INVALID_ENQUEUE_OPTION", message);
}

/**
 * Validates `delay` / `runAt`.
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` for both given, a negative delay, a naive or invalid date.
 */
export function resolveTiming(options: EnqueueOptions): ResolvedTiming {
  const { delay, runAt } = options;
  if (delay !== undefined && runAt !== undefined) throw bad("give either delay or runAt, not both");
  if (delay !== undefined) {
    if (
      typeof delay !== "number" ||
      !Number.isFinite(delay) ||
      delay < 0 ||
      delay > 10 * 365 * 86_400
    ) {
      throw bad(
        `delay must be a number of seconds between 0 and ten years, got ${valueText(delay)}`,
      );
    }
    return { runAt: null, delaySeconds: delay };
  }
  if (runAt !== undefined) {
    let date: Date;
    if (runAt instanceof Date) {
      date = new Date(runAt.getTime());
    } else if (typeof runAt === "string") {
      if (!ZONED_ISO.test(runAt.trim())) {
        throw bad(
          `runAt ${JSON.stringify(runAt)} must be ISO-8601 with a time zone (e.g. 2026-01-31T09:00:00Z or +01:00)`,
        );
      }
      date = new Date(runAt.trim());
    } else {
      throw bad("runAt must be a Date or an ISO-8601 string with a time zone");
    }
    if (Number.isNaN(date.getTime())) throw bad(`runAt ${valueText(runAt)} is not a valid date`);
    if (typeof runAt === "string" && !calendarDateExists(runAt.trim())) {
      throw bad(`runAt ${JSON.stringify(runAt)} names a day that does not exist`);
    }
    if (date.getTime() < MIN_RUN_AT || date.getTime() > MAX_RUN_AT) {
      throw bad(`runAt ${date.toISOString()} is outside 1970-01-01 .. 9999-12-31`);
    }
    return { runAt: date, delaySeconds: 0 };
  }
  return { runAt: null, delaySeconds: 0 };
}

/** @throws SoniqError `INVALID_ENQUEUE_OPTION`. */
export function assertPriority(priority: unknown): asserts priority is number {
  if (
    typeof priority !== "number" ||
    !Number.isInteger(priority) ||
    priority < -1000 ||
    priority > 1000
  ) {
    throw bad(
      `priority must be an integer from -1000 to 1000 (lower runs first), got ${valueText(priority)}`,
    );
  }
}

/** @throws SoniqError `INVALID_ENQUEUE_OPTION`. */
export function assertQueue(queue: unknown): asserts queue is string {
  if (typeof queue !== "string" || !QUEUE_NAME_PATTERN.test(queue)) {
    throw bad(`queue ${JSON.stringify(queue)} must be 1-100 letters, digits or _ . : -`);
  }
}

/** @throws SoniqError `INVALID_ENQUEUE_OPTION`. */
export function assertMaxAttempts(value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 1000) {
    throw bad(`maxAttempts must be an integer from 1 to 1000, got ${valueText(value)}`);
  }
}

/** @throws SoniqError `INVALID_ENQUEUE_OPTION`. */
export function assertDedupKey(value: unknown): asserts value is string {
  if (typeof value !== "string" || value.length === 0 || value.length > 500) {
    throw bad("dedupKey must be a non-empty string of at most 500 characters");
  }
  // Keys are compared byte for byte by every store: PostgreSQL text cannot hold NUL, and would
  // turn different lone surrogates into the same character.
  if (value.includes("\u0000") || !value.isWellFormed()) {
    throw bad("dedupKey must not contain NUL characters or lone surrogates");
  }
}

const KNOWN = new Set([
  "after",
  "onDependencyFailure",
  "concurrencyKey",
  "delay",
  "runAt",
  "priority",
  "queue",
  "maxAttempts",
  "dedupKey",
  "uniqueByArgs",
  "connection",
]);

/** @throws SoniqError `INVALID_ENQUEUE_OPTION` naming an unknown option. */
export function assertKnownOptions(options: object): void {
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key))
      throw bad(`unknown enqueue option ${JSON.stringify(key)} (known: ${[...KNOWN].join(", ")})`);
  }
}
