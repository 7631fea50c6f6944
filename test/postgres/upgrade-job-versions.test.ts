// The upgrade to job versions (migration 012): a schema made and filled by the previous version
// (migrations 001–011; a live job, a finished job, a dead letter and a schedule, written without a
// version as that version wrote them) reads version 1 everywhere after `setup()`, a version-1
// claim takes the old job, and a finished row written by a worker of the previous version (which
// does not name the column) through the finished-jobs view reads version 1 too.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { postgresSchemaBefore } from "../helpers/postgres-schema-before.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
afterAll(() => pool.end());

/** Creates `schema` at the previous version: every migration before 012, recorded as setup does. */
const previousVersion = (schema: string) => postgresSchemaBefore(pool, schema, 12);

/** A finished row as a worker of the previous version writes it (no `version` column named). */
const finishedInsert = (table: string) => `INSERT INTO ${table} (id, name, queue, args, status,
    priority, attempts, max_attempts, interruptions, scheduled_at, created_at, updated_at,
    finished_at, result_expires_at, start_known, uncharged_recoveries)
  VALUES ($1, 'old.job', 'q', '{}', 'done', 0, 1, 5, 0, now(), now(), now(), now(),
    now() + interval '1 day', true, 0)`;

describePostgres("postgres: upgrade to job versions", () => {
  const schemas = usePostgresSchemas();

  it("upgrade › rows written by the previous version › read version 1; a version-1 claim takes the old job", async () => {
    const schema = schemas.next();
    await previousVersion(schema);
    const t = (name: string) => `"${schema}".${name}`;
    const ids = { queued: newJobId(), finished: newJobId(), dead: newJobId(), late: newJobId() };
    await pool.query(
      `INSERT INTO ${t("soniq_jobs")} (id, name, queue, args, max_attempts, scheduled_at)
       VALUES ($1, 'old.job', 'q', '{"a":1}', 5, now() - interval '1 minute')`,
      [ids.queued],
    );
    await pool.query(finishedInsert(t("soniq_finished_jobs")), [ids.finished]);
    await pool.query(
      `INSERT INTO ${t("soniq_dead_letter_jobs")} (id, name, queue, args, priority, attempts, max_attempts, interruptions,
         scheduled_at, created_at, updated_at, reason)
       VALUES ($1, 'old.job', 'q', '{}', 0, 0, 5, 0, now(), now(), now(), 'invalid_args')`,
      [ids.dead],
    );
    await pool.query(
      `INSERT INTO ${t("soniq_schedules")} (id, job_name, queue, priority, max_attempts, args,
         every_seconds, timezone, missed_policy, missed_grace, missed_within, missed_max, overlap,
         history_limit)
       VALUES ('old.schedule', 'old.job', 'q', 0, 5, '{}', 60, 'UTC', 'skip', 60, 3600, 10,
         'allow', 10)`,
    );

    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    try {
      await b.setup();
      expect((await b.jobGet({ id: ids.queued }))?.version).toBe(1);
      expect(await b.jobGet({ id: ids.finished })).toMatchObject({ status: "done", version: 1 });
      expect((await b.deadLetterGet({ id: ids.dead }))?.version).toBe(1);
      const schedule = await pool.query(
        `SELECT job_version FROM ${t("soniq_schedules")} WHERE id = 'old.schedule'`,
      );
      expect(schedule.rows).toEqual([{ job_version: 1 }]);
      // A worker of the previous version still finishes through the view without the column.
      await pool.query(finishedInsert(t("soniq_finished_jobs")), [ids.late]);
      expect((await b.jobGet({ id: ids.late }))?.version).toBe(1);
      const claimed = await b.jobClaim({
        workerId: "w",
        queues: null,
        names: ["old.job"],
        versions: [1],
        limit: 10,
      });
      expect(claimed.map((c) => [c.id, c.version])).toEqual([[ids.queued, 1]]);
    } finally {
      await b.close();
    }
  });
});
