// The upgrade to dead letters with metadata (migration 031): a dead letter written by the previous
// version (no `meta` column) reads `meta` null after `setup()` and replays as before, without
// metadata (an unkeyed job, claimed by the ordinary claim); one written after the upgrade by a
// process of the previous version (which does not name the column) too.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { postgresSchemaBefore } from "../helpers/postgres-schema-before.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
afterAll(() => pool.end());

/** Creates `schema` at the previous version: every migration before 031, recorded as setup does. */
const previousVersion = (schema: string) => postgresSchemaBefore(pool, schema, 31);

/** A dead letter as the previous version writes it (no `meta` column named). */
const deadInsert = (table: string) => `INSERT INTO ${table} (id, name, queue, args, priority,
    attempts, max_attempts, interruptions, scheduled_at, created_at, updated_at, last_error,
    reason, version)
  VALUES ($1, 'old.job', 'q', '{}', 0, 3, 3, 0, now(), now(), now(), 'boom',
    'max_attempts_exceeded', 1)`;

describePostgres("postgres: upgrade to dead letters with metadata", () => {
  const schemas = usePostgresSchemas();

  it("upgrade › dead letters written by the previous version › meta null; replayed as before, unkeyed", async () => {
    const schema = schemas.next();
    await previousVersion(schema);
    const dead = `"${schema}".soniq_dead_letter_jobs`;
    const old = newJobId();
    const late = newJobId();
    await pool.query(deadInsert(dead), [old]);

    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    try {
      await b.setup();
      await pool.query(deadInsert(dead), [late]);
      for (const id of [old, late]) {
        expect(await b.deadLetterGet({ id })).toMatchObject({ id, meta: null, lastError: "boom" });
        expect(await b.deadLetterReplay({ id })).toBe(true);
        expect(await b.jobGet({ id })).toMatchObject({
          status: "queued",
          attempts: 0,
          meta: null,
          lastError: "boom",
        });
      }
      const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(claimed.map((c) => c.id).sort()).toEqual([old, late].sort());
    } finally {
      await b.close();
    }
  });
});
