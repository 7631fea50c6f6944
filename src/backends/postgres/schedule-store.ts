/**
 * The PostgreSQL backend's schedule store: the {@link ScheduleStore} contract on
 * `soniq_schedules` and `soniq_schedule_runs` (migration 004). The exactly-once write is one
 * transaction: the compare-and-set `UPDATE … WHERE next_run_at IS NOT DISTINCT FROM $expected AND
 * revision = $revision` (row-locked, so a concurrent scheduler waits, then matches nothing), the
 * jobs' insert with their dedup keys, the history rows and the trim. Every time is `now()`.
 */
import type pg from "pg";
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
import { quoteIdent } from "./identifiers.js";

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

/** The statements, schema-qualified. Parameters are documented on each. */
function statements(schema: string) {
  const s = quoteIdent(schema);
  const schedules = `${s}.soniq_schedules`;
  const runs = `${s}.soniq_schedule_runs`;
  const jobs = `${s}.soniq_jobs`;
  const select = `SELECT sc.id, sc.job_name, sc.queue, sc.priority, sc.max_attempts,
      sc.args::text AS args, sc.cron, sc.every_seconds, sc.timezone, sc.start_at, sc.end_at,
      sc.missed_policy, sc.missed_grace, sc.missed_within, sc.missed_max, sc.overlap,
      sc.history_limit, sc.next_run_at, sc.last_run_at, sc.last_job_id::text AS last_job_id,
      sc.paused, sc.revision, sc.created_at, sc.updated_at,
      COALESCE(j.status IN ('queued', 'processing'), false) AS last_job_active
    FROM ${schedules} AS sc LEFT JOIN ${jobs} AS j ON j.id = sc.last_job_id`;
  return {
    /** `$1` id → one row. */
    get: `${select} WHERE sc.id = $1`,
    /** → every row by id. */
    list: `${select} ORDER BY sc.id`,
    /**
     * `$1` overdue seconds → `now`, the ids due by `now - $1` (cursor order) and the earliest
     * cursor after it.
     */
    due: `SELECT now() AS now,
        (SELECT min(next_run_at) FROM ${schedules}
          WHERE next_run_at > now() - make_interval(secs => $1)) AS next_due_at,
        COALESCE((SELECT json_agg(d.id ORDER BY d.next_run_at) FROM ${schedules} AS d
          WHERE d.next_run_at <= now() - make_interval(secs => $1)), '[]'::json)::text AS ids`,
    /** `$1` ids text[] → those rows. */
    byIds: `${select} WHERE sc.id = ANY($1::text[]) ORDER BY sc.next_run_at`,
    /**
     * `$1`…`$17` the spec (id, job_name, queue, priority, max_attempts, args, cron, every_seconds,
     * timezone, start_at, end_at, missed_policy, missed_grace, missed_within, missed_max, overlap,
     * history_limit), `$18` next_run_at → inserted only when the id is free.
     */
    insert: `INSERT INTO ${schedules} (id, job_name, queue, priority, max_attempts, args, cron,
        every_seconds, timezone, start_at, end_at, missed_policy, missed_grace, missed_within,
        missed_max, overlap, history_limit, next_run_at)
      VALUES ($1, $2, $3, $4, $5, $6::json, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
      ON CONFLICT (id) DO NOTHING`,
    /** As `insert`, plus `$19` expected revision → updated (revision + 1) when it matches. */
    update: `UPDATE ${schedules} SET job_name = $2, queue = $3, priority = $4, max_attempts = $5,
        args = $6::json, cron = $7, every_seconds = $8, timezone = $9, start_at = $10,
        end_at = $11, missed_policy = $12, missed_grace = $13, missed_within = $14,
        missed_max = $15, overlap = $16, history_limit = $17, next_run_at = $18,
        revision = revision + 1, updated_at = now()
      WHERE id = $1 AND revision = $19`,
    /**
     * The compare-and-set: `$1` id, `$2` new cursor, `$3` paused (NULL = unchanged), `$4`
     * expected cursor, `$5` expected revision → one row when taken.
     */
    advance: `UPDATE ${schedules}
      SET next_run_at = $2, paused = COALESCE($3, paused),
          revision = revision + (CASE WHEN $3::boolean IS NULL THEN 0 ELSE 1 END), updated_at = now()
      WHERE id = $1 AND next_run_at IS NOT DISTINCT FROM $4::timestamptz AND revision = $5`,
    /**
     * `$1` id, `$2` occurrences timestamptz[], `$3` outcomes text[], `$4` job ids uuid[], `$5`
     * manual bool[], `$6` last occurrence (NULL = keep), `$7` last job id (NULL = keep): records
     * the runs, sets `last_*` and trims the history to `history_limit`.
     */
    record: `WITH added AS (
        INSERT INTO ${runs} (schedule_id, occurrence, outcome, job_id, manual)
        SELECT $1, o, oc, j, m FROM unnest($2::timestamptz[], $3::text[], $4::uuid[], $5::bool[])
          WITH ORDINALITY AS t(o, oc, j, m, ord)
        ORDER BY ord
        RETURNING id
      ), last AS (
        UPDATE ${schedules} SET last_run_at = COALESCE($6, last_run_at),
          last_job_id = COALESCE($7::uuid, last_job_id)
        WHERE id = $1 RETURNING history_limit
      )
      DELETE FROM ${runs} WHERE schedule_id = $1 AND id <= (
        SELECT id FROM (
          SELECT id FROM ${runs} WHERE schedule_id = $1
          UNION ALL SELECT id FROM added
        ) AS every_run ORDER BY id DESC LIMIT 1 OFFSET (SELECT history_limit FROM last))`,
    /** `$1` id → deletes the row and its history; one row returned when it existed. */
    remove: `WITH gone AS (DELETE FROM ${runs} WHERE schedule_id = $1)
      DELETE FROM ${schedules} WHERE id = $1 RETURNING id`,
    /** `$1` id, `$2` limit → newest first. */
    runs: `SELECT schedule_id, occurrence, outcome, job_id::text AS job_id, manual, recorded_at
      FROM ${runs} WHERE schedule_id = $1 ORDER BY id DESC LIMIT $2`,
  };
}

