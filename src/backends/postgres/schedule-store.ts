/**
 * The PostgreSQL backend's schedule store: the {@link ScheduleStore} contract on
 * `soniq_schedules` and `soniq_schedule_runs` (migration 004), over the named statements of the
 * catalogue (sql.ts `scheduleStatements`). The exactly-once write is one
 * transaction: the compare-and-set `UPDATE … WHERE next_run_at IS NOT DISTINCT FROM $expected AND
 * revision = $revision` (row-locked, so a concurrent scheduler waits, then matches nothing), the
 * jobs' insert with their dedup keys, the history rows and the trim. Every time is `now()`.
 */
import type pg from "pg";
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
import type { Statements } from "./sql.js";

/** What the store needs from its backend. */
export interface PgScheduleStorePort {
  /** Runs one statement on the pool (named prepared statement). */
  query<R>(text: string, values: unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /** Runs `fn` inside `BEGIN … COMMIT` on one pool client (ROLLBACK when it throws). */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** The backend's enqueue on `client` (inside its transaction). */
  insertJobs(jobs: readonly NewJob[], client: pg.PoolClient): Promise<EnqueueResult[]>;
  /** Wakes this process's workers for `queue` (after the commit). */
  wake(queue: string): void;
}

/** A selected schedule row (see {@link SELECT}). */
interface RawSchedule {
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
  start_at: Date | null;
  end_at: Date | null;
  missed_policy: string;
  missed_grace: number;
  missed_within: number;
  missed_max: number;
  overlap: string;
  history_limit: number;
  next_run_at: Date | null;
  last_run_at: Date | null;
  last_job_id: string | null;
  paused: boolean;
  revision: number;
  created_at: Date;
  updated_at: Date;
  last_job_active: boolean;
}

interface RawRun {
  schedule_id: string;
  occurrence: Date;
  outcome: string;
  job_id: string | null;
  manual: boolean;
  recorded_at: Date;
}

function toScheduleRow(r: RawSchedule): ScheduleRow {
  return {
    id: r.id,
    jobName: r.job_name,
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    args: r.args,
    jobVersion: r.job_version,
    cron: r.cron,
    everySeconds: r.every_seconds === null ? null : Number(r.every_seconds),
    timezone: r.timezone,
    startAt: r.start_at,
    endAt: r.end_at,
    // CHECK constraints keep these within their unions.
    missedPolicy: r.missed_policy as ScheduleRow["missedPolicy"],
    missedGrace: Number(r.missed_grace),
    missedWithin: Number(r.missed_within),
    missedMax: r.missed_max,
    overlap: r.overlap as ScheduleRow["overlap"],
    historyLimit: r.history_limit,
    nextRunAt: r.next_run_at,
    lastRunAt: r.last_run_at,
    lastJobId: r.last_job_id,
    lastJobActive: r.last_job_active === true,
    paused: r.paused === true,
    revision: r.revision,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function specValues(spec: ScheduleSpec, nextRunAt: Date | null): unknown[] {
  return [
    spec.id,
    spec.jobName,
    spec.queue,
    spec.priority,
    spec.maxAttempts,
    spec.args,
    spec.cron,
    spec.everySeconds,
    spec.timezone,
    spec.startAt,
    spec.endAt,
    spec.missedPolicy,
    spec.missedGrace,
    spec.missedWithin,
    spec.missedMax,
    spec.overlap,
    spec.historyLimit,
    nextRunAt,
  ];
}

/**
 * An id PostgreSQL text cannot hold (U+0000): no stored schedule has it, so a lookup by it finds
 * nothing (the schedule admin answers NOT_FOUND, as on every other store) rather than reaching
 * the server, which refuses the parameter (INVALID_INPUT).
 */
function unstorable(id: string): boolean {
  return typeof id === "string" && id.includes("\u0000");
}

/** See the module comment. */
export class PgScheduleStore implements ScheduleStore {
  constructor(
    private readonly sql: Statements,
    private readonly port: PgScheduleStorePort,
  ) {}

  async scheduleSave({ spec, nextRunAt, expectRevision }: ScheduleSaveParams): Promise<boolean> {
    const values = specValues(spec, nextRunAt);
    const { rowCount } =
      expectRevision === null
        ? await this.port.query(this.sql.insertSchedule, [...values, spec.jobVersion ?? 1])
        : await this.port.query(this.sql.updateSchedule, [
            ...values,
            expectRevision,
            spec.jobVersion ?? 1,
          ]);
    return rowCount > 0;
  }

  async scheduleGet({ id }: ScheduleIdParams): Promise<ScheduleRow | null> {
    if (unstorable(id)) return null;
    const { rows } = await this.port.query<RawSchedule>(this.sql.getSchedule, [id]);
    return rows[0] ? toScheduleRow(rows[0]) : null;
  }

  async scheduleList(): Promise<ScheduleRow[]> {
    const { rows } = await this.port.query<RawSchedule>(this.sql.listSchedules, []);
    return rows.map(toScheduleRow);
  }

  async scheduleDue({ overdueSeconds }: ScheduleDueParams): Promise<DueSchedules> {
    const { rows } = await this.port.query<{ now: Date; next_due_at: Date | null; ids: string }>(
      this.sql.dueSchedules,
      [overdueSeconds],
    );
    const head = rows[0];
    if (!head) throw new Error("the due-schedules query returned no row");
    const ids = JSON.parse(head.ids) as string[];
    const due =
      ids.length === 0
        ? []
        : (await this.port.query<RawSchedule>(this.sql.schedulesByIds, [ids])).rows.map(
            toScheduleRow,
          );
    return { now: head.now, due, nextDueAt: head.next_due_at };
  }

  async scheduleAdvance(params: ScheduleAdvanceParams): Promise<ScheduleAdvanceResult> {
    const queues = new Set<string>();
    const result = await this.port.transaction(async (client): Promise<ScheduleAdvanceResult> => {
      const cas = await client.query(this.sql.advanceSchedule, [
        params.id,
        params.nextRunAt,
        params.paused ?? null,
        params.expect.nextRunAt,
        params.expect.revision,
      ]);
      if ((cas.rowCount ?? 0) === 0) return { advanced: false, jobs: [] };
      const jobs = params.runs.flatMap((run) => (run.job ? [run.job] : []));
      const results = jobs.length > 0 ? await this.port.insertJobs(jobs, client) : [];
      for (const job of jobs) queues.add(job.queue);
      if (params.runs.length > 0) {
        let k = 0;
        const jobIds: Array<string | null> = [];
        let lastRunAt: Date | null = null;
        let lastJobId: string | null = null;
        for (const run of params.runs) {
          const jobId = run.job ? (results[k++]?.id ?? null) : null;
          jobIds.push(jobId);
          if (!run.manual) lastRunAt = run.occurrence;
          if (jobId !== null) lastJobId = jobId;
        }
        await client.query(this.sql.recordScheduleRuns, [
          params.id,
          params.runs.map((run) => run.occurrence.toISOString()),
          params.runs.map((run) => run.outcome),
          jobIds,
          params.runs.map((run) => run.manual),
          lastRunAt,
          lastJobId,
        ]);
      }
      return { advanced: true, jobs: results };
    });
    // Committed: the insert trigger's NOTIFY reaches other processes; wake this one directly.
    for (const queue of queues) this.port.wake(queue);
    return result;
  }

  async scheduleRemove({ id }: ScheduleIdParams): Promise<boolean> {
    if (unstorable(id)) return false;
    return (await this.port.query(this.sql.removeSchedule, [id])).rowCount > 0;
  }

  async scheduleRuns({ id, limit }: ScheduleRunsParams): Promise<ScheduleRunRow[]> {
    if (unstorable(id)) return [];
    const { rows } = await this.port.query<RawRun>(this.sql.scheduleRuns, [id, limit]);
    return rows.map((r) => ({
      scheduleId: r.schedule_id,
      occurrence: r.occurrence,
      outcome: r.outcome as ScheduleRunRow["outcome"],
      jobId: r.job_id,
      manual: r.manual,
      recordedAt: r.recorded_at,
    }));
  }
}
