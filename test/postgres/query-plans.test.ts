// The plans of the hot statements, with the statistics a queue table usually has: taken while
// it was nearly empty, then a burst of jobs. A claim must walk soniq_jobs_claim_idx in order
// (not collect and sort every due row), a one-queue claim soniq_jobs_queue_claim_idx from that
// queue's first row, and a finishing write must find its row by primary key
// (not walk soniq_jobs_processing_idx, which keeps an entry for every row the worker claimed
// since the last vacuum). Custom plans (a prepared statement's first runs) and generic ones.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildStatements, SESSION_SETUP } from "../../src/backends/postgres/sql.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: plans of the hot statements", () => {
  const schema = usePostgresSchemas().next();
  const sql = buildStatements(schema);
  let backend: PostgresBackend;
  let client: pg.Client;

  /** The plans of `text` as a custom plan (a statement's first runs) and as a generic one. */
  async function plan(name: string, types: string, text: string, args: string): Promise<string> {
    await client.query(`PREPARE ${name}(${types}) AS ${text}`);
    const plans: string[] = [];
    for (const mode of ["force_custom_plan", "force_generic_plan"]) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN (COSTS OFF) EXECUTE ${name}(${args})`,
      );
      plans.push(`${mode}:\n${rows.map((row) => row["QUERY PLAN"]).join("\n")}`);
    }
    return plans.join("\n");
  }

  beforeAll(async () => {
    backend = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    await backend.setup();
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`ANALYZE ${schema}.soniq_jobs`); // statistics of an empty queue
    for (let i = 0; i < 5; i++) {
      await backend.jobEnqueue({ jobs: Array.from({ length: 1000 }, () => newJob()) });
    }
    await backend.jobClaim({ workerId: "w", queues: null, limit: 2000 });
    await client.query(SESSION_SETUP);
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await backend?.close();
  });

  it("a claim walks the claim index in order and stops at the limit", async () => {
    const text = await plan("claim_all", "text, int", sql.claimAll, "'w2', 100");
    expect(text).toContain("Index Scan using soniq_jobs_claim_idx");
    expect(text).not.toContain("Bitmap");
    expect(text).not.toMatch(/Sort Key: soniq_jobs\.priority/);
    // One queue: walked in order from the queue-leading index, other queues' rows never read.
    const one = await plan(
      "claim_queue",
      "text, int, text",
      sql.claimQueue,
      "'w2', 100, 'default'",
    );
    expect(one).toContain("Index Scan using soniq_jobs_queue_claim_idx");
    expect(one).toMatch(/Index Cond: \(\(queue = \$3\)/);
    expect(one).not.toMatch(/Sort Key: soniq_jobs\.priority/);
    expect(one).not.toContain("Bitmap");
    // Several queues: either index, but never a bitmap scan.
    const several = await plan(
      "claim_queues",
      "text, int, text[]",
      sql.claimQueues,
      "'w2', 100, '{default,other}'",
    );
    expect(several).not.toContain("Bitmap");
  });

  it("batched and single finishing writes find the row by primary key", async () => {
    const many = await plan(
      "complete_many",
      "uuid[], text[], uuid[], text[], float8",
      sql.completeMany,
      "'{}', '{}', '{}', '{}', 60",
    );
    expect(many).toContain("soniq_jobs_pkey");
    expect(many).not.toContain("soniq_jobs_processing_idx");
    const one = await plan(
      "complete_one",
      "uuid, text, uuid, text, float8",
      sql.complete,
      [
        "'00000000-0000-4000-8000-000000000000'",
        "'w'",
        "'00000000-0000-4000-8000-000000000000'",
        "NULL",
        "60",
      ].join(", "),
    );
    expect(one).toContain("soniq_jobs_pkey");
    expect(one).not.toContain("soniq_jobs_processing_idx");
  });
});
