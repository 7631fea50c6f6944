/**
 * The SQLite backend's schedule store: the {@link ScheduleStore} contract on `soniq_schedules`
 * and `soniq_schedule_runs` (migration 003). Every write that reads before it writes runs in one
 * `BEGIN IMMEDIATE` transaction, so the compare-and-set on the cursor, the jobs' insert and the
 * history rows commit together, exactly once across the processes sharing the file. Times are
 * INTEGER milliseconds from SQLite's clock.
 */
import { SoniqError } from "../../errors.js";
import type {
  DueSchedules,
  EnqueueResult,
  NewJob,
  ScheduleAdvanceParams,
  ScheduleAdvanceResult,
  ScheduleDueParams,
  ScheduleIdParams,
  ScheduleRow,
  ScheduleRunRow,
  ScheduleRunsParams,
  ScheduleSaveParams,
  ScheduleSpec,
  ScheduleStore,
} from "../contract/index.js";
import type { SqliteSession } from "./connection.js";

/** What the store needs from its backend. */
export interface SqliteScheduleStorePort {
  /** Runs `fn` with the connection's session and its busy retry (`fn` must be all-or-nothing). */
  use<T>(fn: (session: SqliteSession) => T): Promise<T>;
  /** Inserts jobs (transactions.ts `insertJobs`; a savepoint inside the caller's transaction). */
  insertJobs(
    session: SqliteSession,
    jobs: readonly NewJob[],
  ): { results: EnqueueResult[]; queues: Set<string> };
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
  job_version: number;
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

function specParams(spec: ScheduleSpec): Record<string, unknown> {
  return {
    id: spec.id,
    jobName: spec.jobName,
    queue: spec.queue,
    priority: spec.priority,
    maxAttempts: spec.maxAttempts,
    args: spec.args,
    jobVersion: spec.jobVersion ?? 1,
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
    jobVersion: r.job_version,
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

/** See the module comment. Every statement is a named entry of the catalogue (sql.ts). */
export class SqliteScheduleStore implements ScheduleStore {
  constructor(private readonly port: SqliteScheduleStorePort) {}

  scheduleSave({ spec, nextRunAt, expectRevision }: ScheduleSaveParams): Promise<boolean> {
    return this.port.use((s) => {
      const params = {
        ...specParams(spec),
        nextRunAt: nextRunAt?.getTime() ?? null,
        now: s.nowMs(),
      };
      const info =
        expectRevision === null
          ? s.statement("insertSchedule").run(params)
          : s.statement("updateSchedule").run({ ...params, expectRevision });
      return info.changes > 0;
    });
  }

  scheduleGet({ id }: ScheduleIdParams): Promise<ScheduleRow | null> {
    return this.port.use((s) => {
      const row = s.statement("getSchedule").get({ id }) as ScheduleRecord | undefined;
      return row ? toScheduleRow(row) : null;
    });
  }

  scheduleList(): Promise<ScheduleRow[]> {
    return this.port.use((s) =>
      (s.statement("listSchedules").all() as ScheduleRecord[]).map(toScheduleRow),
    );
  }

  scheduleDue({ overdueSeconds }: ScheduleDueParams): Promise<DueSchedules> {
    return this.port.use((s) =>
      s.db.transaction(() => {
        const now = s.nowMs();
        const limit = now - Math.round(overdueSeconds * 1000);
        const due = s.statement("dueSchedules").all({ limit }) as ScheduleRecord[];
        const next = s.statement("nextScheduleAfter").get({ limit }) as { next: number | null };
        return { now: new Date(now), due: due.map(toScheduleRow), nextDueAt: date(next.next) };
      })(),
    );
  }

  async scheduleAdvance(params: ScheduleAdvanceParams): Promise<ScheduleAdvanceResult> {
    const { port } = this;
    let queues = new Set<string>();
    const result = await port.use((s) =>
      s.immediate((): ScheduleAdvanceResult => {
        const now = s.nowMs();
        const cas = s.statement("advanceSchedule").run({
          id: params.id,
          nextRunAt: params.nextRunAt?.getTime() ?? null,
          paused: params.paused === undefined ? null : params.paused ? 1 : 0,
          expectNext: params.expect.nextRunAt?.getTime() ?? null,
          expectRevision: params.expect.revision,
          now,
        });
        if (cas.changes === 0) return { advanced: false, jobs: [] };
        const jobs = params.runs.flatMap((run) => (run.job ? [run.job] : []));
        let results: EnqueueResult[] = [];
        if (jobs.length > 0) {
          const inserted = port.insertJobs(s, jobs);
          results = inserted.results;
          queues = inserted.queues;
        }
        const insertRun = s.statement("insertScheduleRun");
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
          s.statement("setScheduleLast").run({ id: params.id, lastRunAt, lastJobId });
          s.statement("trimScheduleRuns").run({ id: params.id });
        }
        return { advanced: true, jobs: results };
      }),
    );
    for (const queue of queues) port.wake(queue);
    return result;
  }

  scheduleRemove({ id }: ScheduleIdParams): Promise<boolean> {
    return this.port.use((s) =>
      s.immediate(() => {
        s.statement("deleteScheduleRuns").run({ id });
        return s.statement("deleteSchedule").run({ id }).changes > 0;
      }),
    );
  }

  scheduleRuns({ id, limit }: ScheduleRunsParams): Promise<ScheduleRunRow[]> {
    if (!Number.isInteger(limit) || limit < 0) {
      return Promise.reject(
        new SoniqError("INVALID_OPTION", `limit must be an integer >= 0, got ${limit}`),
      );
    }
    return this.port.use((s) =>
      (s.statement("scheduleRuns").all({ id, limit }) as RunRecord[]).map((r) => ({
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
