/**
 * A schedule declared in code (`soniq.schedule({...})`): its options, their validation at
 * definition time (bad input throws a coded `SoniqError` and nothing is written), and the
 * resolved {@link ScheduleSpec} that reconciliation stores in `soniq_schedules`.
 */
import type { ScheduleSpec } from "../backends/contract/index.js";
import { isSoniqError, SoniqError } from "../errors.js";
import {
  assertMaxAttempts,
  assertPriority,
  assertQueue,
  resolveTiming,
} from "../jobs/enqueue-options.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { toJsonText } from "../jobs/payload.js";
import { valueText } from "../value-text.js";
import type { MissedPolicyName, OverlapPolicy } from "./outcomes.js";
import { compileRecurrence, periodSeconds, type Recurrence, type Timing } from "./recurrence.js";

/** Missed-run policy options (durations in **seconds**). */
export interface MissedOptions {
  /** `skip`, `latest` (default) or `all`; see docs/schedules.md. */
  policy?: MissedPolicyName;
  /** Seconds an occurrence may be overdue and still count as on time. Default: min(60, period). */
  grace?: number;
  /** Seconds: the catch-up window of `latest`/`all`. Default: max(grace, min(period, 3600)). */
  within?: number;
  /** `all`: at most this many late jobs per tick (default 100). */
  max?: number;
}

/** Per-job enqueue options every occurrence's job gets (default: the job's own). */
export interface ScheduleEnqueueOptions {
  queue?: string;
  priority?: number;
  maxAttempts?: number;
}

/** What `soniq.schedule(...)` takes. Exactly one of `cron` and `every`. */
export interface ScheduleOptions<TArgs, TResult, TInput> {
  /** Permanent identity, dotted lower-case (`reports.nightly`); renaming makes a new schedule. */
  id: string;
  /** The job each occurrence enqueues (defined on the same instance). */
  job: JobDefinition<TArgs, TResult, TInput>;
  /** 5-field (minute…) or 6-field (second minute…) cron, or `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`. */
  cron?: string;
  /** Interval in **seconds** (>= 1), anchored at `startAt` or the Unix epoch, in UTC. */
  every?: number;
  /** IANA zone of `cron` (default `UTC`); not allowed with `every`. */
  timezone?: string;
  /** The job's arguments, the same for every occurrence (the occurrence is in `ctx.schedule`). */
  args: TInput;
  /** Missed-run policy. Default `{ policy: "latest" }`. */
  missed?: MissedOptions;
  /** `allow` (default) or `skip` while the previous occurrence's job is queued or processing. */
  overlap?: OverlapPolicy;
  /** Queue, priority and attempts of the jobs (default: the job's). */
  enqueue?: ScheduleEnqueueOptions;
  /** No occurrence before this instant (a `Date` or ISO-8601 with a zone). */
  startAt?: Date | string;
  /** No occurrence after this instant (a `Date` or ISO-8601 with a zone). */
  endAt?: Date | string;
  /** History rows kept (default 100, at most 100000). */
  history?: number;
}

const KNOWN = new Set([
  "id",
  "job",
  "cron",
  "every",
  "timezone",
  "args",
  "missed",
  "overlap",
  "enqueue",
  "startAt",
  "endAt",
  "history",
]);

const SCHEDULE_ID = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$/;

/** Default number of history rows kept per schedule. */
export const DEFAULT_HISTORY = 100;

function bad(id: unknown, message: string, cause?: unknown): SoniqError {
  return new SoniqError("INVALID_SCHEDULE", `schedule ${valueText(id)}: ${message}`, {
    cause,
    details: { schedule: id },
  });
}

function seconds(id: string, name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw bad(id, `${name} must be a number of seconds >= 0, got ${valueText(value)}`);
  }
  return value;
}

function instant(id: string, name: string, value: Date | string | undefined): Date | null {
  if (value === undefined) return null;
  try {
    return resolveTiming({ runAt: value }).runAt;
  } catch (err) {
    throw bad(id, `${name}: ${err instanceof Error ? err.message : String(err)}`, err);
  }
}

