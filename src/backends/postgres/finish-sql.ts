/**
 * The move of a finished job out of the hot table, as SQL fragments the PostgreSQL statements
 * share (docs/backends.md, "Two tables: live jobs and finished jobs"). A finishing write deletes
 * the live row from `soniq_jobs` in a CTE (`DELETE … RETURNING *`, fenced as before); these
 * fragments then, in the same statement, write it to `soniq_finished_jobs` (unless the retention
 * is 0), hold or release its dedup key and count it (`soniq_job_counts`), so a refused fence
 * moves nothing, nothing is ever in two tables, and the counts change with the rows.
 */

/**
 * The columns of `soniq_jobs` and `soniq_finished_jobs`, in table order (the two tables have the
 * same columns: migrations 010, 012 and 017).
 */
export const JOB_TABLE_COLUMNS = [
  "id",
  "name",
  "queue",
  "args",
  "status",
  "priority",
  "attempts",
  "max_attempts",
  "interruptions",
  "scheduled_at",
  "created_at",
  "updated_at",
  "started_at",
  "finished_at",
  "worker_id",
  "claim_token",
  "last_error",
  "result",
  "result_expires_at",
  "dedup_key",
  "meta",
  "start_known",
  "uncharged_recoveries",
  "trace_context",
  "version",
  "checkpoint",
  "steps",
] as const;

/** A column of the job tables. */
export type JobTableColumn = (typeof JOB_TABLE_COLUMNS)[number];

/**
 * `INSERT INTO into (every column) SELECT … FROM from`: each column copied from `from`, except
 * those `set` gives an expression for; `where` (optional) filters the rows.
 */
export function copyJobRows(
  into: string,
  from: string,
  set: Partial<Record<JobTableColumn, string>>,
  where?: string,
): string {
  const values = JOB_TABLE_COLUMNS.map((c) => set[c] ?? c).join(", ");
  return `INSERT INTO ${into} (${JOB_TABLE_COLUMNS.join(", ")})
        SELECT ${values} FROM ${from}${where ? ` WHERE ${where}` : ""}`;
}

/** What {@link finishMove} writes. */
export interface FinishMove {
  /** `soniq_finished_jobs`, schema-qualified. */
  finished: string;
  /** `soniq_dedup_keys`, schema-qualified. */
  dedup: string;
  /** `soniq_job_counts`, schema-qualified. */
  counts: string;
  /** The CTE that deleted the live rows (`RETURNING *`, plus any extra columns `set` uses). */
  moved: string;
  /** The final status: `'done'` or `'cancelled'`. */
  status: "done" | "cancelled";
  /** The retention in seconds, a parameter reference such as `$5` (`<= 0`: keep nothing). */
  retention: string;
  /** Expressions for columns that change (`attempts`, `result`, …) besides the finish times. */
  set?: Partial<Record<JobTableColumn, string>>;
  /** A prefix for the CTE names, unique within the statement (default `fin`). */
  name?: string;
}

/**
 * CTEs (to follow `moved` in a `WITH`, comma first) that keep the moved rows as finished (when
 * the retention is positive) and hold their dedup keys until the retention passes — or, with
 * retention <= 0, release them. Each key is written only while the moved job still holds it.
 * Keys are reached by primary-key probes from the moved rows' keys. The rows are counted as
 * `status` (and, when nothing is kept, as `status_gone` too: in − gone stays what is kept).
 */
