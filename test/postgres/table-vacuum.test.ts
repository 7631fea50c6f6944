// Soniq vacuums its own busy tables when autovacuum does not (src/backends/postgres/table-vacuum.ts;
// docs/backends.md, "Vacuum"): the soak found the live table growing without bound on a server
// with autovacuum off. Dead rows are made by the product's own enqueue and a delete; the stats
// are awaited (PostgreSQL flushes them about once a second), never slept for.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { VACUUM_DEAD_ROWS } from "../../src/backends/postgres/table-vacuum.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
afterAll(() => pool.end());

interface TableStats {
  dead: number;
  vacuums: number;
  vacuumed: boolean;
}

/** soniq_jobs's dead rows and vacuums (manual and auto) as the statistics say. */
async function stats(schema: string): Promise<TableStats> {
  const { rows } = await pool.query<{ dead: string; vacuums: string; vacuumed: boolean }>(
    `SELECT n_dead_tup AS dead, vacuum_count + autovacuum_count AS vacuums,
            greatest(last_vacuum, last_autovacuum) IS NOT NULL AS vacuumed
       FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'soniq_jobs'`,
    [schema],
  );
  const row = rows[0];
  return {
    dead: Number(row?.dead ?? 0),
    vacuums: Number(row?.vacuums ?? 0),
    vacuumed: row?.vacuumed ?? false,
  };
}

async function until(schema: string, ok: (s: TableStats) => boolean): Promise<TableStats> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = await stats(schema);
    if (ok(s)) return s;
    if (Date.now() > deadline) throw new Error(`statistics never got there: ${JSON.stringify(s)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describePostgres("postgres: the prune vacuums Soniq's busy tables", () => {
  const schemas = usePostgresSchemas();
  const open: PostgresBackend[] = [];
  afterAll(async () => {
    for (const b of open) await b.close();
  });

  async function make(): Promise<{ b: PostgresBackend; schema: string }> {
    const schema = schemas.next();
    const b = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
    open.push(b);
    await b.setup();
    return { b, schema };
  }

  it("a live table with many dead rows and no recent vacuum is vacuumed once by the prune", async () => {
    const { b, schema } = await make();
    // Dead rows ≥ the threshold plus a fifth of the live rows, whichever the statistics count.
    const n = Math.ceil(VACUUM_DEAD_ROWS * 1.6);
    await b.jobEnqueue({ jobs: Array.from({ length: n }, () => newJob({ id: newJobId() })) });
    await pool.query(`DELETE FROM "${schema}".soniq_jobs`);
    await until(schema, (s) => s.dead >= n);

    await b.jobPruneFinished({ limit: 10_000 });
    // That the prune vacuumed, not that the vacuum removed the dead rows: it cannot while any
    // other session of the server holds a snapshot older than the delete (another test file's
    // open transaction, run beside this one), and waiting for `dead < 100` failed then.
    const after = await until(schema, (s) => s.vacuumed);
    expect(after.vacuums).toBeGreaterThanOrEqual(1);

    // Vacuumed less than a minute ago: the next prune leaves it, even with dead rows again.
    await b.jobEnqueue({ jobs: Array.from({ length: n }, () => newJob({ id: newJobId() })) });
    await pool.query(`DELETE FROM "${schema}".soniq_jobs`);
    await until(schema, (s) => s.dead >= n);
    await b.jobPruneFinished({ limit: 10_000 });
    const again = await stats(schema);
    expect(again.vacuums).toBe(after.vacuums);
    expect(again.dead).toBeGreaterThanOrEqual(n);
  });

  it("a table with few dead rows is not vacuumed", async () => {
    const { b, schema } = await make();
    await b.jobEnqueue({ jobs: Array.from({ length: 50 }, () => newJob({ id: newJobId() })) });
    await pool.query(`DELETE FROM "${schema}".soniq_jobs`);
    await until(schema, (s) => s.dead >= 50);
    await b.jobPruneFinished({ limit: 10_000 });
    expect((await stats(schema)).vacuums).toBe(0);
  });
});