function toScheduleRow(r: RawSchedule): ScheduleRow {
  return {
    id: r.id,
    jobName: r.job_name,
    queue: r.queue,
    priority: r.priority,
    maxAttempts: r.max_attempts,
    args: r.args,
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

/** See the module comment. */
export class PgScheduleStore implements ScheduleStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    schema: string,
    private readonly port: PgScheduleStorePort,
  ) {
    this.sql = statements(schema);
  }

  async saveSchedule(
    spec: ScheduleSpec,
    nextRunAt: Date | null,
    expectRevision: number | null,
  ): Promise<boolean> {
    const values = specValues(spec, nextRunAt);
    const { rowCount } =
      expectRevision === null
        ? await this.port.query(this.sql.insert, values)
        : await this.port.query(this.sql.update, [...values, expectRevision]);
    return rowCount > 0;
  }

  async getSchedule(id: string): Promise<ScheduleRow | null> {
    const { rows } = await this.port.query<RawSchedule>(this.sql.get, [id]);
    return rows[0] ? toScheduleRow(rows[0]) : null;
  }

  async listSchedules(): Promise<ScheduleRow[]> {
    const { rows } = await this.port.query<RawSchedule>(this.sql.list, []);
    return rows.map(toScheduleRow);
  }

  async dueSchedules(overdueSeconds: number): Promise<DueSchedules> {
    const { rows } = await this.port.query<{ now: Date; next_due_at: Date | null; ids: string }>(
      this.sql.due,
      [overdueSeconds],
    );
    const head = rows[0];
    if (!head) throw new Error("the due-schedules query returned no row");
    const ids = JSON.parse(head.ids) as string[];
    const due =
      ids.length === 0
        ? []
        : (await this.port.query<RawSchedule>(this.sql.byIds, [ids])).rows.map(toScheduleRow);
    return { now: head.now, due, nextDueAt: head.next_due_at };
  }

  async advanceSchedule(params: AdvanceSchedule): Promise<AdvanceResult> {
    const queues = new Set<string>();
    const result = await this.port.transaction(async (client): Promise<AdvanceResult> => {
      const cas = await client.query(this.sql.advance, [
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
        await client.query(this.sql.record, [
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

  async removeSchedule(id: string): Promise<boolean> {
    return (await this.port.query(this.sql.remove, [id])).rowCount > 0;
  }

  async scheduleRuns(id: string, limit: number): Promise<ScheduleRunRow[]> {
    const { rows } = await this.port.query<RawRun>(this.sql.runs, [id, limit]);
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