export function finishMove(m: FinishMove): string {
  const n = m.name ?? "fin";
  const until = `now() + make_interval(secs => GREATEST(${m.retention}::float8, 0))`;
  // A job another waits for is kept even with a retention of 0 (until now: the next prune
  // forgets it), so the statement trigger on the finished store reads its end (migration 019).
  // Asked through a function with a snapshot of its own (migrations 023, 029): an edge committed
  // while this statement waited for a row's lock counts too. Asked once per statement, for every
  // moved row (the ARRAY reads them all, so every row's lock is held by then), and only when the
  // retention is 0: the `OR` stops at a positive retention before the sub-select runs.
  const awaitedFn = m.finished.replace(/soniq_finished_jobs(?="?$)/, "soniq_jobs_awaited");
  const awaited = `${m.moved}.id = ANY((SELECT w.ids FROM ${n}_awaited AS w)::uuid[])`;
  const kept = copyJobRows(
    m.finished,
    m.moved,
    {
      status: `'${m.status}'`,
      finished_at: "now()",
      updated_at: "now()",
      result_expires_at: until,
      ...m.set,
    },
    `(${m.retention}::float8 > 0 OR ${awaited})`,
  );
  return `, ${n}_awaited AS (
        SELECT CASE WHEN ${m.retention}::float8 > 0 THEN NULL::uuid[]
                    ELSE ${awaitedFn}(ARRAY(SELECT a.id FROM ${m.moved} AS a)) END AS ids
      ), ${n}_kept AS (
        ${kept}
        RETURNING id
      ), ${n}_held AS (
        UPDATE ${m.dedup} AS d SET held_until = ${until}
        WHERE ${m.retention}::float8 > 0 AND ${ownKeys(m.moved)}
        RETURNING 1
      ), ${n}_freed AS (
        DELETE FROM ${m.dedup} AS d
        WHERE ${m.retention}::float8 <= 0 AND ${ownKeys(m.moved)}
        RETURNING 1
      )${countRows(m.counts, m.moved, `'${m.status}'`, `${n}_counted`)}${countRows(
        m.counts,
        m.moved,
        `'${m.status}_gone'`,
        `${n}_uncounted`,
        `${m.retention}::float8 <= 0 AND NOT EXISTS (SELECT 1 FROM ${n}_kept AS k WHERE k.id = r.id)`,
      )}`;
}

/**
 * A CTE (comma first) that adds the rows of `from` (which has `queue`, `started_at`,
 * `scheduled_at`) to `soniq_job_counts` as `kind` (an SQL expression over `r`, e.g. `'done'` or
 * `r.status || '_gone'`) for this minute and this server process, grouped by queue and kind;
 * done jobs also add their wait from due to start (`wait_s`). `where` filters the rows.
 */
export function countRows(
  counts: string,
  from: string,
  kind: string,
  name: string,
  where?: string,
): string {
  return `, ${name} AS (
        INSERT INTO ${counts} AS c (queue, kind, bucket, writer, n, wait_s)
        SELECT r.queue, ${kind}, date_trunc('minute', now()), pg_backend_pid(), count(*),
               CASE WHEN ${kind} = 'done'
                    THEN COALESCE(sum(extract(epoch FROM r.started_at - r.scheduled_at)), 0)
                    ELSE 0 END
        FROM ${from} AS r${where ? ` WHERE ${where}` : ""}
        GROUP BY r.queue, r.status
        ON CONFLICT (queue, kind, bucket, writer)
          DO UPDATE SET n = c.n + EXCLUDED.n, wait_s = c.wait_s + EXCLUDED.wait_s
        RETURNING 1
      )`;
}

/**
 * A CTE (comma first) that releases the dedup keys the rows of `moved` hold (a dead-letter move,
 * a delete).
 */
export function releaseKeys(dedup: string, moved: string, name = "released"): string {
  return `, ${name} AS (
        DELETE FROM ${dedup} AS d WHERE ${ownKeys(moved)} RETURNING 1
      )`;
}

/**
 * "`d` is the key row of one of `moved`'s rows, still held by that row's job": the keys as one
 * array (an InitPlan, so the planner probes the primary key for each, never scans the table).
 */
function ownKeys(moved: string): string {
  return `d.dedup_key = ANY(ARRAY(SELECT k.dedup_key FROM ${moved} AS k WHERE k.dedup_key IS NOT NULL))
          AND EXISTS (SELECT 1 FROM ${moved} AS k WHERE k.dedup_key = d.dedup_key AND k.id = d.job_id)`;
}

/**
 * CTE `taken` (comma first) over `input` (`id`, `dedup_key` columns): takes each key that is free,
 * whose hold has passed, or that the job itself holds (a finished job run again). `RETURNING job_id`: the jobs that may be inserted.
 *
 * Two steps, so that a refused key is never locked: an insert that does nothing on a conflict,
 * then, for keys that were there, an update of only those whose hold has passed (a concurrent
 * taker's update is waited for and re-checked, so one of them wins). An `ON CONFLICT DO UPDATE …
 * WHERE` would lock every conflicting row, held or not: a refused duplicate enqueued in an open
 * transaction would then block the holder's completion, and two such transactions could
 * deadlock.
 */
export function takeKeys(dedup: string, input: string, name = "taken"): string {
  return `, ${name}_new AS (
        INSERT INTO ${dedup} AS d (dedup_key, job_id)
        SELECT i.dedup_key, i.id FROM ${input} AS i WHERE i.dedup_key IS NOT NULL
        ORDER BY i.dedup_key
        ON CONFLICT (dedup_key) DO NOTHING
        RETURNING d.job_id
      ), ${name}_over AS (
        UPDATE ${dedup} AS d SET job_id = i.id, held_until = NULL
        FROM ${input} AS i
        WHERE d.dedup_key = i.dedup_key AND (d.held_until <= now() OR d.job_id = i.id)
          AND i.id NOT IN (SELECT n.job_id FROM ${name}_new AS n)
        RETURNING d.job_id
      ), ${name} AS (
        SELECT job_id FROM ${name}_new UNION ALL SELECT job_id FROM ${name}_over
      )`;
}

/**
 * CTE `shared_mark` (comma first): the prune mark (`soniq_prune_mark`, migration 011) read FOR
 * SHARE. A statement that removes a visible finished row (run again, delete) holds it, so a prune
 * advancing the mark over that row waits for the statement, and the statement, when the prune
 * came first, reads the advanced mark (READ COMMITTED re-reads a row it had to wait for): the row
 * is counted as gone once, by one of them.
 */
export function markShared(mark: string): string {
  return `, shared_mark AS (SELECT expires_at, id FROM ${mark} FOR SHARE)`;
}

/**
 * "Finished row `alias` is above the mark {@link markShared} read": with the view's own rule
 * (from the statement's snapshot), this keeps a row the prune passed meanwhile from being
 * removed again.
 */
export function aboveSharedMark(alias: string): string {
  return `(${alias}.result_expires_at, ${alias}.id) > (SELECT m.expires_at, m.id FROM shared_mark AS m)`;
}
