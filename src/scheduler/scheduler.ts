/**
 * One scheduler tick (docs/schedules.md, "Guarantees"): reads the schedules due by the database
 * clock, decides each due occurrence's outcome (outcomes.ts) and takes them with the store's
 * compare-and-set, one transaction per schedule — so two schedulers ticking the same instant insert
 * one job per occurrence, whoever holds the lease. Every outcome is logged and emitted. The
 * leader's scheduler service and every worker's heartbeat catch-up call {@link Scheduler.tick}.
 */
import type {
  NewJob,
  ScheduleRow,
  ScheduleRunInput,
  ScheduleStore,
} from "../backends/contract/index.js";
import { newJobId } from "../jobs/job-id.js";
import type { ScheduleOccurrenceEvent } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { makesJob, occurrenceDedupKey, planOccurrences } from "./outcomes.js";
import type { Recurrence } from "./recurrence.js";
import { recurrenceOf } from "./schedule-definition.js";

/** Most occurrences one schedule's write takes; a longer backlog continues in the next write. */
export const MAX_OCCURRENCES_PER_WRITE = 1000;

/** Receives each occurrence's event (`schedule_occurrence` without `worker_id`). */
export type ScheduleEventSink = (payload: Omit<ScheduleOccurrenceEvent, "worker_id">) => void;

/** What `ctx.schedule` carries, stored in the job's `meta` as `{ "schedule": … }`. */
export interface ScheduleMeta {
  id: string;
  /** The occurrence instant, ISO-8601 UTC (a manual run: when it was asked). */
  occurrence: string;
  /** Enqueued by catch-up after its grace had passed. */
  late: boolean;
  /** Asked for by `run now`. */
  manual: boolean;
}

/** What one tick did. */
export interface TickResult {
  /** The database's now when the tick read the schedules. */
  now: Date;
  /** The earliest cursor after the tick (null when no schedule has one). */
  nextDueAt: Date | null;
  /** Occurrences this tick took (any outcome). */
  taken: number;
  /** Some schedule still has due occurrences past the per-write cap (or a stop cut the tick short). */
  backlog: boolean;
  /** Schedules whose write failed this tick (logged; retried at the next tick). */
  failed: number;
}

/** Options of {@link Scheduler}. */
export interface SchedulerOptions {
  store: ScheduleStore;
  logger: Logger;
  emit?: ScheduleEventSink;
  /** Name of this caller in logs (`leader`, `catch_up`, a worker id). */
  source?: string;
}

/** Builds the job of one occurrence. */
export function occurrenceJob(row: ScheduleRow, meta: ScheduleMeta, dedupKey: string): NewJob {
  return {
    id: newJobId(),
    name: row.jobName,
    queue: row.queue,
    args: row.args,
    priority: row.priority,
    maxAttempts: row.maxAttempts,
    runAt: null,
    delaySeconds: 0,
    dedupKey,
    meta: JSON.stringify({ schedule: meta }),
    version: row.jobVersion ?? 1,
  };
}

/** See the module comment. */
export class Scheduler {
  private readonly store: ScheduleStore;
  private readonly logger: Logger;
  private readonly emit: ScheduleEventSink;
  private readonly recurrences = new Map<string, { key: string; recurrence: Recurrence }>();

  constructor(options: SchedulerOptions) {
    this.store = options.store;
    this.logger = options.source
      ? options.logger.child({ scheduler: options.source })
      : options.logger;
    this.emit = options.emit ?? (() => undefined);
  }

  /** The (cached) recurrence of a stored row. @throws SoniqError `INVALID_SCHEDULE`. */
  recurrence(row: ScheduleRow): Recurrence {
    const key = `${row.cron}|${row.everySeconds}|${row.timezone}|${row.startAt?.getTime()}|${row.endAt?.getTime()}`;
    const cached = this.recurrences.get(row.id);
    if (cached?.key === key) return cached.recurrence;
    const recurrence = recurrenceOf(row);
    this.recurrences.set(row.id, { key, recurrence });
    return recurrence;
  }

