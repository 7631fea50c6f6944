/**
 * The SQLite backend's schedule store: the {@link ScheduleStore} contract on `soniq_schedules`
 * and `soniq_schedule_runs` (migration 003). Every write that reads before it writes runs in one
 * `BEGIN IMMEDIATE` transaction, so the compare-and-set on the cursor, the jobs' insert and the
 * history rows commit together, exactly once across the processes sharing the file. Times are
 * INTEGER milliseconds from SQLite's clock.
 */
import type Database from "better-sqlite3";
import { SoniqError } from "../../errors.js";
import type { EnqueueResult, NewJob } from "../backend.js";
import type {
  AdvanceResult,
  AdvanceSchedule,
  DueSchedules,
  ScheduleRow,
  ScheduleRunRow,
  ScheduleSpec,
  ScheduleStore,
} from "../schedule-store.js";

/** What the store needs from its backend. */
export interface SqliteScheduleStorePort {
  /** Runs `fn` on the connection with the backend's busy retry (`fn` must be all-or-nothing). */
  use<T>(fn: (db: Database.Database) => T): Promise<T>;
  /** A cached prepared statement. */
  stmt(db: Database.Database, sql: string): Database.Statement;
  /** The database clock, ms since the epoch. */
  nowMs(db: Database.Database): number;
  /** Inserts jobs inside the caller's transaction; adds each queue that got a job to `queues`. */
  insertJobs(db: Database.Database, jobs: readonly NewJob[], queues: Set<string>): EnqueueResult[];
  /** Wakes this process's workers for `queue`. */
  wake(queue: string): void;
}

/** A `soniq_schedules` row joined with its last job's status, as better-sqlite3 returns it. */
interface ScheduleRecord {
  id: string;
  job_name: string;
  queue: string;
  priority: number;
  max_attempts: number;
  args: string;
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  start_at: number | null;
  end_at: number | null;
  missed_policy: string;
  missed_grace: number;
  missed_within: number;
  missed_max: number;
  overlap: string;
  history_limit: number;
  next_run_at: number | null;
  last_run_at: number | null;
  last_job_id: string | null;
  paused: number;
  revision: number;
  created_at: number;
  updated_at: number;
  last_job_status: string | null;
}

interface RunRecord {
  schedule_id: string;
  occurrence: number;
  outcome: string;
  job_id: string | null;
  manual: number;
  recorded_at: number;
}

const SELECT_SCHEDULE = `SELECT s.*, j.status AS last_job_status FROM soniq_schedules AS s
  LEFT JOIN soniq_jobs AS j ON j.id = s.last_job_id`;

/** Spec columns bound by name from {@link specParams}. */
const SPEC_COLUMNS = `job_name = @jobName, queue = @queue, priority = @priority,
  max_attempts = @maxAttempts, args = @args, cron = @cron, every_seconds = @everySeconds,
  timezone = @timezone, start_at = @startAt, end_at = @endAt, missed_policy = @missedPolicy,
  missed_grace = @missedGrace, missed_within = @missedWithin, missed_max = @missedMax,
  overlap = @overlap, history_limit = @historyLimit`;

const INSERT_SCHEDULE = `INSERT INTO soniq_schedules (id, job_name, queue, priority, max_attempts,
    args, cron, every_seconds, timezone, start_at, end_at, missed_policy, missed_grace,
    missed_within, missed_max, overlap, history_limit, next_run_at, created_at, updated_at)
  VALUES (@id, @jobName, @queue, @priority, @maxAttempts, @args, @cron, @everySeconds, @timezone,
    @startAt, @endAt, @missedPolicy, @missedGrace, @missedWithin, @missedMax, @overlap,
    @historyLimit, @nextRunAt, @now, @now)
  ON CONFLICT (id) DO NOTHING`;

const UPDATE_SCHEDULE = `UPDATE soniq_schedules SET ${SPEC_COLUMNS}, next_run_at = @nextRunAt,
    revision = revision + 1, updated_at = @now
  WHERE id = @id AND revision = @expectRevision`;

