/**
 * Runtime management of schedules (`soniq.schedules`, and through it `soniq schedules …`): list,
 * show with the next instants and history, preview an expression, pause, resume (no backfill),
 * run now, remove and sync. The same rows on every backend; no cache — each call reads the
 * database. Pause, resume and run-now go through the store's compare-and-set like a tick, so they
 * never race one.
 */
import { randomUUID } from "node:crypto";
import type {
  Backend,
  ScheduleAdvanceParams,
  ScheduleRow,
  ScheduleRunRow,
} from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import { valueText } from "../value-text.js";
import { manualDedupKey } from "./outcomes.js";
import { reconcileSchedules, type SyncReport } from "./reconcile.js";
import { between, compileRecurrence, type Timing, upcoming } from "./recurrence.js";
import { recurrenceOf, type ScheduleDefinition } from "./schedule-definition.js";
import { MAX_OCCURRENCES_PER_WRITE, occurrenceJob } from "./scheduler.js";

/** A schedule with its next instants and recent history. */
export interface ScheduleDetails {
  schedule: ScheduleRow;
  /** The next occurrences from the cursor on (the cursor first). */
  upcoming: Date[];
  /** History, newest first. */
  runs: ScheduleRunRow[];
}

/** What {@link ScheduleAdmin.preview} takes: exactly one of `cron` and `every` (seconds). */
export interface PreviewOptions {
  cron?: string;
  every?: number;
  /** IANA zone of `cron` (default UTC). */
  timezone?: string;
  /** How many instants (default 5, at most 1000). */
  count?: number;
  /** Start after this instant (default: the database's now). */
  from?: Date;
}

/** Tries of a conditional write that lost to a concurrent tick before giving up. */
const TRIES = 10;

/** What the admin facade needs from the instance. */
export interface ScheduleAdminPort {
  backend(): Promise<Backend>;
  logger: Logger;
  /** The schedules declared on the instance. */
  definitions(): Iterable<ScheduleDefinition>;
  /** Called after a change so this process's scheduler looks again at once. */
  changed(): void;
}

/** See the module comment. Reached as `soniq.schedules`. */
export class ScheduleAdmin {
  constructor(private readonly port: ScheduleAdminPort) {}

  private async store() {
    return this.port.backend();
  }

  /** Every schedule row, by id. */
  async list(): Promise<ScheduleRow[]> {
    return (await this.store()).scheduleList();
  }

  /**
   * One schedule with its next `next` instants (default 5) and its newest `runs` history rows
   * (default 20), each at most 1000.
   * @throws SoniqError `NOT_FOUND`; `INVALID_OPTION` for a count that is not an integer in range.
   */
  async show(id: string, options: { next?: number; runs?: number } = {}): Promise<ScheduleDetails> {
    if (typeof options !== "object" || options === null) {
      throw new SoniqError("INVALID_OPTION", "show options must be { next?, runs? }");
    }
    const count = countOption("next", options.next ?? 5, 0);
    const runs = countOption("runs", options.runs ?? 20, 1);
    const store = await this.store();
    const schedule = await store.scheduleGet({ id });
    if (!schedule) throw notFound(id);
    const upcomingDates =
      schedule.nextRunAt === null
        ? []
        : [
            schedule.nextRunAt,
            ...upcoming(recurrenceOf(schedule), schedule.nextRunAt.getTime(), count - 1).map(
              (ms) => new Date(ms),
            ),
          ].slice(0, count);
    return {
      schedule,
      upcoming: upcomingDates,
      runs: await store.scheduleRuns({ id, limit: runs }),
    };
  }

  /**
   * The next instants of an expression, without storing anything.
   * @throws SoniqError `INVALID_SCHEDULE` for a bad expression, zone, `every`, count or `from`.
   */
  async preview(options: PreviewOptions): Promise<Date[]> {
    if (typeof options !== "object" || options === null) {
      throw new SoniqError("INVALID_SCHEDULE", "preview options must be { cron | every, … }");
    }
    const count = options.count ?? 5;
    if (!Number.isInteger(count) || count < 1 || count > 1000) {
      throw new SoniqError(
        "INVALID_SCHEDULE",
        `count must be an integer 1..1000, got ${valueText(count)}`,
      );
    }
    if (
      options.from !== undefined &&
      !(options.from instanceof Date && !Number.isNaN(options.from.getTime()))
    ) {
      throw new SoniqError(
        "INVALID_SCHEDULE",
        `from must be a valid Date, got ${valueText(options.from)}`,
      );
    }
    if ((options.cron === undefined) === (options.every === undefined)) {
      throw new SoniqError("INVALID_SCHEDULE", "give exactly one of cron and every");
    }
    const timing: Timing =
      options.cron !== undefined
        ? { kind: "cron", expression: options.cron, timezone: options.timezone ?? "UTC" }
        : { kind: "every", seconds: options.every as number };
    const recurrence = compileRecurrence(timing);
    const from = options.from ?? (await (await this.port.backend()).now());
    return upcoming(recurrence, from.getTime(), count).map((ms) => new Date(ms));
  }