/** A validated schedule. Use `soniq.schedule(...)` rather than the constructor. */
export class ScheduleDefinition {
  /** The resolved row to store. */
  readonly spec: ScheduleSpec;
  /** The compiled recurrence. */
  readonly recurrence: Recurrence;
  /** The job definition it enqueues. */
  readonly job: JobDefinition<unknown, unknown, unknown>;
  /** The arguments as given (validated against the job's schema at definition or at sync). */
  readonly args: unknown;

  /**
   * @param maxPayloadBytes - the instance's argument size limit, in bytes.
   * @param isRegistered - whether a job definition belongs to the defining instance.
   * @throws SoniqError `INVALID_SCHEDULE` (unknown option, bad id, no or both of cron/every, bad
   * expression, unknown time zone, every < 1 s, bad policy/bounds/history, job not defined on
   * this instance); `INVALID_ARGS` when the arguments fail the job's schema (checked here when
   * the schema validates synchronously, else at sync); `INVALID_PAYLOAD`;
   * `INVALID_ENQUEUE_OPTION` for a bad queue, priority or maxAttempts.
   */
  constructor(
    options: ScheduleOptions<unknown, unknown, unknown>,
    maxPayloadBytes: number,
    isRegistered: (job: JobDefinition<unknown, unknown, unknown>) => boolean,
  ) {
    if (typeof options !== "object" || options === null) {
      throw new SoniqError("INVALID_SCHEDULE", "schedule options must be an object");
    }
    const id = options.id;
    for (const key of Object.keys(options)) {
      if (!KNOWN.has(key)) throw bad(id, `unknown option ${JSON.stringify(key)}`);
    }
    if (typeof id !== "string" || !SCHEDULE_ID.test(id)) {
      throw bad(id, "id must be dotted lower-case, e.g. reports.nightly");
    }
    const job = options.job as JobDefinition<unknown, unknown, unknown> | undefined;
    if (!job || typeof job !== "object" || typeof job.name !== "string" || !isRegistered(job)) {
      throw bad(id, "job must be a job defined on this Soniq instance (soniq.job(...))");
    }
    this.job = job;
    const hasCron = options.cron !== undefined;
    const hasEvery = options.every !== undefined;
    if (hasCron === hasEvery) throw bad(id, "give exactly one of cron and every");
    if (hasEvery && options.timezone !== undefined) {
      throw bad(id, "timezone applies to cron; every is a UTC interval");
    }
    const timezone = options.timezone ?? "UTC";
    const timing: Timing = hasCron
      ? { kind: "cron", expression: String(options.cron), timezone }
      : { kind: "every", seconds: options.every as number };
    const startAt = instant(id, "startAt", options.startAt);
    const endAt = instant(id, "endAt", options.endAt);
    try {
      this.recurrence = compileRecurrence(
        timing,
        startAt?.getTime() ?? null,
        endAt?.getTime() ?? null,
      );
    } catch (err) {
      if (isSoniqError(err)) throw bad(id, err.message.replace(/^INVALID_SCHEDULE: /, ""), err);
      throw err;
    }
    const missed = options.missed ?? {};
    if (typeof missed !== "object" || missed === null) throw bad(id, "missed must be an object");
    for (const key of Object.keys(missed)) {
      if (!["policy", "grace", "within", "max"].includes(key)) {
        throw bad(id, `unknown missed option ${JSON.stringify(key)}`);
      }
    }
    const policy = missed.policy ?? "latest";
    if (!["skip", "latest", "all"].includes(policy)) {
      throw bad(id, `missed.policy must be skip, latest or all, got ${valueText(policy)}`);
    }
    const period =
      timing.kind === "every"
        ? timing.seconds
        : (periodSeconds(this.recurrence, Date.now()) ?? 3600);
    const grace =
      missed.grace === undefined ? Math.min(60, period) : seconds(id, "missed.grace", missed.grace);
    const within =
      missed.within === undefined
        ? Math.max(grace, Math.min(period, 3600))
        : seconds(id, "missed.within", missed.within);
    const max = missed.max ?? 100;
    if (!Number.isInteger(max) || max < 1) {
      throw bad(id, `missed.max must be an integer >= 1, got ${valueText(max)}`);
    }
    const overlap = options.overlap ?? "allow";
    if (overlap !== "allow" && overlap !== "skip") {
      throw bad(id, `overlap must be allow or skip, got ${valueText(overlap)}`);
    }
    const history = options.history ?? DEFAULT_HISTORY;
    if (!Number.isInteger(history) || history < 1 || history > 100_000) {
      throw bad(id, `history must be an integer 1..100000, got ${valueText(history)}`);
    }
    const enqueue = options.enqueue ?? {};
    for (const key of Object.keys(enqueue)) {
      if (!["queue", "priority", "maxAttempts"].includes(key)) {
        throw bad(id, `unknown enqueue option ${JSON.stringify(key)}`);
      }
    }
    const queue = enqueue.queue ?? job.queue;
    assertQueue(queue);
    const priority = enqueue.priority ?? job.priority;
    assertPriority(priority);
    const maxAttempts = enqueue.maxAttempts ?? job.maxAttempts;
    assertMaxAttempts(maxAttempts);
    this.args = options.args;
    if (job.argsSchema) {
      const result = job.argsSchema["~standard"].validate(options.args);
      if (!(result instanceof Promise) && result.issues) {
        throw new SoniqError(
          "INVALID_ARGS",
          `schedule ${id}: arguments of ${job.name}: ${result.issues.map((i) => i.message).join("; ")}`,
          { details: { schedule: id } },
        );
      }
    }
    const args = toJsonText(options.args ?? null, `arguments of schedule ${id}`, maxPayloadBytes);
    this.spec = {
      id,
      jobName: job.name,
      queue,
      priority,
      maxAttempts,
      args,
      jobVersion: job.version,
      cron: timing.kind === "cron" ? timing.expression.trim() : null,
      everySeconds: timing.kind === "every" ? timing.seconds : null,
      timezone: timing.kind === "cron" ? timezone : "UTC",
      startAt,
      endAt,
      missedPolicy: policy,
      missedGrace: grace,
      missedWithin: within,
      missedMax: max,
      overlap,
      historyLimit: history,
    };
  }
}