/** The compare-and-set on the cursor and the revision. */
const ADVANCE = `UPDATE soniq_schedules
  SET next_run_at = @nextRunAt, paused = COALESCE(@paused, paused),
      revision = revision + (CASE WHEN @paused IS NULL THEN 0 ELSE 1 END), updated_at = @now
  WHERE id = @id AND next_run_at IS @expectNext AND revision = @expectRevision`;

const SET_LAST = `UPDATE soniq_schedules
  SET last_run_at = COALESCE(@lastRunAt, last_run_at), last_job_id = COALESCE(@lastJobId, last_job_id)
  WHERE id = @id`;

const INSERT_RUN = `INSERT INTO soniq_schedule_runs
    (schedule_id, occurrence, outcome, job_id, manual, recorded_at)
  VALUES (@scheduleId, @occurrence, @outcome, @jobId, @manual, @now)`;

/** Keeps the newest `history_limit` rows of one schedule. */
const TRIM_RUNS = `DELETE FROM soniq_schedule_runs WHERE schedule_id = @id AND id <= (
    SELECT id FROM soniq_schedule_runs WHERE schedule_id = @id
    ORDER BY id DESC LIMIT 1 OFFSET (SELECT history_limit FROM soniq_schedules WHERE id = @id))`;

function specParams(spec: ScheduleSpec): Record<string, unknown> {
  return {
    id: spec.id,
    jobName: spec.jobName,
    queue: spec.queue,
    priority: spec.priority,
    maxAttempts: spec.maxAttempts,
    args: spec.args,
    cron: spec.cron,
    everySeconds: spec.everySeconds,
    timezone: spec.timezone,
    startAt: spec.startAt?.getTime() ?? null,
    endAt: spec.endAt?.getTime() ?? null,
    missedPolicy: spec.missedPolicy,
    missedGrace: spec.missedGrace,
    missedWithin: spec.missedWithin,
    missedMax: spec.missedMax,
    overlap: spec.overlap,
    historyLimit: spec.historyLimit,
  };
}

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

