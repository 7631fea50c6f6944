/**
 * Fast fills of `soniq_jobs` for plan tests: `INSERT … SELECT generate_series` with the table's
 * secondary indexes and primary key dropped during the insert and rebuilt after it (a sorted
 * build is several times faster than a million single index insertions), all in one
 * transaction, so the schema is the same before and after.
 */
import type pg from "pg";

/** What {@link fillQueued} inserts. */
export interface FillOptions {
  /** Rows to insert, all `queued` and due. */
  rows: number;
  /** Every `otherEvery`-th row goes to queue `other`, the rest to `default` (default 10). */
  otherEvery?: number;
}

/**
 * Inserts `rows` due, queued no-op jobs into `schema`.soniq_jobs (random v4 ids, due an hour
 * ago in insertion order), then rebuilds the indexes. Takes about 15 s for a million rows on a
 * loaded 2-core machine.
 */
export async function fillQueued(
  client: pg.Client,
  schema: string,
  options: FillOptions,
): Promise<void> {
  const every = options.otherEvery ?? 10;
  const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
    `SELECT indexname, indexdef FROM pg_indexes
     WHERE schemaname = $1 AND tablename = 'soniq_jobs' AND indexname <> 'soniq_jobs_pkey'`,
    [schema],
  );
  await client.query("BEGIN");
  try {
    await client.query("SET LOCAL maintenance_work_mem = '256MB'");
    await client.query("SET LOCAL synchronous_commit = off");
    for (const index of indexes) await client.query(`DROP INDEX ${schema}.${index.indexname}`);
    await client.query(`ALTER TABLE ${schema}.soniq_jobs DROP CONSTRAINT soniq_jobs_pkey`);
    await client.query(
      `INSERT INTO ${schema}.soniq_jobs
         (id, name, queue, args, priority, max_attempts, scheduled_at, created_at)
       SELECT gen_random_uuid(), 'plan.noop',
              CASE WHEN g % $2::int = 0 THEN 'other' ELSE 'default' END, '{}', 0, 3,
              now() - interval '1 hour' + g * interval '1 microsecond',
              now() - interval '1 hour' + g * interval '1 microsecond'
       FROM generate_series(1, $1::int) AS g`,
      [options.rows, every],
    );
    await client.query(
      `ALTER TABLE ${schema}.soniq_jobs ADD CONSTRAINT soniq_jobs_pkey PRIMARY KEY (id)`,
    );
    for (const index of indexes) await client.query(index.indexdef);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK");
    throw err;
  }
}
