// The plans of the counts that split `scheduled` from `queued` (issue 27 item 3): each reads the
// live table (`soniq_jobs`) and the counters only — never the finished history — as generic
// and custom plans, with statistics of a table that holds due, scheduled and finished jobs.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { buildAdminStatements, SESSION_SETUP } from "../../src/backends/postgres/sql.js";
import { newJob } from "../contract/helpers.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { preparedPlansText } from "../helpers/postgres-plans.js";
import { describePostgres, usePostgresSchemas } from "../helpers/postgres-suite.js";

describePostgres("postgres: plans of the scheduled counts", () => {
  const schema = usePostgresSchemas().next();
  const admin = buildAdminStatements(schema);
  let backend: PostgresBackend;
  let client: pg.Client;

  const plans = (name: string, types: string, text: string, args: string) =>
    preparedPlansText(client, name, types, text, args);

  beforeAll(async () => {
    backend = new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
    await backend.setup();
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    for (let i = 0; i < 3; i++) {
      await backend.jobEnqueue({
        jobs: Array.from({ length: 1000 }, (_, k) =>
          newJob({ delaySeconds: k % 3 === 0 ? 3600 : 0 }),
        ),
      });
    }
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 1000 });
    await backend.jobCompleteMany({
      items: claimed.map((j) => ({
        id: j.id,
        owner: { workerId: j.workerId, claimToken: j.claimToken },
        result: null,
      })),
      resultRetentionSeconds: 3600,
    });
    await client.query(`ANALYZE ${schema}.soniq_jobs`);
    await client.query(`ANALYZE ${schema}.soniq_finished_jobs`);
    await client.query(SESSION_SETUP);
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await backend?.close();
  });

  it("counts of scheduled and queued › any plan › the live table only, never the finished jobs", async () => {
    const cases = [
      await plans("by_counters", "text[], text[]", admin.jobCountByCounters, "'{scheduled}', NULL"),
      await plans(
        "by_counters_queue",
        "text[], text[]",
        admin.jobCountByCounters,
        "'{queued,scheduled}', '{default}'",
      ),
      await plans("by_queue_status", "", admin.jobCountByQueueStatus, ""),
      await plans(
        "count_live",
        "text[], text[], text[], uuid[], text, text, text[], text, timestamptz, timestamptz, timestamptz, timestamptz",
        admin.jobCount.live,
        "'{scheduled}', NULL, '{test.job}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
      ),
    ];
    for (const text of cases) {
      expect(text).toMatch(/soniq_jobs\b/);
      expect(text).not.toMatch(/soniq_finished/);
    }
    // The answers: 3 × 334 scheduled jobs; of the 1998 due ones, 1000 were claimed and finished.
    const n = async (text: string, values: unknown[]) =>
      Number((await client.query<{ n: string }>(text, values)).rows[0]?.n);
    expect(await n(admin.jobCountByCounters, [["scheduled"], null])).toBe(1002);
    expect(await n(admin.jobCountByCounters, [["queued"], null])).toBe(998);
  });
});