function toScheduleRow(r: ScheduleRecord): ScheduleRow {
  return {
    id: r.id,
    jobName: r.job_name,
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    args: r.args,
    cron: r.cron,
    everySeconds: r.every_seconds,
    timezone: r.timezone,
    startAt: date(r.start_at),
    endAt: date(r.end_at),
    // CHECK constraints keep these within their unions.
    missedPolicy: r.missed_policy as ScheduleRow["missedPolicy"],
    missedGrace: r.missed_grace,
    missedWithin: r.missed_within,
    missedMax: r.missed_max,
    overlap: r.overlap as ScheduleRow["overlap"],
    historyLimit: r.history_limit,
    nextRunAt: date(r.next_run_at),
    lastRunAt: date(r.last_run_at),
    lastJobId: r.last_job_id,
    lastJobActive: r.last_job_status === "queued" || r.last_job_status === "processing",
    paused: r.paused !== 0,
    revision: r.revision,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

/** See the module comment. */
export class SqliteScheduleStore implements ScheduleStore {
  constructor(private readonly port: SqliteScheduleStorePort) {}

  saveSchedule(
    spec: ScheduleSpec,
    nextRunAt: Date | null,
    expectRevision: number | null,
  ): Promise<boolean> {
    const { port } = this;
    return port.use((db) => {
      const params = {
        ...specParams(spec),
        nextRunAt: nextRunAt?.getTime() ?? null,
        now: port.nowMs(db),
      };
      const info =
        expectRevision === null
          ? port.stmt(db, INSERT_SCHEDULE).run(params)
          : port.stmt(db, UPDATE_SCHEDULE).run({ ...params, expectRevision });
      return info.changes > 0;
    });
  }

  getSchedule(id: string): Promise<ScheduleRow | null> {
    return this.port.use((db) => {
      const row = this.port.stmt(db, `${SELECT_SCHEDULE} WHERE s.id = ?`).get(id) as
        | ScheduleRecord
        | undefined;
      return row ? toScheduleRow(row) : null;
    });
  }

  listSchedules(): Promise<ScheduleRow[]> {
    return this.port.use((db) =>
      (this.port.stmt(db, `${SELECT_SCHEDULE} ORDER BY s.id`).all() as ScheduleRecord[]).map(
        toScheduleRow,
      ),
    );
  }

  dueSchedules(overdueSeconds: number): Promise<DueSchedules> {
    const { port } = this;
    return port.use((db) =>
      db.transaction(() => {
        const now = port.nowMs(db);
        const limit = now - Math.round(overdueSeconds * 1000);
        const due = port
          .stmt(db, `${SELECT_SCHEDULE} WHERE s.next_run_at <= ? ORDER BY s.next_run_at`)
          .all(limit) as ScheduleRecord[];
        const next = port
          .stmt(db, "SELECT min(next_run_at) AS next FROM soniq_schedules WHERE next_run_at > ?")
          .get(limit) as { next: number | null };
        return { now: new Date(now), due: due.map(toScheduleRow), nextDueAt: date(next.next) };
      })(),
    );
  }

  async advanceSchedule(params: AdvanceSchedule): Promise<AdvanceResult> {
    const { port } = this;
    const queues = new Set<string>();
    const result = await port.use((db) =>
      db
        .transaction((): AdvanceResult => {
          const now = port.nowMs(db);
          const cas = port.stmt(db, ADVANCE).run({
            id: params.id,
            nextRunAt: params.nextRunAt?.getTime() ?? null,
            paused: params.paused === undefined ? null : params.paused ? 1 : 0,
            expectNext: params.expect.nextRunAt?.getTime() ?? null,
            expectRevision: params.expect.revision,
            now,
          });
          if (cas.changes === 0) return { advanced: false, jobs: [] };
          const jobs = params.runs.flatMap((run) => (run.job ? [run.job] : []));
          const results = jobs.length > 0 ? port.insertJobs(db, jobs, queues) : [];
          const insertRun = port.stmt(db, INSERT_RUN);
          let k = 0;
          let lastRunAt: number | null = null;
          let lastJobId: string | null = null;
          for (const run of params.runs) {
            const jobId = run.job ? (results[k++]?.id ?? null) : null;
            insertRun.run({
              scheduleId: params.id,
              occurrence: run.occurrence.getTime(),
              outcome: run.outcome,
              jobId,
              manual: run.manual ? 1 : 0,
              now,
            });
            if (!run.manual) lastRunAt = run.occurrence.getTime();
            if (jobId !== null) lastJobId = jobId;
          }
          if (params.runs.length > 0) {
            port.stmt(db, SET_LAST).run({ id: params.id, lastRunAt, lastJobId });
            port.stmt(db, TRIM_RUNS).run({ id: params.id });
          }
          return { advanced: true, jobs: results };
        })
        .immediate(),
    );
    for (const queue of queues) port.wake(queue);
    return result;
  }

  removeSchedule(id: string): Promise<boolean> {
    return this.port.use((db) =>
      db
        .transaction(() => {
          this.port.stmt(db, "DELETE FROM soniq_schedule_runs WHERE schedule_id = ?").run(id);
          return this.port.stmt(db, "DELETE FROM soniq_schedules WHERE id = ?").run(id).changes > 0;
        })
        .immediate(),
    );
  }

  scheduleRuns(id: string, limit: number): Promise<ScheduleRunRow[]> {
    if (!Number.isInteger(limit) || limit < 0) {
      return Promise.reject(
        new SoniqError("INVALID_OPTION", `limit must be an integer >= 0, got ${limit}`),
      );
    }
    return this.port.use((db) =>
      (
        this.port
          .stmt(
            db,
            "SELECT * FROM soniq_schedule_runs WHERE schedule_id = ? ORDER BY id DESC LIMIT ?",
          )
          .all(id, limit) as RunRecord[]
      ).map((r) => ({
        scheduleId: r.schedule_id,
        occurrence: new Date(r.occurrence),
        outcome: r.outcome as ScheduleRunRow["outcome"],
        jobId: r.job_id,
        manual: r.manual !== 0,
        recordedAt: new Date(r.recorded_at),
      })),
    );
  }
}
