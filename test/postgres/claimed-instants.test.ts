// The claim returns scheduled_at and created_at as epoch milliseconds (rows.ts CLAIMED_COLUMNS):
// the same instants, truncated to the millisecond as the driver's own timestamp parsing does, as
// jobGet reads — and a row written by hand with an infinite timestamp does not fail every claim.
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: the claim's instants", () => {
  const schemas = usePostgresSchemas();
  const closers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const close of closers.splice(0)) await close().catch(() => undefined);
  });

  async function open(): Promise<{ b: PostgresBackend; c: pg.Client; schema: string }> {
    const schema = schemas.next();
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 1 });
    closers.push(() => b.close());
    await b.setup();
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await c.connect();
    closers.push(() => c.end());
    return { b, c, schema };
  }

  it("equal jobGet's to the millisecond, microseconds and instants before 1970 included", async () => {
    const { b, c, schema } = await open();
    const jobs = [newJob(), newJob(), newJob()];
    await b.jobEnqueue({ jobs });
    const instants = [
      ["1969-12-31 23:59:59.999999+00", "1900-01-01 00:00:00.000500+00"],
      ["2026-12-02 08:14:04.123999+00", "2026-12-02 08:14:04.000001+00"],
      ["2001-02-03 04:05:06.789+05:30", "1960-06-15 12:00:00+00"],
    ];
    for (const [k, [scheduled, created]] of instants.entries()) {
      await c.query(
        `UPDATE ${schema}.soniq_jobs SET scheduled_at = $2, created_at = $3 WHERE id = $1`,
        [jobs[k]?.id, scheduled, created],
      );
    }
    const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(claimed).toHaveLength(3);
    for (const job of claimed) {
      const row = await b.jobGet({ id: job.id });
      expect(job.scheduledAt.getTime()).toBe(row?.scheduledAt.getTime());
      expect(job.createdAt.getTime()).toBe(row?.createdAt.getTime());
    }
    const first = claimed.find((j) => j.id === jobs[0]?.id);
    expect(first?.scheduledAt.toISOString()).toBe("1969-12-31T23:59:59.999Z");
    expect(first?.createdAt.toISOString()).toBe("1900-01-01T00:00:00.000Z");
  });

  it("a row with an infinite scheduled_at or created_at is claimed with the others (found by a breaker)", async () => {
    const { b, c, schema } = await open();
    const odd = newJob();
    const odder = newJob();
    const plain = [newJob(), newJob()];
    await b.jobEnqueue({ jobs: [odd, odder, ...plain] });
    await c.query(`UPDATE ${schema}.soniq_jobs SET scheduled_at = '-infinity' WHERE id = $1`, [
      odd.id,
    ]);
    await c.query(`UPDATE ${schema}.soniq_jobs SET created_at = 'infinity' WHERE id = $1`, [
      odder.id,
    ]);
    const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(claimed.map((j) => j.id).sort()).toEqual(
      [odd.id, odder.id, ...plain.map((j) => j.id)].sort(),
    );
    expect(claimed.find((j) => j.id === odd.id)?.scheduledAt.getTime()).toBeNaN();
  });
});
