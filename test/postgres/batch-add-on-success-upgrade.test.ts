// Migration 035 (issue 29; docs/workflows.md, "Batches"): before it, `batch.add` wrote the edges
// from a batch's onSuccess callback to the added members with the policy `ignore` (the policy of
// the callback's edge to the batch itself), so onSuccess ran though an added member failed. The
// upgrade gives the open edges of that kind `cancel` and leaves every other edge as it was: an
// edge already ended, the callbacks' edges to the batch itself, and the other callbacks' edges.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { postgresSchemaBefore } from "../helpers/postgres-schema-before.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: migration 035, onSuccess edges of added batch members", () => {
  const schemas = usePostgresSchemas();
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  });
  afterAll(() => pool.end());

  it("upgrade from migration 034 › the open onSuccess edges to members become cancel; ended edges, edges to the batch and other callbacks' edges unchanged", async () => {
    const schema = schemas.next();
    await postgresSchemaBefore(pool, schema, 35);
    const [batch, added, ended, success, complete] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    await pool.query(
      `INSERT INTO "${schema}".soniq_flow_nodes (job_id, flow_id, pending, role)
       VALUES ($1, $1, 1, 'batch'), ($2, $1, 0, 'member'), ($3, $1, 0, 'member'),
              ($4, $1, 3, 'on_success'), ($5, $1, 3, 'on_complete')`,
      [batch, added, ended, success, complete],
    );
    await pool.query(
      `INSERT INTO "${schema}".soniq_job_deps (job_id, dep_id, on_failure, dep_state)
       VALUES ($1, $2, 'ignore', NULL), ($1, $3, 'ignore', 'done'), ($1, $4, 'ignore', NULL),
              ($5, $2, 'ignore', NULL), ($5, $4, 'ignore', NULL)`,
      [success, added, ended, batch, complete],
    );
    const backend = new PostgresBackend({
      connectionString: TEST_DATABASE_URL,
      schema,
      poolSize: 2,
    });
    try {
      await backend.setup();
    } finally {
      await backend.close();
    }
    const { rows } = await pool.query<{ job_id: string; dep_id: string; on_failure: string }>(
      `SELECT job_id::text, dep_id::text, on_failure FROM "${schema}".soniq_job_deps`,
    );
    const policy = (jobId: string, depId: string) =>
      rows.find((r) => r.job_id === jobId && r.dep_id === depId)?.on_failure;
    expect(policy(success, added)).toBe("cancel");
    expect(policy(success, ended)).toBe("ignore");
    expect(policy(success, batch)).toBe("ignore");
    expect(policy(complete, added)).toBe("ignore");
    expect(policy(complete, batch)).toBe("ignore");
  });
});