  /**
   * Pauses a schedule: its occurrences are recorded `paused` until it is resumed. Idempotent.
   * @throws SoniqError `NOT_FOUND`.
   */
  async pause(id: string): Promise<void> {
    await this.conditional(id, async (row) => {
      if (row.paused) return null;
      return { nextRunAt: row.nextRunAt, paused: true, runs: [] };
    });
    this.port.logger.info({ schedule: id }, "schedule paused");
    this.port.changed();
  }

  /**
   * Resumes a paused schedule without backfilling: occurrences of the paused period not yet
   * recorded are recorded `paused`, and the cursor moves to the first occurrence after the
   * database's now. Idempotent. @throws SoniqError `NOT_FOUND`.
   */
  async resume(id: string): Promise<void> {
    const backend = await this.port.backend();
    await this.conditional(id, async (row) => {
      if (!row.paused) return null;
      const now = (await backend.now()).getTime();
      const recurrence = recurrenceOf(row);
      const passed =
        row.nextRunAt === null
          ? []
          : between(recurrence, row.nextRunAt.getTime() - 1, now, MAX_OCCURRENCES_PER_WRITE)
              .occurrences;
      const next = recurrence.next(now);
      return {
        nextRunAt: row.nextRunAt === null ? null : next === null ? null : new Date(next),
        paused: false,
        runs: passed.map((ms) => ({
          occurrence: new Date(ms),
          outcome: "paused" as const,
          manual: false,
          job: null,
        })),
      };
    });
    this.port.logger.info(
      { schedule: id },
      "schedule resumed (the paused period is not backfilled)",
    );
    this.port.changed();
  }

  /**
   * Enqueues one job for the schedule now (`ctx.schedule.manual` true; dedup key
   * `schedule:<id>:manual:<uuid>`), recorded in its history; the cursor is unchanged. Works on a
   * paused schedule. @returns the job id. @throws SoniqError `NOT_FOUND`.
   */
  async runNow(id: string): Promise<string> {
    const backend = await this.port.backend();
    const result = await this.conditional(id, async (row) => {
      const now = await backend.now();
      const job = occurrenceJob(
        row,
        { id: row.id, occurrence: now.toISOString(), late: false, manual: true },
        manualDedupKey(row.id, randomUUID()),
      );
      return {
        nextRunAt: row.nextRunAt,
        runs: [{ occurrence: now, outcome: "enqueued" as const, manual: true, job }],
      };
    });
    const jobId = result?.jobs[0]?.id;
    if (jobId === undefined) throw new Error(`run now of schedule ${id} enqueued nothing`);
    this.port.logger.info({ schedule: id, job_id: jobId }, "schedule run now");
    return jobId;
  }

  /** Deletes a schedule and its history (a declared one comes back at the next sync). @throws SoniqError `NOT_FOUND`. */
  async remove(id: string): Promise<void> {
    if (!(await (await this.store()).scheduleRemove({ id }))) throw notFound(id);
    this.port.logger.info({ schedule: id }, "schedule removed");
    this.port.changed();
  }

  /**
   * Reconciles the declared schedules into the table (see reconcile.ts); `prune` deletes rows no
   * definition declares. @throws SoniqError `INVALID_ARGS` (nothing written).
   */
  async sync(options: { prune?: boolean } = {}): Promise<SyncReport> {
    const report = await reconcileSchedules(
      await this.port.backend(),
      this.port.definitions(),
      this.port.logger,
      options,
    );
    this.port.changed();
    return report;
  }

  /**
   * History of one schedule, newest first, at most `limit` rows (1–1000).
   * @throws SoniqError `INVALID_OPTION` for a bad limit.
   */
  async runs(id: string, limit = 100): Promise<ScheduleRunRow[]> {
    return (await this.store()).scheduleRuns({ id, limit: countOption("limit", limit, 1) });
  }

  /** Re-reads the row and retries the compare-and-set until it holds (or `build` says no change). */
  private async conditional(
    id: string,
    build: (row: ScheduleRow) => Promise<{
      nextRunAt: Date | null;
      paused?: boolean;
      runs: ScheduleAdvanceParams["runs"];
    } | null>,
  ) {
    const store = await this.store();
    for (let attempt = 0; attempt < TRIES; attempt += 1) {
      const row = await store.scheduleGet({ id });
      if (!row) throw notFound(id);
      const change = await build(row);
      if (change === null) return null;
      const result = await store.scheduleAdvance({
        id,
        expect: { nextRunAt: row.nextRunAt, revision: row.revision },
        ...change,
      });
      if (result.advanced) return result;
    }
    throw new Error(`schedule ${id} kept changing; try again`);
  }
}

/**
 * A count option: an integer from `min` to 1000.
 * @throws SoniqError `INVALID_OPTION`.
 */
function countOption(name: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > 1000) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${name} must be an integer from ${min} to 1000, got ${valueText(value)}`,
    );
  }
  return value;
}

function notFound(id: string): SoniqError {
  return new SoniqError("NOT_FOUND", `no schedule with id ${JSON.stringify(id)}`);
}