/** True when the stored row's timing (what decides the occurrences) differs from `spec`'s. */
export function timingChanged(stored: ScheduleSpec, spec: ScheduleSpec): boolean {
  return (
    stored.cron !== spec.cron ||
    stored.everySeconds !== spec.everySeconds ||
    stored.timezone !== spec.timezone ||
    (stored.startAt?.getTime() ?? null) !== (spec.startAt?.getTime() ?? null) ||
    (stored.endAt?.getTime() ?? null) !== (spec.endAt?.getTime() ?? null)
  );
}

/** True when any stored field differs from `spec`. */
export function specChanged(stored: ScheduleSpec, spec: ScheduleSpec): boolean {
  return (
    timingChanged(stored, spec) ||
    stored.jobName !== spec.jobName ||
    stored.queue !== spec.queue ||
    stored.priority !== spec.priority ||
    stored.maxAttempts !== spec.maxAttempts ||
    stored.args !== spec.args ||
    (stored.jobVersion ?? 1) !== (spec.jobVersion ?? 1) ||
    stored.missedPolicy !== spec.missedPolicy ||
    stored.missedGrace !== spec.missedGrace ||
    stored.missedWithin !== spec.missedWithin ||
    stored.missedMax !== spec.missedMax ||
    stored.overlap !== spec.overlap ||
    stored.historyLimit !== spec.historyLimit
  );
}

/** The recurrence a stored row describes. @throws SoniqError `INVALID_SCHEDULE` for a bad row. */
export function recurrenceOf(spec: ScheduleSpec): Recurrence {
  const timing: Timing =
    spec.cron !== null
      ? { kind: "cron", expression: spec.cron, timezone: spec.timezone }
      : { kind: "every", seconds: spec.everySeconds ?? Number.NaN };
  return compileRecurrence(timing, spec.startAt?.getTime() ?? null, spec.endAt?.getTime() ?? null);
}