  /**
   * Takes every occurrence due at least `overdueSeconds` (**seconds**) ago by the database clock:
   * 0 for the lease holder, the lease time-to-live for a heartbeat catch-up. Checks `signal`
   * between schedules (a stop never starts another schedule's transaction). One schedule's
   * failure is logged and the others still run; the tick itself rejects only when the due
   * schedules cannot be read.
   */
  async tick(overdueSeconds: number, signal?: AbortSignal): Promise<TickResult> {
    const due = await this.store.scheduleDue({ overdueSeconds });
    const nowMs = due.now.getTime();
    let taken = 0;
    let backlog = false;
    let failed = 0;
    let nextDueAt = due.nextDueAt?.getTime() ?? null;
    const earliest = (at: number) => {
      if (nextDueAt === null || at < nextDueAt) nextDueAt = at;
    };
    for (const row of due.due) {
      if (signal?.aborted) {
        backlog = true;
        break;
      }
      try {
        const result = await this.take(row, nowMs);
        taken += result.taken;
        // A lost compare-and-set: someone else moved the cursor (or changed the row); look again.
        if (result.lost) earliest(nowMs);
        else if (result.next !== null) {
          if (result.next <= nowMs) backlog = true;
          earliest(result.next);
        }
      } catch (err) {
        failed += 1;
        this.logger.error(
          { err, schedule: row.id },
          "schedule tick failed for this schedule; it is retried at the next tick",
        );
      }
    }
    return {
      now: due.now,
      nextDueAt: nextDueAt === null ? null : new Date(nextDueAt),
      taken,
      backlog,
      failed,
    };
  }

  /** Plans and takes one schedule's due occurrences; `next` is its cursor afterwards (ms). */
  private async take(
    row: ScheduleRow,
    nowMs: number,
  ): Promise<{ taken: number; next: number | null; lost: boolean }> {
    if (row.nextRunAt === null) return { taken: 0, next: null, lost: false };
    const recurrence = this.recurrence(row);
    const cursor = row.nextRunAt.getTime();
    const occurrences: number[] = [];
    let at: number | null = cursor;
    while (at !== null && at <= nowMs && occurrences.length < MAX_OCCURRENCES_PER_WRITE) {
      occurrences.push(at);
      at = recurrence.next(at);
    }
    const plan = planOccurrences({
      due: occurrences,
      nowMs,
      missed: {
        policy: row.missedPolicy,
        grace: row.missedGrace,
        within: row.missedWithin,
        max: row.missedMax,
      },
      overlap: row.overlap,
      paused: row.paused,
      previousActive: row.lastJobActive,
    });
    const runs: ScheduleRunInput[] = plan.map(({ occurrence, outcome }) => {
      const iso = new Date(occurrence).toISOString();
      return {
        occurrence: new Date(occurrence),
        outcome,
        manual: false,
        job: makesJob(outcome)
          ? occurrenceJob(
              row,
              { id: row.id, occurrence: iso, late: outcome === "late", manual: false },
              occurrenceDedupKey(row.id, occurrence),
            )
          : null,
      };
    });
    const result = await this.store.scheduleAdvance({
      id: row.id,
      expect: { nextRunAt: row.nextRunAt, revision: row.revision },
      nextRunAt: at === null ? null : new Date(at),
      runs,
    });
    if (!result.advanced) {
      this.logger.debug(
        { schedule: row.id },
        "another scheduler took these occurrences first (or the schedule changed)",
      );
      return { taken: 0, next: null, lost: true };
    }
    let k = 0;
    for (const run of runs) {
      const jobId = run.job ? (result.jobs[k++]?.id ?? null) : null;
      this.report(row, run, jobId, nowMs);
    }
    if (at === null) this.logger.info({ schedule: row.id }, "schedule ended (no occurrence left)");
    return { taken: runs.length, next: at, lost: false };
  }

  private report(row: ScheduleRow, run: ScheduleRunInput, jobId: string | null, nowMs: number) {
    const occurrence = run.occurrence.toISOString();
    const lagSeconds = (nowMs - run.occurrence.getTime()) / 1000;
    const fields = {
      schedule: row.id,
      occurrence,
      outcome: run.outcome,
      job_id: jobId,
      job_name: row.jobName,
      lag_seconds: lagSeconds,
    };
    if (run.outcome === "enqueued") this.logger.debug(fields, "schedule occurrence enqueued");
    else if (run.outcome === "paused") this.logger.info(fields, "schedule occurrence paused");
    else this.logger.warn(fields, `schedule occurrence ${run.outcome}`);
    try {
      this.emit(fields);
    } catch (err) {
      this.logger.warn({ err, schedule: row.id }, "schedule event sink failed; ignored");
    }
  }
}
